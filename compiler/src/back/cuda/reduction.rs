//! The CUDA C of reductions: the parts of a `#[reduction]` item (`NAME_map`, `NAME_reduce`,
//! `NAME_post`, `NAME_identity`), then the entry points that instantiate the loops of
//! `abi/include/cuprum/reduction.h`, one kernel per `ReductionVariant`.
//!
//! The entry points are written by `cuprum_abi::reduction::entry_points` from
//! a [`ReductionEntry`], which both the `#[reduction]` items (here) and the runtime's
//! `ReductionKernel` (CuPy's grammar) fill in, so both kinds run the same loops.

use proc_macro2::Span;

use super::writer::{int_literal, Dest, Writer};
use cuprum_abi::dtype::DType;
use crate::typeck::IdentityLiteral;
use crate::ir::*;

use cuprum_abi::reduction::{entry_points, PostStyle, ReductionEntry, ReductionInput};

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
        let params = self.params_c(&["u64 _ci".into(), "u64 _cj".into(), "u64 _cn".into()]);
        let header = format!("__device__ __forceinline__ {map_ret} {name}_map({params}) {{");
        self.function(&tp, header, self.item.span, self.item.body.span, Self::body_into_return);
        // reduce, post and identity: at the lines of the attribute's closures and identity.
        let (a, b) = (self.locals[parts.reduce.params[0].0 as usize].clone(), self.locals[parts.reduce.params[1].0 as usize].clone());
        let header = format!("__device__ __forceinline__ {acc} {name}_reduce({acc} {a}, {acc} {b}) {{");
        self.function(&tp, header, parts.reduce.span, parts.reduce.span, |w| {
            w.indent += 1;
            w.expr_into(&parts.reduce.body, &Dest::Return);
            w.indent -= 1;
        });
        let out_ty = match &parts.post {
            Some(p) => self.ty_of(&p.body),
            None => acc_ty.clone(),
        };
        let out = self.ty(&out_ty);
        match &parts.post {
            Some(p) => {
                let x = self.locals[p.params[0].0 as usize].clone();
                let header = format!("__device__ __forceinline__ {out} {name}_post({acc} {x}) {{");
                self.function(&tp, header, p.span, p.span, |w| {
                    w.indent += 1;
                    w.expr_into(&p.body, &Dest::Return);
                    w.indent -= 1;
                });
            }
            None => {
                let header = format!("__device__ __forceinline__ {out} {name}_post({acc} _cx) {{");
                self.function(&tp, header, Span::call_site(), Span::call_site(), |w| w.line("    return _cx;"));
            }
        }
        if let Some(id) = &parts.identity {
            let header = format!("__device__ __forceinline__ {acc} {name}_identity() {{");
            self.function(&tp, header, id.span, id.span, |w| {
                w.indent += 1;
                // A literal for an accumulator no literal types (typeck/identity.rs): converted as
                // `T::from_i64` / `T::from_f64` convert.
                match IdentityLiteral::for_accumulator(id, &acc_ty) {
                    Some(lit) => {
                        w.features.need("cuprum/math.h");
                        let converted = match lit.as_i64() {
                            Some(v) => format!("cuprum::num<{acc}>::from_i64({})", int_literal(v as i128, DType::I64)),
                            None => format!("cuprum::num<{acc}>::from_f64({:?})", lit.as_f64()),
                        };
                        w.line(format!("return {converted};"));
                    }
                    None => w.expr_into(id, &Dest::Return),
                }
                w.indent -= 1;
            });
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
    use cuprum_abi::mangle;
    use cuprum_abi::{KernelKind, ReductionVariant};

    fn emit(src: &str) -> String {
        crate::compile_source(src).expect("compiles").unit.source
    }

    #[test]
    fn every_32_bit_variant_is_instantiated_with_its_symbol() {
        let c = emit("#[reduction(identity = 0.0, reduce = |a, b| a + b)] fn s(x: f32) -> f32 { x }");
        for v in ReductionVariant::ALL {
            let sym = mangle::kernel_symbol(KernelKind::Reduction, "s", Some(v.into()), &[]);
            // Every variant has its instantiation macro; the 64-bit ones are instantiated at
            // first use (by NVRTC), not in the unit.
            assert!(c.contains(&format!("#define CUPRUM_INSTANTIATE_s_{v}(")), "{v}:\n{c}");
            assert_eq!(c.contains(&format!("CUPRUM_INSTANTIATE_s_{v}({sym})")), !v.wide(), "{v}:\n{c}");
        }
        assert!(c.contains("#include <cuprum/reduction.h>"), "{c}");
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
    fn instances_of_a_generic_kernel_bring_their_dtypes_headers() {
        // The code names only `T`; `c32`, `cuprum::num<c32>` and `f16` come from the instances.
        let c = emit("#[reduction(identity = T::zero(), reduce = |a, b| a + b, instances = [Complex<f32>])] fn s<T: Number>(x: T) -> T { x }");
        assert!(c.contains("#include <cuprum/complex.h>"), "{c}");
        assert!(c.contains("return cuprum::num<T>::zero();"), "{c}");
        let c = emit("#[reduction(identity = T::zero(), reduce = |a, b| a + b, instances = [f16])] fn s<T: Number>(x: T) -> T { x }");
        assert!(c.contains("#include <cuprum/half.h>"), "{c}");
        assert!(!c.contains("complex.h"), "{c}");
    }

    #[test]
    fn a_literal_identity_converts_to_a_generic_or_half_accumulator() {
        // CuPy's `'0'`: the literal converts to each instance's type (typeck/identity.rs).
        let c = emit("#[reduction(identity = 0, reduce = |a, b| a + b, instances = [f32, u8, Complex<f64>])] fn s<T: Number>(x: T) -> T { x }");
        assert!(c.contains("return cuprum::num<T>::from_i64(0ll);"), "{c}");
        let c = emit("#[reduction(identity = -1.5, reduce = |a, b| a.max(b), instances = [f16, f64])] fn m<T: Float>(x: T) -> T { x }");
        assert!(c.contains("return cuprum::num<T>::from_f64(-1.5);"), "{c}");
        // u64::MAX passes through from_i64 as -1, which `(u64)` turns back into the value.
        let c = emit("#[reduction(identity = 18446744073709551615, reduce = |a, b| a.min(b), instances = [u64])] fn n<T: Int>(x: T) -> T { x }");
        assert!(c.contains("return cuprum::num<T>::from_i64(-1ll);"), "{c}");
        let c = emit("#[reduction(identity = 1, reduce = |a, b| a * b)] fn p(x: f16) -> f16 { x }");
        assert!(c.contains("return cuprum::num<f16>::from_i64(1ll);"), "{c}");
        // A literal a concrete primitive accumulator types stays a literal.
        let c = emit("#[reduction(identity = 0, reduce = |a, b| a + b)] fn q(x: i64) -> i64 { x }");
        assert!(c.contains("return 0ll;"), "{c}");
    }

    #[test]
    fn without_identity_the_empty_case_has_no_identity_call() {
        let c = emit("#[reduction(reduce = |a, b| a.max(b))] fn m(x: i32) -> i32 { x }");
        assert!(!c.contains("m_identity"), "{c}");
        assert!(c.contains("m_post(_ch ? _cv : _cA()"), "{c}");
    }
}
