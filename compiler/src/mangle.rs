//! The one place that names generated symbols. The macros, the build crate and the runtime agree
//! on kernel names through these functions and nothing else.
//!
//! A kernel instance is `cuprum_<kind>_<name>[_<variant>]__<dtype>...`, e.g.
//! `cuprum_rawkernel_elementwise_copy__f32`, `cuprum_elementwise_squared_diff__f64`. Every
//! instance is an `extern "C"` function, so NVRTC and nvcc produce the same, unmangled name.

use crate::dtype::DType;

/// The symbol of one kernel instance.
pub fn kernel_symbol(kind: &str, name: &str, variant: Option<&str>, instance: &[DType]) -> String {
    let mut s = format!("cuprum_{kind}_{name}");
    if let Some(v) = variant {
        s.push('_');
        s.push_str(v);
    }
    for d in instance {
        s.push_str("__");
        s.push_str(d.short_name());
    }
    s
}

/// The C macro that defines an instance of a kernel: `CUPRUM_INSTANTIATE_<name>(SYMBOL, T...)`.
pub fn instantiate_macro(name: &str) -> String {
    format!("CUPRUM_INSTANTIATE_{name}")
}

/// The line that instantiates one kernel instance (appended by the JIT for new instances).
pub fn instantiate_line(name: &str, symbol: &str, instance: &[DType]) -> String {
    let mut s = format!("{}({symbol}", instantiate_macro(name));
    for d in instance {
        s.push_str(", ");
        s.push_str(d.short_name());
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_stable() {
        assert_eq!(kernel_symbol("rawkernel", "copy", None, &[DType::F32]), "cuprum_rawkernel_copy__f32");
        assert_eq!(kernel_symbol("reduction", "l2", Some("full"), &[DType::C64, DType::I8]), "cuprum_reduction_l2_full__c64__i8");
        assert_eq!(instantiate_line("copy", "cuprum_rawkernel_copy__f32", &[DType::F32]), "CUPRUM_INSTANTIATE_copy(cuprum_rawkernel_copy__f32, f32)");
    }
}
