//! A reduction's literal identity for an accumulator that no Rust literal can type: a generic
//! parameter (`#[reduction(identity = 0, ...)] fn sum<T: Number>(x: T) -> T`), `f16` or `bf16`.
//!
//! CuPy writes such an identity as the string `'0'` and converts it to the accumulator type; here
//! the literal converts to each instance's type as `T::from_i64(0)` / `T::from_f64(1.5)` would
//! (the CUDA back end and the host functions call exactly those), and the build checks that every
//! instance can hold it: an integer must fit an integer type and be exact in a float type, a float
//! literal needs a float (or complex) type and must be finite in it. A literal that cannot be
//! represented is an error at its span, naming the instance.

use super::Checker;
use super::int_range;
use cuprum_abi::dtype::DType;
use crate::ir::*;
use crate::lang::Bound;

/// An unsuffixed literal, or the negation of one, written as a reduction's identity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IdentityLiteral {
    Int { value: u128, negated: bool },
    Float { value: f64, negated: bool },
}

impl IdentityLiteral {
    /// The literal `e` is, if it is an unsuffixed (negated) integer or float literal.
    pub(crate) fn of(e: &Expr) -> Option<IdentityLiteral> {
        match &e.kind {
            ExprKind::Lit(Lit::Int { value, suffix: None }) => Some(IdentityLiteral::Int { value: *value, negated: false }),
            ExprKind::Lit(Lit::Float { text, suffix: None }) => {
                Some(IdentityLiteral::Float { value: text.replace('_', "").parse().ok()?, negated: false })
            }
            ExprKind::Unary(UnOp::Neg, inner) => match IdentityLiteral::of(inner)? {
                IdentityLiteral::Int { value, negated: false } => Some(IdentityLiteral::Int { value, negated: true }),
                IdentityLiteral::Float { value, negated: false } => Some(IdentityLiteral::Float { value, negated: true }),
                _ => None,
            },
            _ => None,
        }
    }

    /// The literal identity `e` is, when no Rust literal types accumulator `acc` (a generic
    /// parameter, `f16`, `bf16`): the one test of the type checker, the CUDA writer and the host
    /// functions.
    pub(crate) fn for_accumulator(e: &Expr, acc: &Ty) -> Option<IdentityLiteral> {
        let untyped = matches!(acc, Ty::Param(_)) || matches!(acc, Ty::Scalar(d) if d.is_half());
        if untyped { IdentityLiteral::of(e) } else { None }
    }

    /// The value as `from_i64` takes it (two's complement for a `u64` above `i64::MAX`, which
    /// `from_i64` of `u64` turns back into the value), or `None` for a float literal.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match *self {
            IdentityLiteral::Int { value, negated } => Some(if negated { (value as i64).wrapping_neg() } else { value as i64 }),
            IdentityLiteral::Float { .. } => None,
        }
    }

    /// The value as `from_f64` takes it.
    pub(crate) fn as_f64(&self) -> f64 {
        match *self {
            IdentityLiteral::Int { value, negated } => if negated { -(value as f64) } else { value as f64 },
            IdentityLiteral::Float { value, negated } => if negated { -value } else { value },
        }
    }

    /// Why `d` cannot hold the literal, if it cannot.
    fn unrepresentable(&self, d: DType) -> Option<String> {
        let part = match d {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            d => d,
        };
        match (self, part) {
            (_, DType::Bool) => Some("`bool` is not a number".into()),
            (&IdentityLiteral::Int { value, negated }, d) if d.is_int() => {
                let (lo, hi) = int_range(d);
                let v = value as i128;
                let fits = value <= u64::MAX as u128 && if negated { -v >= lo } else { v <= hi };
                (!fits).then(|| format!("it is not in `{lo}..={hi}`"))
            }
            (IdentityLiteral::Float { .. }, d) if d.is_int() => Some(format!("`{d}` is an integer type")),
            (&IdentityLiteral::Int { value, .. }, d) => {
                (!int_is_exact(value, d)).then(|| format!("`{d}` does not hold this integer exactly"))
            }
            (IdentityLiteral::Float { .. }, d) => {
                (!self.as_f64().is_finite() || self.as_f64().abs() > float_max(d)).then(|| format!("it is beyond `{d}::MAX`"))
            }
        }
    }
}

/// Whether float type `d` holds the integer `v` exactly (its significant bits fit the mantissa
/// and it is not above the type's largest value).
fn int_is_exact(v: u128, d: DType) -> bool {
    if v == 0 {
        return true;
    }
    let mantissa_bits = match d {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F8E4M3 => 4,
        DType::F8E5M2 => 3,
        DType::F32 => 24,
        _ => 53,
    };
    let significant = 128 - v.leading_zeros() - v.trailing_zeros();
    significant <= mantissa_bits && (v as f64) <= float_max(d)
}

/// The largest finite value of float type `d`.
fn float_max(d: DType) -> f64 {
    match d {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F8E4M3 => 448.0,
        DType::F8E5M2 => 57344.0,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

impl Checker<'_, '_> {
    /// Types a literal identity `id` for accumulator `acc` when no Rust literal can type it (a
    /// generic parameter, `f16`, `bf16`), and checks every instance can hold it. Returns whether
    /// it did (otherwise the identity is typed as any expression).
    pub(super) fn literal_identity(&mut self, id: &Expr, acc: &Ty) -> bool {
        let acc = self.resolve(acc);
        let Some(lit) = IdentityLiteral::for_accumulator(id, &acc) else { return false };
        let instance_types: Vec<DType> = match acc {
            Ty::Param(p) => {
                if matches!(lit, IdentityLiteral::Float { .. }) && !self.bound_implies(p, Bound::Float) {
                    let name = self.item.generics[p as usize].name.text.clone();
                    self.diags.error(
                        id.span,
                        format!("a float identity for `{name}`, which may be an integer type: bound `{name}` by `Float`, or write an integer"),
                    );
                }
                self.item.instances.iter().filter_map(|inst| inst.get(p as usize).copied()).collect()
            }
            Ty::Scalar(d) => vec![d],
            _ => unreachable!("for_accumulator admits generic parameters and half types only"),
        };
        // The literal's expressions are of the accumulator type (the back end converts).
        set_types(self, id, &acc);
        for d in instance_types {
            if let Some(why) = lit.unrepresentable(d) {
                let shown = lit.to_string();
                self.diags.error(id.span, format!("the identity `{shown}` cannot be represented in `{d}` (an instance of the accumulator): {why}; change the identity or the instances"));
            }
        }
        true
    }
}

fn set_types(cx: &mut Checker<'_, '_>, e: &Expr, t: &Ty) {
    cx.exprs[e.id.0 as usize] = Some(t.clone());
    if let ExprKind::Unary(_, inner) = &e.kind {
        set_types(cx, inner, t);
    }
}

impl std::fmt::Display for IdentityLiteral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            IdentityLiteral::Int { value, negated } => write!(f, "{}{value}", if negated { "-" } else { "" }),
            IdentityLiteral::Float { value, negated } => write!(f, "{}{value:?}", if negated { "-" } else { "" }),
        }
    }
}
