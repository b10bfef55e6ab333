//! Unsuffixed literals, typed as rustc types them.
//!
//! - An unsuffixed integer literal is an inference variable (`{integer}`), a float literal a
//!   `{float}` one, unless its expectation offers it an integer (float) type directly
//!   (`expect.rs`: an annotation, an argument, or a cast's target reached through parentheses,
//!   unary `-`/`!` and block tails).
//! - A variable unifies with whatever it meets: the other operand of an arithmetic, bitwise or
//!   comparison operator (not of a shift), an assigned place, an argument, a `let` annotation, a
//!   return type, a slice index (`usize`), the receiver's type in `x.min(1)`.
//! - A method called on a variable keeps it a variable when a prelude trait provides the method
//!   (`2.0.sqrt()`, `1.min(n)`); a method only the concrete types have (`abs` of an integer,
//!   `is_power_of_two`, `to_bits`) is rustc's E0689 (`methods.rs`).
//! - At the end of the item, variables still unconstrained default to `i32` and `f64` (`zonk`);
//!   then every integer literal must fit its type (`overflowing_literals`) and every negated
//!   variable must have become signed.
//!
//! `compiler/tests/literal_typing.rs` and `testsuite/tests/literal_inference.rs` (the same
//! expressions through rustc) hold the cases.

use proc_macro2::Span;

use super::expect::Expect;
use super::{int_range, Checker, VarKind};
use cuprum_abi::dtype::DType;
use crate::ir::*;

impl Checker<'_, '_> {
    /// The type of a literal under its expectation (rustc's `check_lit`).
    pub(super) fn lit(&mut self, l: &Lit, expected: Expect<'_>) -> Ty {
        let offered = expected.for_literal().map(|t| self.resolve(t));
        match l {
            Lit::Bool(_) => Ty::Scalar(DType::Bool),
            Lit::Int { suffix: Some(d), .. } | Lit::Float { suffix: Some(d), .. } => Ty::Scalar(*d),
            Lit::Int { suffix: None, .. } => {
                let v = self.fresh(VarKind::Int);
                match offered {
                    Some(t @ Ty::Scalar(d)) if d.is_int() => self.unify(&v, &t).unwrap_or(v),
                    Some(t @ Ty::IntVar(_)) => self.unify(&v, &t).unwrap_or(v),
                    _ => v,
                }
            }
            Lit::Float { suffix: None, .. } => {
                let v = self.fresh(VarKind::Float);
                match offered {
                    // `f16` and `bf16` are not primitive: no literal is one (`f16::from_f32(..)`).
                    Some(t @ Ty::Scalar(d)) if d.is_float() && !d.is_half() => self.unify(&v, &t).unwrap_or(v),
                    Some(t @ Ty::FloatVar(_)) => self.unify(&v, &t).unwrap_or(v),
                    _ => v,
                }
            }
        }
    }

    /// rustc's `overflowing_literals` (deny by default): every integer literal fits its type.
    pub(super) fn check_literals(&mut self) {
        for (id, value, negated, span) in std::mem::take(&mut self.int_lits) {
            let Some(t) = self.exprs[id.0 as usize].clone() else { continue };
            let Ty::Scalar(d) = self.zonk(&t) else { continue };
            // A negated unsigned literal is the negation's error (`check_negations`, `unary`).
            if !d.is_int() || (negated && d.is_unsigned_int()) {
                continue;
            }
            let (lo, hi) = int_range(d);
            let v = value as i128;
            let fits = if negated { -v >= lo } else { v <= hi };
            if !fits || value > u64::MAX as u128 {
                let shown = if negated { format!("-{value}") } else { value.to_string() };
                self.diags.error(span, format!("literal out of range for `{d}`: `{shown}` is not in `{lo}..={hi}`; use a wider type or a wrapping method"));
            }
        }
    }

    /// rustc's `overflowing_literals` for floats: a literal that is infinite in its type.
    pub(super) fn check_float_literals(&mut self) {
        for (id, text, span) in std::mem::take(&mut self.float_lits) {
            let Some(t) = self.exprs[id.0 as usize].clone() else { continue };
            let Ty::Scalar(d) = self.zonk(&t) else { continue };
            let text = text.replace('_', "");
            let infinite = match d {
                DType::F32 => text.parse::<f32>().is_ok_and(f32::is_infinite),
                DType::F64 => text.parse::<f64>().is_ok_and(f64::is_infinite),
                _ => false,
            };
            if infinite {
                self.diags.error(span, format!("literal out of range for `{d}`: `{text}` does not fit and would be `{d}::INFINITY`; use `{d}::INFINITY` or a wider type"));
            }
        }
    }

    /// Negations of a literal whose type was not known yet: rustc rejects them once the type
    /// turns out unsigned (`let a = -1; let b: u32 = a;`), with the message `unary` gives.
    pub(super) fn check_negations(&mut self) {
        for (operand, span) in std::mem::take(&mut self.negated_vars) {
            let Some(t) = self.exprs[operand.0 as usize].clone() else { continue };
            if let Ty::Scalar(d) = self.zonk(&t) {
                if d.is_unsigned_int() {
                    self.negation_error(&Ty::Scalar(d), span);
                }
            }
        }
    }

    pub(super) fn negation_error(&mut self, t: &Ty, span: Span) {
        let shown = self.show(t);
        let hint = if self.is_int(t) { "; use `x.wrapping_neg()`" } else { "" };
        self.diags.error(span, format!("cannot negate a value of type `{shown}`{hint}"));
    }
}
