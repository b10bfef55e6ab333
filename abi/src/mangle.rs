//! The one place that names generated symbols and files. The macros, the build crate and the
//! runtime agree on kernel names through these functions and nothing else.
//!
//! A kernel instance is `cuprum_<kind>_<name>[_<variant>]__<dtype>...`, e.g.
//! `cuprum_rawkernel_elementwise_copy__f32`, `cuprum_elementwise_squared_diff__f64`. Every
//! instance is an `extern "C"` function, so NVRTC and nvcc produce the same, unmangled name.

use crate::dtype::DType;
use crate::kind::KernelKind;
use crate::variant::{ElementwiseVariant, Variant};

/// The symbol of one kernel instance (`variant` is one of `kind.variants()`, or `None` for a
/// kind without variants).
pub fn kernel_symbol(kind: KernelKind, name: &str, variant: Option<Variant>, instance: &[DType]) -> String {
    debug_assert!(variant.is_none_or(|v| v.kind() == kind), "{variant:?} is not a variant of a {kind} kernel");
    let mut s = format!("cuprum_{kind}_{name}");
    if let Some(v) = variant {
        s.push('_');
        s.push_str(v.name());
    }
    for d in instance {
        s.push_str("__");
        s.push_str(d.short_name());
    }
    s
}

/// A generated kernel symbol read back: (kind, Rust name, launch variant, instance dtypes'
/// short names); `None` for another symbol (a `RawKernel`'s own).
fn parse_symbol(symbol: &str) -> Option<(KernelKind, &str, Option<&'static str>, std::str::Split<'_, &'static str>)> {
    let (kind, rest) = symbol
        .strip_prefix("cuprum_")
        .and_then(|r| KernelKind::ALL.into_iter().find_map(|k| Some((k, r.strip_prefix(k.name())?.strip_prefix('_')?))))?;
    let mut parts = rest.split("__");
    let head = parts.next().unwrap_or(rest);
    let variant = kind.variants().iter().find_map(|v| Some((head.strip_suffix(v.name())?.strip_suffix('_')?, v.name())));
    Some(match variant {
        Some((name, v)) if !name.is_empty() => (kind, name, Some(v), parts),
        _ => (kind, head, None, parts),
    })
}

/// The Rust name of a generated kernel's instance symbol, for messages
/// (`cuprum_rawkernel_jacobi__f32` -> `jacobi`, `cuprum_elementwise_squared_diff_contig__f32` ->
/// `squared_diff`): what the CPU device's launch checks name, so that both devices report the
/// same error. Another symbol (a `RawKernel`'s own) is returned as it is.
pub fn kernel_name(symbol: &str) -> &str {
    parse_symbol(symbol).map_or(symbol, |(_, name, _, _)| name)
}

/// How a profiler names a kernel instance (the NVTX range around its launches): the Rust
/// function with its instance, `squared_diff::<f32>`, and the launch variant after it
/// (`l2::<f32, f32> [rows]`); another symbol (a `RawKernel`'s own) is returned as it is.
pub fn display_name(symbol: &str) -> String {
    let Some((_, name, variant, types)) = parse_symbol(symbol) else {
        return symbol.to_string();
    };
    let types: Vec<&str> = types.collect();
    let mut s = name.to_string();
    if !types.is_empty() {
        s.push_str("::<");
        s.push_str(&types.join(", "));
        s.push('>');
    }
    if let Some(v) = variant {
        s.push_str(" [");
        s.push_str(v);
        s.push(']');
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

/// For a kernel whose one instantiation macro takes the variant as its second argument
/// (`CUPRUM_INSTANTIATE_<name>(NAME, <variant>, T...)`, the elementwise kernels): one forwarding
/// macro per variant, so that every variant is instantiated by [`instantiate_variant_line`].
/// `params` are the type parameters (`T`, ...).
pub fn variant_forwarding_macros(name: &str, variants: &[ElementwiseVariant], params: &[String]) -> String {
    let mut out = String::new();
    for &v in variants {
        let (mut ps, mut args) = (vec!["NAME".to_string()], vec!["NAME".to_string(), v.name().to_string()]);
        ps.extend(params.iter().cloned());
        args.extend(params.iter().cloned());
        out.push_str(&format!(
            "#define {}({}) {}({})\n",
            instantiate_variant_macro(name, v.into()),
            ps.join(", "),
            instantiate_macro(name),
            args.join(", ")
        ));
    }
    out
}

/// The C macro that defines one variant of a kernel (a launch strategy of a reduction):
/// `CUPRUM_INSTANTIATE_<name>_<variant>(SYMBOL, T...)`.
pub fn instantiate_variant_macro(name: &str, variant: Variant) -> String {
    format!("CUPRUM_INSTANTIATE_{name}_{}", variant.name())
}

/// The line that instantiates one variant of one kernel instance; [`instantiate_line`] when
/// `variant` is `None`.
pub fn instantiate_variant_line(name: &str, variant: Option<Variant>, symbol: &str, instance: &[DType]) -> String {
    let Some(variant) = variant else { return instantiate_line(name, symbol, instance) };
    let mut s = format!("{}({symbol}", instantiate_variant_macro(name, variant));
    for d in instance {
        s.push_str(", ");
        s.push_str(d.short_name());
    }
    s.push(')');
    s
}

/// The identity of a generated translation unit (one kernel file): FNV-1a 64 over its CUDA C, as
/// 16 hex digits. The build crate names a unit's fat binary by it and the macros find it by it, so
/// a fat binary built from other source is never used.
pub fn unit_id(source: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in source.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The folder under `OUT_DIR` where `cuprum-build` writes its outputs.
pub const AOT_DIR: &str = "cuprum";

/// The fat binary of unit `id`, relative to `OUT_DIR`: `cuprum/<id>.fatbin`.
pub fn fatbin_file(id: &str) -> String {
    format!("{AOT_DIR}/{id}.fatbin")
}

/// The CUDA C of unit `id` as the build crate compiled it, relative to `OUT_DIR`: `cuprum/<id>.cu`.
pub fn source_file(id: &str) -> String {
    format!("{AOT_DIR}/{id}.cu")
}

/// Where the build crate says which unit a file's CUDA C became once it was written with `#line`
/// directives (docs/debugging.md), relative to `OUT_DIR`: `cuprum/<plain>.lines`, named by the id
/// of the unit written without them (`plain`, all a macro can compute) and holding the id of the
/// unit with them, whose source is [`source_file`].
pub fn lines_file(plain: &str) -> String {
    format!("{AOT_DIR}/{plain}.lines")
}

/// The build record of unit `id` (what `cuprum-build` did and what it cost), relative to
/// `OUT_DIR`: `cuprum/<id>.build`.
pub fn build_file(id: &str) -> String {
    format!("{AOT_DIR}/{id}.build")
}

/// The targets in the fat binary of unit `id`, relative to `OUT_DIR`: `cuprum/<id>.targets`, one
/// per line (`sm_80`, `sm_90`, `compute_90`).
pub fn targets_file(id: &str) -> String {
    format!("{AOT_DIR}/{id}.targets")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_come_back_from_symbols() {
        let sym = kernel_symbol(KernelKind::RawKernel, "jacobi", None, &[DType::F32]);
        assert_eq!(kernel_name(&sym), "jacobi");
        assert_eq!(kernel_name("cuprum_rawkernel_sum_two_phase"), "sum_two_phase");
        assert_eq!(kernel_name("cuprum_elementwise_squared_diff_contig__f32"), "squared_diff");
        assert_eq!(kernel_name("cuprum_reduction_l2_cols64__c64__i8"), "l2");
        assert_eq!(display_name("cuprum_rawkernel_jacobi__f32"), "jacobi::<f32>");
        assert_eq!(display_name("cuprum_rawkernel_sum_two_phase"), "sum_two_phase");
        assert_eq!(display_name("cuprum_elementwise_sq_contig__f16"), "sq::<f16> [contig]");
        assert_eq!(display_name("cuprum_elementwise_squared_diff_s32__f32"), "squared_diff::<f32> [s32]");
        assert_eq!(display_name("cuprum_reduction_l2_cols64__c64__i8"), "l2::<c64, i8> [cols64]");
        assert_eq!(display_name("my_add"), "my_add");
        assert_eq!(display_name("cuprum_oob_slot"), "cuprum_oob_slot");
        assert_eq!(kernel_name("my_kernel"), "my_kernel");
    }
    use crate::variant::ReductionVariant;

    #[test]
    fn symbols_are_stable() {
        assert_eq!(kernel_symbol(KernelKind::RawKernel, "copy", None, &[DType::F32]), "cuprum_rawkernel_copy__f32");
        assert_eq!(
            kernel_symbol(KernelKind::Reduction, "l2", Some(ReductionVariant::Cols64.into()), &[DType::C64, DType::I8]),
            "cuprum_reduction_l2_cols64__c64__i8"
        );
        assert_eq!(
            kernel_symbol(KernelKind::Elementwise, "sq", Some(ElementwiseVariant::Contig.into()), &[DType::F16]),
            "cuprum_elementwise_sq_contig__f16"
        );
        assert_eq!(unit_id(""), "cbf29ce484222325");
        assert_eq!(fatbin_file("00ff"), "cuprum/00ff.fatbin");
        assert_eq!(
            instantiate_variant_line("l2", Some(ReductionVariant::Rows.into()), "cuprum_reduction_l2_rows__f32", &[DType::F32]),
            "CUPRUM_INSTANTIATE_l2_rows(cuprum_reduction_l2_rows__f32, f32)"
        );
        assert_eq!(instantiate_line("copy", "cuprum_rawkernel_copy__f32", &[DType::F32]), "CUPRUM_INSTANTIATE_copy(cuprum_rawkernel_copy__f32, f32)");
        assert_eq!(
            variant_forwarding_macros("sq", &[ElementwiseVariant::S32], &["T".into()]),
            "#define CUPRUM_INSTANTIATE_sq_s32(NAME, T) CUPRUM_INSTANTIATE_sq(NAME, s32, T)\n"
        );
    }
}
