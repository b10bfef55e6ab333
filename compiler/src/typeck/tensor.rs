//! The types of the tensor-core and asynchronous-copy intrinsics (`lang::Mma`, `lang::LdMatrix`,
//! `cp_async`): fragments are local arrays whose element type and length are the operand's, so
//! that a wrong shape or element type is a type error (rustc reports the same from the prelude's
//! signatures).

use super::Checker;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::{LdMatrix, Mma};

fn array(d: DType, n: usize) -> Ty {
    Ty::Array(Box::new(Ty::Scalar(d)), n as u64)
}

impl Checker<'_, '_> {
    /// `mma_*(a, b, c) -> d`, its argument count already checked.
    pub(super) fn mma(&mut self, m: Mma, args: &[Expr]) -> Ty {
        let (inputs, la, lb, acc) = m.shape();
        let name = m.rust_name();
        let elem = if let [only] = inputs {
            self.arg(&args[0], &array(*only, la));
            Some(*only)
        } else {
            let at = self.expr(&args[0], None);
            match self.resolve(&at) {
                Ty::Array(e, n) if n as usize == la => match self.resolve(&e) {
                    Ty::Scalar(d) if inputs.contains(&d) => Some(d),
                    Ty::Error => None,
                    _ => self.bad_fragment(name, &args[0], &at, inputs, la),
                },
                Ty::Error => None,
                _ => self.bad_fragment(name, &args[0], &at, inputs, la),
            }
        };
        match elem {
            Some(d) => {
                self.arg(&args[1], &array(d, lb));
            }
            None => {
                self.expr(&args[1], None);
            }
        }
        self.arg(&args[2], &array(acc, 4));
        array(acc, 4)
    }

    fn bad_fragment(&mut self, name: &str, a: &Expr, found: &Ty, inputs: &[DType], len: usize) -> Option<DType> {
        let shown = self.show(found);
        let want: Vec<String> = inputs.iter().map(|d| format!("`[{d}; {len}]`")).collect();
        self.diags.error(a.span, format!("`{name}` takes its A fragment as {}, found `{shown}`", want.join(" or ")));
        None
    }

    /// `ldmatrix_x*(shared, index) -> [T; 2 * count]`, its argument count already checked.
    pub(super) fn ldmatrix(&mut self, l: LdMatrix, args: &[Expr]) -> Ty {
        let st = self.expr(&args[0], None);
        self.index_arg(&args[1]);
        let n = 2 * l.count() as u64;
        match self.resolve(&st) {
            // A slice is shared memory only as `dynamic_shared` (the validator checks where it
            // was bound).
            Ty::ArrayRef { elem, .. } | Ty::Slice { elem, .. } => match self.resolve(&elem) {
                Ty::Scalar(d) if d.size() == 2 && !d.is_complex() => Ty::Array(Box::new(Ty::Scalar(d)), n),
                Ty::Error => Ty::Error,
                other => {
                    let shown = self.show(&other);
                    self.diags.error(
                        args[0].span,
                        format!("`{}` loads 16-bit elements (`f16`, `bf16`, `i16`, `u16`), found `{shown}`", l.rust_name()),
                    );
                    Ty::Error
                }
            },
            Ty::Error => Ty::Error,
            other => {
                let shown = self.show(&other);
                self.diags.error(
                    args[0].span,
                    format!(
                        "`{}` reads shared memory (`let s = shared_array::<bf16, N>();` or `let s = dynamic_shared::<bf16>();`), found `{shown}`",
                        l.rust_name()
                    ),
                );
                Ty::Error
            }
        }
    }

    /// `cp_async(dst, dst_index, src, src_index)`, its argument count already checked.
    pub(super) fn cp_async(&mut self, args: &[Expr]) -> Ty {
        let dt = self.expr(&args[0], None);
        self.index_arg(&args[1]);
        let elem = match self.resolve(&dt) {
            // A slice is shared memory only as `dynamic_shared` (the validator checks where it
            // was bound).
            Ty::ArrayRef { elem, mutable: true, .. } | Ty::Slice { elem, mutable: true } => Some(*elem),
            Ty::Error => None,
            other => {
                let shown = self.show(&other);
                self.diags.error(
                    args[0].span,
                    format!(
                        "`cp_async` copies into shared memory (`let s = shared_array::<f32, N>();` or `let s = dynamic_shared::<f32>();`), found `{shown}`"
                    ),
                );
                None
            }
        };
        match &elem {
            Some(e) => {
                let st = self.expr(&args[2], None);
                match self.resolve(&st) {
                    Ty::Slice { elem: se, .. } => {
                        self.expect(e, &se, args[2].span);
                    }
                    Ty::Error => {}
                    other => {
                        let shown = self.show(&other);
                        self.diags.error(args[2].span, format!("`cp_async` copies from a `&[T]` or `&mut [T]` argument, found `{shown}`"));
                    }
                }
                match self.resolve(e) {
                    Ty::Scalar(d) if 16 % d.size() == 0 => {}
                    Ty::Param(_) | Ty::Error => {}
                    other => {
                        let shown = self.show(&other);
                        self.diags
                            .error(args[0].span, format!("`cp_async` copies 16 bytes: the element size must divide 16, found `{shown}`"));
                    }
                }
            }
            None => {
                self.expr(&args[2], None);
            }
        }
        self.index_arg(&args[3]);
        Ty::Unit
    }

    /// `load4(x, i) -> [T; 4]` (`store` false) or `store4(y, i, v: [T; 4])`, their argument count
    /// already checked: `x` a `&[T]` or `&mut [T]` (`y` a `&mut [T]`).
    pub(super) fn quad(&mut self, store: bool, args: &[Expr]) -> Ty {
        let name = if store { "store4" } else { "load4" };
        let st = self.expr(&args[0], None);
        self.index_arg(&args[1]);
        let elem = match self.resolve(&st) {
            Ty::Slice { elem, mutable } if mutable || !store => Some(*elem),
            Ty::Error => None,
            other => {
                let shown = self.show(&other);
                let want = if store { "a `&mut [T]` (a writable slice argument)" } else { "a `&[T]` or `&mut [T]` (a slice argument)" };
                self.diags.error(args[0].span, format!("`{name}` takes {want}, found `{shown}`"));
                None
            }
        };
        let quad = elem.map(|e| Ty::Array(Box::new(e), 4));
        if store {
            let vt = self.expr(&args[2], quad.as_ref());
            if let Some(q) = &quad {
                self.expect(q, &vt, args[2].span);
            }
            Ty::Unit
        } else {
            quad.unwrap_or(Ty::Error)
        }
    }
}
