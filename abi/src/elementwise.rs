//! The entry point of an elementwise kernel, written once for both kinds of definition: the
//! compiler's `#[elementwise]` items and the runtime's `ElementwiseKernel` (CuPy's grammar). All
//! the loops live in `include/cuprum/elementwise.h` (`cuprum::ew::run`); an entry point only hands
//! its operands to them.
//!
//! One instantiation macro takes the launch variant as its second argument, and one forwarding
//! macro per [`ElementwiseVariant`] lets every variant be instantiated by
//! `mangle::instantiate_variant_line`:
//!
//! ```text
//! #define CUPRUM_INSTANTIATE_<name>(NAME, VARIANT, T...) \
//!     extern "C" __global__ void NAME(<operands>, cuprum::ew::Loop<cuprum::ew::VARIANT> _cloop) { \
//!         <body> \
//!     }
//! #define CUPRUM_INSTANTIATE_<name>_contig(NAME, T...) CUPRUM_INSTANTIATE_<name>(NAME, contig, T...)
//! ...
//! ```
//!
//! The kernel parameters are the operands in order ([`Operand`]), then the loop. The runtime's
//! launcher passes its arguments in that order, laid out as the structs of `elementwise.h`.

use std::fmt::Write as _;

use crate::mangle;
use crate::variant::ElementwiseVariant;

/// The instantiation macro's variant parameter spelled as the variant's tag type.
pub const VARIANT_TAG: &str = "cuprum::ew::VARIANT";

/// The name of the loop parameter (`cuprum::ew::Loop<V>`), the entry point's last.
pub const LOOP_PARAM: &str = "_cloop";

/// The name of the element function's first parameter: the element's index in the loop (`u64`).
pub const INDEX_PARAM: &str = "_ci";

/// How one operand is passed to an elementwise entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A per-element input of C element type `T`: `cuprum::ew::In<T, V>` (the caller passes an
    /// array, or a scalar by value).
    In(String),
    /// A per-element output parameter (`&mut T`) of C element type `T`: `cuprum::ew::InOut<T, V>`.
    InOut(String),
    /// A per-element output of C element type `T`: `cuprum::ew::Out<T, V>`.
    Out(String),
    /// An argument passed as is, outside the loop, by its full C type (`cuprum::Raw<T>`,
    /// `cuprum::ew::CArray<T>`).
    Raw(String),
}

impl Operand {
    /// The kernel parameter `name` of this operand, for variant type `variant` ([`VARIANT_TAG`]
    /// in the entry point, a template parameter in a helper templated on the variant).
    pub fn kernel_param(&self, variant: &str, name: &str) -> String {
        match self {
            Operand::In(t) => format!("cuprum::ew::In<{t}, {variant}> {name}"),
            Operand::InOut(t) => format!("cuprum::ew::InOut<{t}, {variant}> {name}"),
            Operand::Out(t) => format!("cuprum::ew::Out<{t}, {variant}> {name}"),
            Operand::Raw(t) => format!("{t} {name}"),
        }
    }
}

/// The kernel parameters of an entry point: one per `(operand, name)` in order, then the loop.
pub fn kernel_params(operands: &[(Operand, String)], variant: &str) -> Vec<String> {
    let mut ps: Vec<String> = operands.iter().map(|(o, n)| o.kernel_param(variant, n)).collect();
    ps.push(format!("cuprum::ew::Loop<{variant}> {LOOP_PARAM}"));
    ps
}

/// The statement that runs the loop: `cuprum::ew::run(_cloop, [&](u64 _ci, <element params>)
/// {<body>}, <operands>);`. `element_params` are the element function's parameters after the
/// index, one per operand in order (references for outputs); `body` goes between the braces as
/// is.
pub fn run_call(element_params: &[String], body: &str, operands: &[String]) -> String {
    run_call_as("run", element_params, body, operands)
}

/// [`run_call`] through `cuprum::ew::run_unswitched`: the contiguous vector loop compiled twice,
/// once for launches whose inputs are all arrays (loads without the check for a scalar), once
/// for the others. For kernels compiled with a residency cap (`min_blocks`), whose maps are heavy
/// enough that the check holds their loads back (cuprum/elementwise.h).
pub fn run_call_unswitched(element_params: &[String], body: &str, operands: &[String]) -> String {
    run_call_as("run_unswitched", element_params, body, operands)
}

fn run_call_as(run: &str, element_params: &[String], body: &str, operands: &[String]) -> String {
    let mut lparams = vec![format!("u64 {INDEX_PARAM}")];
    lparams.extend(element_params.iter().cloned());
    let operands: String = operands.iter().map(|o| format!(", {o}")).collect();
    format!("cuprum::ew::{run}({LOOP_PARAM}, [&]({}) {{{body}}}{operands});", lparams.join(", "))
}

/// One elementwise kernel's entry point.
#[derive(Clone, Debug)]
pub struct ElementwiseEntry<'a> {
    /// The kernel's name (legal in C).
    pub name: &'a str,
    /// The C template parameters of the kernel (its generic types / type placeholders), in order.
    pub generics: &'a [String],
    /// The operands, in parameter order, with their parameter names.
    pub operands: &'a [(Operand, String)],
    /// The entry point's one statement (usually a [`run_call`], or a call of a helper that makes
    /// one).
    pub body: &'a str,
    /// `(max_threads, min_blocks)`: the entry point's `__launch_bounds__` ([`launch_bounds`]), or
    /// none.
    pub bounds: (Option<u32>, Option<u32>),
}

/// `__launch_bounds__(N) ` or `__launch_bounds__(N, M) ` (with a trailing space) for a kernel
/// compiled for blocks of at most `max_threads` threads and, with `min_blocks`, that many such
/// blocks resident per multiprocessor (nvcc then caps the registers so that they fit); empty
/// without `max_threads`.
pub fn launch_bounds(max_threads: Option<u32>, min_blocks: Option<u32>) -> String {
    match (max_threads, min_blocks) {
        (Some(n), Some(m)) => format!("__launch_bounds__({n}, {m}) "),
        (Some(n), None) => format!("__launch_bounds__({n}) "),
        _ => String::new(),
    }
}

/// The `#define`s of an entry point: the instantiation macro `CUPRUM_INSTANTIATE_<name>(NAME,
/// VARIANT, T...)` and its forwarding macros, one per variant. Needs `cuprum/elementwise.h`.
pub fn entry_point(e: &ElementwiseEntry<'_>) -> String {
    let mut ps = vec!["NAME".to_string(), "VARIANT".to_string()];
    ps.extend(e.generics.iter().cloned());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#define {}({}) \\\n    extern \"C\" __global__ void {}NAME({}) {{ \\\n        {} \\\n    }}",
        mangle::instantiate_macro(e.name),
        ps.join(", "),
        launch_bounds(e.bounds.0, e.bounds.1),
        kernel_params(e.operands, VARIANT_TAG).join(", "),
        e.body,
    );
    out.push_str(&mangle::variant_forwarding_macros(e.name, &ElementwiseVariant::ALL, e.generics));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_point_hands_operands_to_the_loop() {
        let operands = [
            (Operand::In("T".into()), "_ca0".to_string()),
            (Operand::Raw("cuprum::Raw<f32>".into()), "_ca1".into()),
            (Operand::Out("T".into()), "_co0".into()),
        ];
        let body = run_call(&["T x".into(), "const cuprum::Raw<f32>& w".into(), "T& _cout0".into()], " _cout0 = x; ", &["_ca0".into(), "_ca1".into(), "_co0".into()]);
        let generics = ["T".to_string()];
        let s = entry_point(&ElementwiseEntry { name: "k", generics: &generics, operands: &operands, body: &body, bounds: (None, None) });
        assert_eq!(
            s,
            "#define CUPRUM_INSTANTIATE_k(NAME, VARIANT, T) \\\n    extern \"C\" __global__ void NAME(cuprum::ew::In<T, cuprum::ew::VARIANT> _ca0, \
             cuprum::Raw<f32> _ca1, cuprum::ew::Out<T, cuprum::ew::VARIANT> _co0, cuprum::ew::Loop<cuprum::ew::VARIANT> _cloop) { \\\n        \
             cuprum::ew::run(_cloop, [&](u64 _ci, T x, const cuprum::Raw<f32>& w, T& _cout0) { _cout0 = x; }, _ca0, _ca1, _co0); \\\n    }\n\
             #define CUPRUM_INSTANTIATE_k_contig(NAME, T) CUPRUM_INSTANTIATE_k(NAME, contig, T)\n\
             #define CUPRUM_INSTANTIATE_k_s32(NAME, T) CUPRUM_INSTANTIATE_k(NAME, s32, T)\n\
             #define CUPRUM_INSTANTIATE_k_s64(NAME, T) CUPRUM_INSTANTIATE_k(NAME, s64, T)\n\
             #define CUPRUM_INSTANTIATE_k_t32(NAME, T) CUPRUM_INSTANTIATE_k(NAME, t32, T)\n"
        );
        let bounded = entry_point(&ElementwiseEntry { name: "k", generics: &generics, operands: &operands, body: &body, bounds: (Some(256), Some(4)) });
        assert!(bounded.contains("extern \"C\" __global__ void __launch_bounds__(256, 4) NAME("), "{bounded}");
        assert_eq!(launch_bounds(Some(128), None), "__launch_bounds__(128) ");
        assert_eq!(launch_bounds(None, None), "");
    }
}
