//! The CUDA C of an `#[elementwise]` kernel: the user's body as `NAME_map` (one element), and the
//! entry point of `cuprum_abi::elementwise` (shared with the runtime's `ElementwiseKernel`), which
//! hands the operands to `cuprum::ew::run` of `abi/include/cuprum/elementwise.h`, where all the loops
//! live. Its macro takes the launch variant as its second argument (`ElementwiseVariant`); the
//! runtime's planner picks the variant per launch.
//!
//! Parameters of the entry point, in order: one per kernel parameter (`cuprum::ew::In<T, V>` for a
//! per-element input, which the caller passes as an array or as a scalar by value;
//! `cuprum::ew::InOut<T, V>` for a `&mut T` output parameter; `cuprum::Raw<T>` for a raw argument),
//! one `cuprum::ew::Out<T, V>` per returned value, then the loop `cuprum::ew::Loop<V>`.

use std::fmt::Write as _;

use cuprum_abi::elementwise::{self, ElementwiseEntry, Operand};

use super::writer::Writer;
use crate::ir::Ty;

impl Writer<'_> {
    pub(crate) fn elementwise(&mut self) {
        self.features.need("cuprum/elementwise.h");
        let name = self.item.name.text.clone();
        let ret = self.ty(&self.item.ret.clone());
        let params = self.params_c(&["u64 _ci".into(), "u64 _cn".into()]);
        let tp = self.template_prefix();
        let header = format!("__device__ __forceinline__ {ret} {name}_map({params}) {{");
        self.function(&tp, header, self.item.span, self.item.body.span, Self::body_into_return);

        // Entry point (`cuprum_abi::elementwise`): kernel parameters `_caK` / `_coK`, and the
        // element function's parameters under the user's names.
        let mut operands: Vec<(Operand, String)> = Vec::new();
        let mut lparams = Vec::new();
        let mut map_args = vec!["_ci".to_string(), "_cloop.size".to_string()];
        for (k, p) in self.item.params.clone().iter().enumerate() {
            let n = self.locals[p.local.0 as usize].clone();
            let operand = match &p.ty {
                Ty::Raw(_) => {
                    let t = self.ty(&p.ty);
                    lparams.push(format!("const {t}& {n}"));
                    Operand::Raw(t)
                }
                Ty::Ref { inner, .. } => {
                    let t = self.ty(inner);
                    lparams.push(format!("{t}& {n}"));
                    Operand::InOut(t)
                }
                t => {
                    let t = self.ty(t);
                    lparams.push(format!("{t} {n}"));
                    Operand::In(t)
                }
            };
            operands.push((operand, format!("_ca{k}")));
            map_args.push(n);
        }
        let outs: Vec<Ty> = match &self.item.ret {
            Ty::Unit => Vec::new(),
            Ty::Tuple(ts) => ts.clone(),
            t => vec![t.clone()],
        };
        for (k, t) in outs.iter().enumerate() {
            let t = self.ty(t);
            lparams.push(format!("{t}& _cout{k}"));
            operands.push((Operand::Out(t), format!("_co{k}")));
        }
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
        let args: Vec<String> = operands.iter().map(|(_, a)| a.clone()).collect();
        let body = if self.item.min_blocks.is_some() {
            elementwise::run_call_unswitched(&lparams, &format!(" {store} "), &args)
        } else {
            elementwise::run_call(&lparams, &format!(" {store} "), &args)
        };
        let generics = self.generics.clone();
        self.out.push_str(&elementwise::entry_point(&ElementwiseEntry {
            name: &name,
            generics: &generics,
            operands: &operands,
            body: &body,
            bounds: (self.item.max_threads, self.item.min_blocks),
        }));
    }
}
