//! What the context of an expression expects of its type: rustc's `Expectation`, the part of it
//! kernels need.
//!
//! An expectation is a hint passed down while checking an expression; the constraint itself is
//! the unification done by the caller (`Checker::expect`). The hint matters for one thing only: an
//! unsuffixed literal takes an integer (or float) type it is offered directly instead of a fresh
//! inference variable, which decides the literal's type where nothing else would constrain it:
//!
//! - `Has(T)`: the value must be a `T` (a `let` annotation, an argument, an assigned place, a
//!   return). Unification would give the literal `T` anyway.
//! - `Cast(T)`: the operand of `as T`, which is *not* constrained (`(n - 1) as usize` with
//!   `n: u32` is a `u32` subtraction). rustc still offers `T` to a literal reached through
//!   parentheses, unary `-`/`!` and a block's tail: `300 as u8` is a `u8` literal (out of range),
//!   `3_000_000_000 as u32` is a `u32` one, `-1 as u8` negates a `u8` (an error), but
//!   `(200 + 100) as u8` adds two `i32`s and `(if c { 300 } else { 1 }) as u8` has `i32` arms.
//!
//! Operands of binary operators and method receivers are checked with no expectation, the
//! branches of `if` and `match` with `for_branches()`, calls with `only_has_type()`, exactly where
//! rustc does (`rustc_hir_typeck`: `check_binop`, `check_method_call`, `adjust_for_branches`,
//! `expected_inputs_for_expected_output`).

use crate::ir::Ty;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum Expect<'t> {
    #[default]
    None,
    /// The value must have this type.
    Has(&'t Ty),
    /// The operand of `as` with this target type.
    Cast(&'t Ty),
}

impl<'t> Expect<'t> {
    /// The type the value must have, if the context says so (a cast's target does not).
    pub(crate) fn only_has_type(self) -> Option<&'t Ty> {
        match self {
            Expect::Has(t) => Some(t),
            Expect::None | Expect::Cast(_) => None,
        }
    }

    /// The type an unsuffixed literal is offered: the expected type or the cast's target.
    pub(crate) fn for_literal(self) -> Option<&'t Ty> {
        match self {
            Expect::Has(t) | Expect::Cast(t) => Some(t),
            Expect::None => None,
        }
    }

    /// The expectation of each branch of an `if` or `match` (rustc's `adjust_for_branches`): a
    /// cast's target does not reach the arms.
    pub(crate) fn for_branches(self) -> Expect<'t> {
        match self {
            Expect::Has(t) => Expect::Has(t),
            Expect::None | Expect::Cast(_) => Expect::None,
        }
    }
}

impl<'t> From<Option<&'t Ty>> for Expect<'t> {
    fn from(t: Option<&'t Ty>) -> Self {
        t.map_or(Expect::None, Expect::Has)
    }
}
