//! The types of Hopper's intrinsics (`lang::HopperOp`): barriers are `u64` elements of shared
//! memory, a TMA copy goes from a `&TensorMap<T>` to shared memory of the same `T`, and a
//! `wgmma_m64nNk16` accumulates into a `&mut [f32; N / 2]` from two shared operands of `f16` or
//! `bf16` (`_bt`: B stored transposed; `_rs`: A a `[T; 8]` fragment in registers and B shared),
//! a `wgmma_m64nNk32` from two of `f8e4m3` or `f8e5m2`; a named barrier takes a `u32` id and
//! thread count. rustc checks the same through the prelude's signatures.

use proc_macro2::Span;

use super::Checker;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::HopperOp;

const U32: Ty = Ty::Scalar(DType::U32);
const I32: Ty = Ty::Scalar(DType::I32);

impl Checker<'_, '_> {
    /// A Hopper intrinsic, its argument count already checked (`arity_ok`).
    pub(super) fn hopper(&mut self, h: HopperOp, consts: &[u64], args: &[Expr], arity_ok: bool, span: Span) -> Ty {
        use HopperOp::*;
        let name = h.rust_name();
        match h {
            WgmmaFence | WgmmaCommit => return Ty::Unit,
            RegAlloc | RegDealloc => {
                if !matches!(consts, [n] if (24..=256).contains(n) && n % 8 == 0) {
                    self.diags.error(span, format!("write the registers per thread, a multiple of 8 from 24 to 256: `{name}::<232>()`"));
                }
                return Ty::Unit;
            }
            _ => {}
        }
        if !arity_ok {
            return Ty::Error;
        }
        match h {
            WgmmaWait => {
                if !matches!(consts, [n] if *n <= 7) {
                    self.diags.error(span, "write how many committed groups may stay in flight, 0 to 7: `wgmma_wait::<0>(&mut acc)` waits for all");
                }
                let at = self.expr(&args[0], None);
                let ok = match self.resolve(&at) {
                    Ty::Ref { inner, mutable: true } => {
                        matches!(self.resolve(&inner), Ty::Array(e, n) if matches!(self.resolve(&e), Ty::Scalar(DType::F32)) && matches!(n, 32 | 64 | 128))
                    }
                    Ty::Error => true,
                    _ => false,
                };
                if !ok {
                    let shown = self.show(&at);
                    self.diags.error(args[0].span, format!("`wgmma_wait` takes the accumulators the multiplies write, `&mut [f32; 32]`, `[f32; 64]` or `[f32; 128]`, found `{shown}`"));
                }
            }
            MbarrierInit | MbarrierArrive | MbarrierArriveExpectTx | MbarrierWait => {
                self.barriers(name, &args[0]);
                self.index_arg(&args[1]);
                if h != MbarrierArrive {
                    self.arg(&args[2], &U32);
                }
            }
            TmaLoad2d => {
                let elem = self.shared_elem(name, &args[0], "copies into");
                self.index_arg(&args[1]);
                let mt = self.expr(&args[2], None);
                match (self.resolve(&mt), &elem) {
                    (Ty::Ref { inner, mutable: false }, _) if matches!(self.resolve(&inner), Ty::TensorMap(_)) => {
                        if let (Ty::TensorMap(me), Some(e)) = (self.resolve(&inner), &elem) {
                            self.expect(e, &me, args[2].span);
                        }
                    }
                    (Ty::Error, _) => {}
                    (other, _) => {
                        let shown = self.show(&other);
                        self.diags.error(args[2].span, format!("`tma_load_2d` copies from a `&TensorMap<T>` argument of the kernel, found `{shown}`"));
                    }
                }
                self.arg(&args[3], &I32);
                self.arg(&args[4], &I32);
                self.barriers(name, &args[5]);
                self.index_arg(&args[6]);
            }
            NamedBarrierSync | NamedBarrierArrive => {
                self.arg(&args[0], &U32);
                self.arg(&args[1], &U32);
            }
            _ if h.wgmma_rs() => {
                let n = h.wgmma_n().unwrap_or(64);
                let acc = Ty::Ref { inner: Box::new(Ty::Array(Box::new(Ty::Scalar(DType::F32)), n / 2)), mutable: true };
                self.arg(&args[0], &acc);
                let at = self.expr(&args[1], None);
                let ea = match self.resolve(&at) {
                    Ty::Array(e, 8) if matches!(self.resolve(&e), Ty::Scalar(DType::F16 | DType::BF16)) => Some(*e),
                    Ty::Error => None,
                    other => {
                        let shown = self.show(&other);
                        self.diags.error(args[1].span, format!("`{name}` takes A from registers as each thread's fragment, a `[bf16; 8]` or `[f16; 8]`, found `{shown}`"));
                        None
                    }
                };
                let eb = self.shared_elem(name, &args[2], "reads B from");
                self.index_arg(&args[3]);
                if let (Some(e), Some(b)) = (&ea, &eb) {
                    self.expect(e, b, args[2].span);
                }
            }
            _ => {
                let n = h.wgmma_n().unwrap_or(64);
                let acc = Ty::Ref { inner: Box::new(Ty::Array(Box::new(Ty::Scalar(DType::F32)), n / 2)), mutable: true };
                self.arg(&args[0], &acc);
                let ea = self.shared_elem(name, &args[1], "reads A from");
                self.index_arg(&args[2]);
                let eb = self.shared_elem(name, &args[3], "reads B from");
                self.index_arg(&args[4]);
                if let Some(e) = &ea {
                    match (self.resolve(e), h.wgmma_fp8()) {
                        (Ty::Scalar(DType::F16 | DType::BF16), false) | (Ty::Scalar(DType::F8E4M3 | DType::F8E5M2), true) | (Ty::Error, _) => {}
                        (other, fp8) => {
                            let shown = self.show(&other);
                            let want = if fp8 { "`f8e4m3` or `f8e5m2`" } else { "`f16` or `bf16`" };
                            self.diags.error(args[1].span, format!("`{name}` multiplies {want} operands, found `{shown}`"));
                        }
                    }
                    if let Some(b) = &eb {
                        self.expect(e, b, args[3].span);
                    }
                }
            }
        }
        Ty::Unit
    }

    /// Shared memory of `u64` barriers.
    fn barriers(&mut self, name: &str, a: &Expr) {
        if let Some(e) = self.shared_elem(name, a, "uses barriers in") {
            match self.resolve(&e) {
                Ty::Scalar(DType::U64) | Ty::Error => {}
                other => {
                    let shown = self.show(&other);
                    self.diags.error(a.span, format!("`{name}`'s barriers are `u64` elements of shared memory (`shared_array::<u64, N>()`), found elements `{shown}`"));
                }
            }
        }
    }

    /// The element type of a shared operand: `&mut [T; N]` from `shared_array` or `&mut [T]` from
    /// `dynamic_shared` (the validator checks where it was bound).
    fn shared_elem(&mut self, name: &str, a: &Expr, what: &str) -> Option<Ty> {
        let t = self.expr(a, None);
        match self.resolve(&t) {
            Ty::ArrayRef { elem, .. } | Ty::Slice { elem, .. } => Some(*elem),
            Ty::Error => None,
            other => {
                let shown = self.show(&other);
                self.diags.error(a.span, format!("`{name}` {what} shared memory (`shared_array::<T, N>()` or `dynamic_shared::<T>()`), found `{shown}`"));
                None
            }
        }
    }
}
