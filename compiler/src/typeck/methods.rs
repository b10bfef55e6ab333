//! Method calls, resolved against the receiver's type: float methods, integer methods, complex
//! methods, and `len`/`shape`/`strides` of array arguments.

use proc_macro2::Span;

use super::Checker;
use crate::dtype::DType;
use crate::ir::*;
use crate::lang;

impl Checker<'_, '_> {
    pub(super) fn method(&mut self, receiver: &Expr, method: &Name, args: &[Expr], expected: Option<&Ty>, span: Span) -> Ty {
        let rt = self.expr(receiver, expected);
        if self.is_error(&rt) {
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        }
        let rt = match self.resolve(&rt) {
            Ty::Ref { inner, .. } => *inner,
            // rustc needs the literal's type before a method call; we default as it would later.
            Ty::IntVar(_) => self.unify(&rt, &Ty::Scalar(DType::I32)).unwrap_or(rt),
            Ty::FloatVar(_) => self.unify(&rt, &Ty::Scalar(DType::F64)).unwrap_or(rt),
            other => other,
        };
        let m = method.text.as_str();
        let usize_ty = Ty::Scalar(DType::U64);
        let this = rt.clone();
        let want = |c: &mut Self, n: usize, tys: &[Ty]| -> bool {
            if args.len() != n {
                c.diags.error(span, format!("`{m}` takes {n} argument(s) but {} were given", args.len()));
                return false;
            }
            for (a, t) in args.iter().zip(tys) {
                let at = c.expr(a, Some(t));
                c.expect(t, &at, a.span);
            }
            true
        };
        // Array-like receivers.
        match &rt {
            Ty::Slice { .. } | Ty::ArrayRef { .. } | Ty::Array(..) | Ty::Raw(_) | Ty::View { .. } if m == "len" => {
                want(self, 0, &[]);
                return usize_ty;
            }
            Ty::View { ndim, .. } if m == "shape" => {
                want(self, 0, &[]);
                return Ty::Array(Box::new(usize_ty), *ndim as u64);
            }
            Ty::View { ndim, .. } if m == "strides" => {
                want(self, 0, &[]);
                return Ty::Array(Box::new(Ty::Scalar(DType::I64)), *ndim as u64);
            }
            _ => {}
        }
        let is_float = self.has(&rt, Bound::Float);
        let is_int = self.has(&rt, Bound::Int);
        let is_real = self.has(&rt, Bound::Real);
        let concrete = rt.scalar();
        if is_float {
            if lang::FLOAT_UNARY.contains(&m) {
                want(self, 0, &[]);
                return this;
            }
            if lang::FLOAT_BINARY.contains(&m) {
                want(self, 1, std::slice::from_ref(&this));
                return this;
            }
            if lang::FLOAT_PREDICATES.contains(&m) {
                want(self, 0, &[]);
                return Ty::Scalar(DType::Bool);
            }
            match m {
                "powi" => {
                    want(self, 1, &[Ty::Scalar(DType::I32)]);
                    return this;
                }
                "mul_add" | "clamp" => {
                    want(self, 2, &[this.clone(), this.clone()]);
                    return this;
                }
                "to_f32" if concrete.is_some_and(|d| d.is_half()) => {
                    want(self, 0, &[]);
                    return Ty::Scalar(DType::F32);
                }
                "to_bits" if concrete.is_some() => {
                    want(self, 0, &[]);
                    return Ty::Scalar(match concrete.unwrap() {
                        DType::F32 => DType::U32,
                        DType::F64 => DType::U64,
                        _ => DType::U16,
                    });
                }
                _ => {}
            }
        }
        if is_int {
            if lang::INT_BINARY.contains(&m) {
                want(self, 1, std::slice::from_ref(&this));
                return this;
            }
            if lang::INT_COUNT.contains(&m) {
                want(self, 0, &[]);
                return Ty::Scalar(DType::U32);
            }
            if lang::INT_UNARY.contains(&m) {
                if m == "abs" && !concrete.is_some_and(|d| d.is_signed_int()) {
                    self.diags.error(method.span, "`abs` is defined on signed integer types only");
                }
                want(self, 0, &[]);
                return this;
            }
            if lang::INT_U32_ARG.contains(&m) {
                want(self, 1, &[Ty::Scalar(DType::U32)]);
                return this;
            }
            if m == "clamp" {
                want(self, 2, &[this.clone(), this.clone()]);
                return this;
            }
            if m == "is_power_of_two" && concrete.is_some_and(|d| d.is_unsigned_int()) {
                want(self, 0, &[]);
                return Ty::Scalar(DType::Bool);
            }
        }
        if is_real {
            match m {
                "to_f64" => {
                    want(self, 0, &[]);
                    return Ty::Scalar(DType::F64);
                }
                "min" | "max" => {
                    want(self, 1, std::slice::from_ref(&this));
                    return this;
                }
                _ => {}
            }
        }
        if let Some(d) = concrete {
            if d.is_complex() {
                let part = Ty::Scalar(d.complex_part().unwrap());
                match m {
                    "conj" | "exp" | "sqrt" | "ln" => {
                        want(self, 0, &[]);
                        return this;
                    }
                    "norm" | "norm_sqr" | "arg" => {
                        want(self, 0, &[]);
                        return part;
                    }
                    _ => {}
                }
            }
        }
        for a in args {
            self.expr(a, None);
        }
        let shown = self.show(&rt);
        let hint = match &rt {
            Ty::Param(p) => format!(
                " (with the bound `{}: {}`; a stronger bound such as `Float` or `Int` may provide it)",
                self.item.generics[*p as usize].name.text,
                self.bound(*p).name()
            ),
            _ => String::new(),
        };
        self.diags.error(method.span, format!("no method `{m}` on type `{shown}` in kernels{hint}; docs/kernel-language.md lists the methods kernels support"));
        Ty::Error
    }
}
