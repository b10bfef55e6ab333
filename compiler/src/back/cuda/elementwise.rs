//! The CUDA C of an `#[elementwise]` kernel: the user's body as `NAME_map` (one element), and one
//! instantiation macro whose entry point hands the operands to `cuprum::ew::run` of
//! `include/cuprum/elementwise.h`, where all the loops live. The macro takes the launch variant as
//! its second argument (`contig`, `s32`, `s64`: `mangle::ELEMENTWISE_VARIANTS`); the runtime's
//! planner picks the variant per launch.
//!
//! Parameters of the entry point, in order: one per kernel parameter (`cuprum::ew::In<T, V>` for a
//! per-element input, which the caller passes as an array or as a scalar by value;
//! `cuprum::ew::InOut<T, V>` for a `&mut T` output parameter; `cuprum::Raw<T>` for a raw argument),
//! one `cuprum::ew::Out<T, V>` per returned value, then the loop `cuprum::ew::Loop<V>`.

use std::fmt::Write as _;

use super::writer::Writer;
use crate::ir::Ty;

impl Writer<'_> {
    pub(crate) fn elementwise(&mut self) {
        self.features.need("cuprum/elementwise.h");
        let name = self.item.name.text.clone();
        let ret = self.ty(&self.item.ret.clone());
        let params = self.params_c(&["u64 _ci".into(), "u64 _cn".into()]);
        let tp = self.template_prefix();
        self.out.push_str(&tp);
        self.line(format!("__device__ __forceinline__ {ret} {name}_map({params}) {{"));
        self.body_into_return();
        self.line("}");

        // Entry point: kernel parameters `_caK` / `_coK`, and the element function's parameters
        // under the user's names.
        let variant = "cuprum::ew::VARIANT";
        let mut kparams = Vec::new();
        let mut operands = Vec::new();
        let mut lparams = vec!["u64 _ci".to_string()];
        let mut map_args = vec!["_ci".to_string(), "_cloop.size".to_string()];
        for (k, p) in self.item.params.clone().iter().enumerate() {
            let n = self.locals[p.local.0 as usize].clone();
            let arg = format!("_ca{k}");
            match &p.ty {
                Ty::Raw(_) => {
                    let t = self.ty(&p.ty);
                    kparams.push(format!("{t} {arg}"));
                    lparams.push(format!("const {t}& {n}"));
                }
                Ty::Ref { inner, .. } => {
                    let t = self.ty(inner);
                    kparams.push(format!("cuprum::ew::InOut<{t}, {variant}> {arg}"));
                    lparams.push(format!("{t}& {n}"));
                }
                t => {
                    let t = self.ty(t);
                    kparams.push(format!("cuprum::ew::In<{t}, {variant}> {arg}"));
                    lparams.push(format!("{t} {n}"));
                }
            }
            operands.push(arg);
            map_args.push(n);
        }
        let outs: Vec<Ty> = match &self.item.ret {
            Ty::Unit => Vec::new(),
            Ty::Tuple(ts) => ts.clone(),
            t => vec![t.clone()],
        };
        for (k, t) in outs.iter().enumerate() {
            let t = self.ty(t);
            kparams.push(format!("cuprum::ew::Out<{t}, {variant}> _co{k}"));
            lparams.push(format!("{t}& _cout{k}"));
            operands.push(format!("_co{k}"));
        }
        kparams.push(format!("cuprum::ew::Loop<{variant}> _cloop"));
        let targs = self.template_args();
        let call = format!("{name}_map{targs}({})", map_args.join(", "));
        let store = match outs.len() {
            0 => format!("{call};"),
            1 => format!("_cout0 = {call};"),
            n => {
                let mut s = format!("{ret} _cr = {call};");
                for k in 0..n {
                    let _ = write!(s, " _cout{k} = _cr._{k};");
                }
                s
            }
        };
        let mut ps = vec!["NAME".to_string(), "VARIANT".to_string()];
        ps.extend(self.generics.iter().cloned());
        let operands: String = operands.iter().map(|o| format!(", {o}")).collect();
        let _ = writeln!(
            self.out,
            "#define {}({}) \\\n    extern \"C\" __global__ void NAME({}) {{ \\\n        cuprum::ew::run(_cloop, [&]({}) {{ {store} }}{operands}); \\\n    }}",
            crate::mangle::instantiate_macro(&name),
            ps.join(", "),
            kparams.join(", "),
            lparams.join(", "),
        );
        self.out.push_str(&crate::mangle::variant_forwarding_macros(&name, &crate::mangle::ELEMENTWISE_VARIANTS, &self.generics));
    }
}
