//! The entry points of a reduction, written once for both kinds of definition: the compiler's
//! `#[reduction]` items and the runtime's `ReductionKernel` (CuPy's grammar) fill in a
//! [`ReductionEntry`], and [`entry_points`] instantiates the loops of `include/cuprum/reduction.h`
//! with it, one kernel per [`ReductionVariant`]. The parts it calls (`NAME_map`, `NAME_reduce`,
//! `NAME_post`, `NAME_identity`) are the definer's.
//!
//! Every instance of a reduction has one kernel per variant, named
//! `mangle::kernel_symbol(KernelKind::Reduction, name, Some(variant), dtypes)` and instantiated by
//! `mangle::instantiate_variant_line` (macro `CUPRUM_INSTANTIATE_<name>_<variant>`). The kernel
//! parameters are the same for all variants:
//!
//! ```text
//! NAME(ReduceOperand<const T> x | Raw<T> w, ..., ReduceOperand<Out> _cout, ReduceArgs _cargs)
//! ```
//!
//! one per map parameter in order (arrays as `ReduceOperand`, `Raw<T>` as is), then the output,
//! then the launch-wide arguments (the runtime's launcher mirrors them as `#[repr(C)]` structs).

use std::fmt::Write as _;

use crate::mangle;
use crate::variant::ReductionVariant;

/// One parameter of a reduction's map function.
#[derive(Debug, Clone)]
pub struct ReductionInput {
    /// The C name (already legal and unique).
    pub name: String,
    /// The C element type.
    pub ty: String,
    /// A raw argument (`Raw<T>`, CuPy's `raw T`): passed as is, indexed by hand.
    pub raw: bool,
}

/// How the post-map delivers the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostStyle {
    /// `Out NAME_post(Acc a)` (`#[reduction]`).
    Return,
    /// `void NAME_post(Acc a, Out& y)` (CuPy's `y = f(a)` statement).
    Assign,
}

/// What the entry points of one reduction need to know.
#[derive(Debug, Clone)]
pub struct ReductionEntry {
    /// The reduction's C name: the prefix of its parts (`NAME_map`, `NAME_reduce`, ...).
    pub name: String,
    /// C template parameters of the parts (the generic type parameters), in order.
    pub generics: Vec<String>,
    /// The map's parameters after `_ci, _cj, _cn` (the loop index, the position along the reduced
    /// axes, the loop size), in order.
    pub inputs: Vec<ReductionInput>,
    /// The C accumulator type.
    pub acc: String,
    /// The C output element type.
    pub out: String,
    /// Text around the map's value that turns it into the accumulator type (`("", "")` when it
    /// already is one).
    pub map_to_acc: (String, String),
    /// Whether the definer gives `NAME_identity()`, the value an empty reduction posts (else `Acc()`).
    pub has_identity: bool,
    /// How `NAME_post` delivers the output.
    pub post: PostStyle,
}

/// The `#define`s of the entry points: one body macro `CUPRUM_REDUCTION_<name>` and one
/// instantiation macro per variant. Needs `cuprum/reduction.h`.
pub fn entry_points(e: &ReductionEntry) -> String {
    let name = &e.name;
    let targs = if e.generics.is_empty() { String::new() } else { format!("<{}>", e.generics.join(", ")) };
    let strided: Vec<&ReductionInput> = e.inputs.iter().filter(|p| !p.raw).collect();
    let nrow = strided.len().max(1);
    let mut kparams = Vec::new();
    for p in &e.inputs {
        if p.raw {
            kparams.push(format!("cuprum::Raw<{}> {}", p.ty, p.name));
        } else {
            kparams.push(format!("cuprum::ReduceOperand<const {}> {}", p.ty, p.name));
        }
    }
    kparams.push(format!("cuprum::ReduceOperand<{}> _cout", e.out));
    kparams.push("cuprum::ReduceArgs _cargs".into());
    let vec_types: Vec<&str> = strided.iter().map(|p| p.ty.as_str()).collect();
    let vec_elems = if vec_types.is_empty() { "1".to_string() } else { format!("cuprum::VecElems<{}>::value", vec_types.join(", ")) };

    let ci = "(u64)(_co * _cR + _cr)";
    let map_args = |value: &dyn Fn(usize, &ReductionInput) -> String| -> String {
        let mut args = vec![ci.to_string(), "(u64)_cr".to_string(), "_cargs.loop_size".to_string()];
        let mut k = 0;
        for p in &e.inputs {
            if p.raw {
                args.push(p.name.clone());
            } else {
                args.push(value(k, p));
                k += 1;
            }
        }
        format!("{}{name}_map{targs}({}){}", e.map_to_acc.0, args.join(", "), e.map_to_acc.1)
    };
    let elem_call = map_args(&|k, p| format!("{n}.ptr[_cw.b[{k}] + cuprum::offset_of<_cidx>(_cargs.rshape, {n}.rstrides, _cr)]", n = p.name));
    let mapk_call = map_args(&|_, p| format!("_cp.{}.v[_ck]", p.name));

    let mut lines: Vec<String> = Vec::new();
    lines.push(format!(
        "extern \"C\" __global__ void __launch_bounds__(CUPRUM_REDUCE_THREADS) NAME({}) {{",
        kparams.join(", ")
    ));
    lines.push(format!("    typedef {} _cA;", e.acc));
    lines.push(format!("    enum {{ _cV = {vec_elems} }};"));
    lines.push(format!("    struct _cRow {{ _cidx b[{nrow}]; }};"));
    let pack_fields: String = strided.iter().map(|p| format!(" cuprum::Vec<{}, _cV> {};", p.ty, p.name)).collect();
    lines.push(format!("    struct _cPack {{{pack_fields} }};"));
    lines.push("    const _cidx _cR = (_cidx)_cargs.rshape.size;".into());
    // base(o)
    let mut base = "    auto _cbase = [&](_cidx _co) { _cRow _cw;".to_string();
    if strided.is_empty() {
        base.push_str(" _cw.b[0] = 0;");
    }
    for (k, p) in strided.iter().enumerate() {
        let _ = write!(base, " _cw.b[{k}] = cuprum::offset_of<_cidx>(_cargs.oshape, {}.ostrides, _co);", p.name);
    }
    base.push_str(" return _cw; };");
    lines.push(base);
    lines.push(format!("    auto _celem = [&](const _cRow& _cw, _cidx _co, _cidx _cr) -> _cA {{ return {elem_call}; }};"));
    let mut load = "    auto _cload = [&](const _cRow& _cw, _cidx _cr) { _cPack _cp;".to_string();
    for (k, p) in strided.iter().enumerate() {
        let _ = write!(
            load,
            " _cp.{n} = cuprum::load_vec<{t}, _cV>({n}.ptr + _cw.b[{k}], _cr, (_cargs.broadcast >> {k}) & 1u);",
            n = p.name,
            t = p.ty
        );
    }
    load.push_str(" return _cp; };");
    lines.push(load);
    lines.push(format!("    auto _cmapk = [&](const _cPack& _cp, _cidx _co, _cidx _cr, int _ck) -> _cA {{ return {mapk_call}; }};"));
    // The elements before the first vector boundary, the same for every input read as vectors
    // (else -1: no vector loads); inputs of stride 0 along the reduced axis are read one value at
    // a time and do not count (0 when every input is one).
    let mut align = "    auto _calign = [&](const _cRow& _cw, _cidx _cr) -> int {".to_string();
    if strided.is_empty() {
        align.push_str(" return -1; };");
    } else {
        align.push_str(" int _ch = -2;");
        for (k, p) in strided.iter().enumerate() {
            let _ = write!(
                align,
                " if (!((_cargs.broadcast >> {k}) & 1u)) {{ int _cg = cuprum::align_head<_cV>({}.ptr + _cw.b[{k}] + _cr); if (_ch != -2 && _cg != _ch) return -1; _ch = _cg; }}",
                p.name
            );
        }
        align.push_str(" return _ch == -2 ? 0 : _ch; };");
    }
    lines.push(align);
    lines.push(format!("    auto _cred = [](_cA _ca, _cA _cb) {{ return {name}_reduce{targs}(_ca, _cb); }};"));
    let identity = if e.has_identity { format!("{name}_identity{targs}()") } else { "_cA()".to_string() };
    let dest = "_cout.ptr[cuprum::offset_of<_cidx>(_cargs.oshape, _cout.ostrides, _co)]";
    let store = match e.post {
        PostStyle::Return => format!("{dest} = {name}_post{targs}(_ch ? _cv : {identity});"),
        PostStyle::Assign => format!("{name}_post{targs}(_ch ? _cv : {identity}, {dest});"),
    };
    lines.push(format!("    auto _cfin = [&](_cidx _co, _cA _cv, bool _ch) {{ {store} }};"));
    lines.push(
        "    cuprum::reduce_##_cstrategy<_cV, _cA, _cidx>(_cargs, _cbase, _celem, _cload, _cmapk, _calign, _cred, _cfin);"
            .into(),
    );
    lines.push("}".into());

    let mut out = String::new();
    let mut ps = vec!["NAME".to_string(), "_cstrategy".to_string(), "_cidx".to_string()];
    ps.extend(e.generics.iter().cloned());
    let _ = writeln!(out, "#define {}({}) \\\n    {}", body_macro(name), ps.join(", "), lines.join(" \\\n    "));
    for variant in ReductionVariant::ALL {
        let mut ps = vec!["NAME".to_string()];
        ps.extend(e.generics.iter().cloned());
        let mut args = vec!["NAME".to_string(), variant.strategy().to_string(), variant.index_type().to_string()];
        args.extend(e.generics.iter().cloned());
        let _ = writeln!(
            out,
            "#define {}({}) {}({})",
            mangle::instantiate_variant_macro(name, variant.into()),
            ps.join(", "),
            body_macro(name),
            args.join(", ")
        );
    }
    out
}

/// The macro holding the body shared by a reduction's variants.
fn body_macro(name: &str) -> String {
    format!("CUPRUM_REDUCTION_{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(inputs: Vec<ReductionInput>, has_identity: bool, post: PostStyle) -> String {
        entry_points(&ReductionEntry {
            name: "s".into(),
            generics: vec!["T".into()],
            inputs,
            acc: "T".into(),
            out: "T".into(),
            map_to_acc: (String::new(), String::new()),
            has_identity,
            post,
        })
    }

    #[test]
    fn one_instantiation_macro_per_variant() {
        let s = entry(vec![ReductionInput { name: "x".into(), ty: "T".into(), raw: false }], true, PostStyle::Return);
        for v in ReductionVariant::ALL {
            let line = format!("#define CUPRUM_INSTANTIATE_s_{v}(NAME, T) CUPRUM_REDUCTION_s(NAME, {}, {}, T)\n", v.strategy(), v.index_type());
            assert!(s.contains(&line), "{line}\n{s}");
        }
        assert!(s.contains("_cout.ostrides, _co)] = s_post<T>(_ch ? _cv : s_identity<T>());"), "{s}");
    }

    #[test]
    fn raw_inputs_pass_through_and_assigning_posts_take_the_output() {
        let s = entry(vec![ReductionInput { name: "w".into(), ty: "T".into(), raw: true }], false, PostStyle::Assign);
        assert!(s.contains("NAME(cuprum::Raw<T> w, cuprum::ReduceOperand<T> _cout, cuprum::ReduceArgs _cargs)"), "{s}");
        assert!(s.contains("enum { _cV = 1 };"), "{s}");
        assert!(s.contains("s_post<T>(_ch ? _cv : _cA(), _cout.ptr["), "{s}");
    }
}
