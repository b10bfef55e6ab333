//! The CUDA C of reductions: the parts of a `#[reduction]` item (`NAME_map`, `NAME_reduce`,
//! `NAME_post`, `NAME_identity`) and the entry points that instantiate the loops of
//! `include/cuprum/reduction.h`, one kernel variant per launch strategy.
//!
//! The entry points are written by [`entry_points`] from a [`ReductionEntry`], which both the
//! `#[reduction]` items (here) and the runtime's `ReductionKernel` (CuPy's grammar) fill in, so
//! both kinds run the same loops.
//!
//! # Variants
//!
//! Every instance of a reduction has one kernel per [`VARIANTS`] entry, named
//! `mangle::kernel_symbol("reduction", name, Some(variant), dtypes)` and instantiated by
//! `mangle::instantiate_variant_line` (macro `CUPRUM_INSTANTIATE_<name>_<variant>`). The kernel
//! parameters are the same for all variants:
//!
//! ```text
//! NAME(ReduceOperand<const T> x | Raw<T> w, ..., ReduceOperand<Out> _cout, ReduceArgs _cargs)
//! ```
//!
//! one per map parameter in order (arrays as `ReduceOperand`, `Raw<T>` as is), then the output,
//! then the launch-wide arguments.

use std::fmt::Write as _;

use super::writer::{Dest, Writer};
use crate::ir::*;
use crate::mangle;

/// `(variant, loop template, index type)`: `rows` (a block per output, rows split over the grid
/// when outputs are few; the full reduction), `warps` (a warp per output), `cols` (a thread per
/// output, the reduced axis split over blocks when outputs are few); `64` variants index with
/// 64-bit integers, the others with 32-bit ones.
pub const VARIANTS: &[(&str, &str, &str)] = &[
    ("rows", "rows", "i32"),
    ("warps", "warps", "i32"),
    ("cols", "cols", "i32"),
    ("rows64", "rows", "i64"),
    ("warps64", "warps", "i64"),
    ("cols64", "cols", "i64"),
];

/// The variant names of [`VARIANTS`], in order.
pub const VARIANT_NAMES: &[&str] = &["rows", "warps", "cols", "rows64", "warps64", "cols64"];

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
    pub name: String,
    /// C template parameters of the parts (the generic type parameters), in order.
    pub generics: Vec<String>,
    /// The map's parameters after `_ci, _cn`, in order.
    pub inputs: Vec<ReductionInput>,
    /// The C accumulator type.
    pub acc: String,
    /// The C output element type.
    pub out: String,
    /// Text around the map's value that turns it into the accumulator type (`("", "")` when it
    /// already is one).
    pub map_to_acc: (String, String),
    pub has_identity: bool,
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
        let mut args = vec![ci.to_string(), "_cargs.loop_size".to_string()];
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
            " _cp.{n} = *reinterpret_cast<const cuprum::Vec<{t}, _cV>*>({n}.ptr + _cw.b[{k}] + _cr);",
            n = p.name,
            t = p.ty
        );
    }
    load.push_str(" return _cp; };");
    lines.push(load);
    lines.push(format!("    auto _cmapk = [&](const _cPack& _cp, _cidx _co, _cidx _cr, int _ck) -> _cA {{ return {mapk_call}; }};"));
    let mut align = "    auto _calign = [&](const _cRow& _cw, _cidx _cr) -> int {".to_string();
    match strided.split_first() {
        None => align.push_str(" return -1; };"),
        Some((first, rest)) => {
            let _ = write!(align, " int _ch = cuprum::align_head<_cV>({}.ptr + _cw.b[0] + _cr);", first.name);
            for (k, p) in rest.iter().enumerate() {
                let _ = write!(align, " if (cuprum::align_head<_cV>({}.ptr + _cw.b[{}] + _cr) != _ch) return -1;", p.name, k + 1);
            }
            align.push_str(" return _ch; };");
        }
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
    for (variant, strategy, index) in VARIANTS {
        let mut ps = vec!["NAME".to_string()];
        ps.extend(e.generics.iter().cloned());
        let mut args = vec!["NAME".to_string(), strategy.to_string(), index.to_string()];
        args.extend(e.generics.iter().cloned());
        let _ = writeln!(
            out,
            "#define {}({}) {}({})",
            mangle::instantiate_variant_macro(name, variant),
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

impl Writer<'_> {
    /// A reduction: `NAME_map` (the body), `NAME_reduce`, `NAME_post` (identity when absent),
    /// `NAME_identity` when given, then the entry points of every variant.
    pub(crate) fn reduction(&mut self) {
        self.features.need("cuprum/reduction.h");
        let ItemKind::Reduction(parts) = &self.item.kind else { unreachable!() };
        let name = self.item.name.text.clone();
        let tp = self.template_prefix();
        let map_ret = self.ty(&self.item.ret.clone());
        let acc_ty = self.types.acc.clone().unwrap_or_else(|| self.item.ret.clone());
        let acc = self.ty(&acc_ty);
        let params = self.params_c(&["u64 _ci".into(), "u64 _cn".into()]);
        self.out.push_str(&tp);
        self.line(format!("__device__ __forceinline__ {map_ret} {name}_map({params}) {{"));
        self.body_into_return();
        self.line("}");
        // reduce
        let (a, b) = (self.locals[parts.reduce.params[0].0 as usize].clone(), self.locals[parts.reduce.params[1].0 as usize].clone());
        self.out.push_str(&tp);
        self.line(format!("__device__ __forceinline__ {acc} {name}_reduce({acc} {a}, {acc} {b}) {{"));
        self.indent += 1;
        self.expr_into(&parts.reduce.body, &Dest::Return);
        self.indent -= 1;
        self.line("}");
        // post
        let out_ty = match &parts.post {
            Some(p) => self.ty_of(&p.body),
            None => acc_ty.clone(),
        };
        let out = self.ty(&out_ty);
        self.out.push_str(&tp);
        match &parts.post {
            Some(p) => {
                let x = self.locals[p.params[0].0 as usize].clone();
                self.line(format!("__device__ __forceinline__ {out} {name}_post({acc} {x}) {{"));
                self.indent += 1;
                self.expr_into(&p.body, &Dest::Return);
                self.indent -= 1;
            }
            None => {
                self.line(format!("__device__ __forceinline__ {out} {name}_post({acc} _cx) {{"));
                self.line("    return _cx;");
            }
        }
        self.line("}");
        if let Some(id) = &parts.identity {
            self.out.push_str(&tp);
            self.line(format!("__device__ __forceinline__ {acc} {name}_identity() {{"));
            self.indent += 1;
            self.expr_into(id, &Dest::Return);
            self.indent -= 1;
            self.line("}");
        }
        let mut inputs = Vec::new();
        for p in &self.item.params.clone() {
            let n = self.locals[p.local.0 as usize].clone();
            match &p.ty {
                Ty::Raw(inner) => inputs.push(ReductionInput { name: n, ty: self.ty(inner), raw: true }),
                t => inputs.push(ReductionInput { name: n, ty: self.ty(t), raw: false }),
            }
        }
        // The map's value enters the accumulator as by `as` (the type checker allows only that).
        let marker = "\u{1}";
        let converted = self.convert(&self.item.ret.clone(), &acc_ty, marker);
        let (pre, post) = converted.split_once(marker).expect("the conversion keeps its operand");
        let entry = ReductionEntry {
            name,
            generics: self.generics.clone(),
            inputs,
            acc,
            out,
            map_to_acc: (pre.to_string(), post.to_string()),
            has_identity: parts.identity.is_some(),
            post: PostStyle::Return,
        };
        self.out.push_str(&entry_points(&entry));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emit(src: &str) -> String {
        crate::compile_source(src).expect("compiles").unit.source
    }

    #[test]
    fn every_32_bit_variant_is_instantiated_with_its_symbol() {
        let c = emit("#[reduction(identity = 0.0, reduce = |a, b| a + b)] fn s(x: f32) -> f32 { x }");
        for v in VARIANT_NAMES {
            let sym = mangle::kernel_symbol("reduction", "s", Some(v), &[]);
            // Every variant has its instantiation macro; the 64-bit ones are instantiated at
            // first use (by NVRTC), not in the unit.
            assert!(c.contains(&format!("#define CUPRUM_INSTANTIATE_s_{v}(")), "{v}:\n{c}");
            assert_eq!(c.contains(&format!("CUPRUM_INSTANTIATE_s_{v}({sym})")), !v.ends_with("64"), "{v}:\n{c}");
        }
        assert!(c.contains("#include <cuprum/reduction.h>"), "{c}");
        assert_eq!(VARIANTS.iter().map(|v| v.0).collect::<Vec<_>>(), VARIANT_NAMES);
    }

    #[test]
    fn map_values_convert_to_the_accumulator_as_by_as() {
        let c = emit("#[reduction(identity = 0, reduce = |a, b| a + b, acc = i32)] fn s(x: f32) -> f32 { x }");
        assert!(c.contains("cuprum::cast_float<i32>(s_map((u64)(_co * _cR + _cr)"), "{c}");
    }

    #[test]
    fn raw_arguments_pass_through_and_need_no_row_offset() {
        let c = emit(
            "#[reduction(identity = 0.0, reduce = |a, b| a + b)] fn s(x: f32, w: Raw<f32>) -> f32 { x * w[index()] }",
        );
        assert!(c.contains("cuprum::Raw<f32> w, cuprum::ReduceOperand<f32> _cout"), "{c}");
        assert!(c.contains("cuprum::VecElems<f32>::value"), "{c}");
    }

    #[test]
    fn without_identity_the_empty_case_has_no_identity_call() {
        let c = emit("#[reduction(reduce = |a, b| a.max(b))] fn m(x: i32) -> i32 { x }");
        assert!(!c.contains("m_identity"), "{c}");
        assert!(c.contains("m_post(_ch ? _cv : _cA()"), "{c}");
    }
}
