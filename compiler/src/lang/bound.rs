//! The prelude traits a generic parameter of a kernel can be bounded by, and what each admits.

use cuprum_abi::dtype::DType;

/// The prelude traits a generic parameter can be bounded by (the strongest one given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bound {
    /// `Scalar`: any dtype; values can be copied and compared for equality.
    Scalar,
    /// `Number`: integers, floats, complex: `+ - * /`, `zero()`, `one()`, `from_f64`, `from_i64`.
    Number,
    /// `Real`: integers and floats: ordering, `min`, `max`, `to_f64`.
    Real,
    /// `Float`: f16, bf16, f32, f64: the float methods.
    Float,
    /// `Int`: the eight integer types: bitwise operators, shifts, `wrapping_*`.
    Int,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Scalar => "Scalar",
            Bound::Number => "Number",
            Bound::Real => "Real",
            Bound::Float => "Float",
            Bound::Int => "Int",
        }
    }
    /// Whether a dtype satisfies the bound.
    pub fn admits(self, d: DType) -> bool {
        match self {
            Bound::Scalar => true,
            Bound::Number => !d.is_bool(),
            Bound::Real => d.is_int() || d.is_float(),
            Bound::Float => d.is_float(),
            Bound::Int => d.is_int(),
        }
    }
    /// Whether `self` implies `other` (Float implies Real implies Number implies Scalar).
    pub fn implies(self, other: Bound) -> bool {
        use Bound::*;
        match (self, other) {
            (a, b) if a == b => true,
            (_, Scalar) => true,
            (Real | Float | Int, Number) => true,
            (Float | Int, Real) => true,
            _ => false,
        }
    }
}
