//! Comparisons and NumPy's logic functions as methods of `Array`: `lt`/`less`, `le`/
//! `less_equal`, `gt`/`greater`, `ge`/`greater_equal`, `eq`/`equal`, `ne`/`not_equal`,
//! `isnan`/`isinf`/`isfinite`, and `logical_and`/`or`/`xor`/`not`. Every result is a `bool` array.

use super::{Builtin, binary, binary_concrete, builtin, unary, unary_concrete};
use crate::array::Array;
use crate::elementwise::Input;
use crate::error::Result;
use crate::{DType, Float, Number, Real, Scalar};

impl<T: Real> Array<T> {
    /// `self < other` elementwise (broadcast; `other` an array or a scalar).
    pub fn lt<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(lt), self, other)
    }
    /// `self <= other` elementwise.
    pub fn le<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(le), self, other)
    }
    /// `self > other` elementwise.
    pub fn gt<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(gt), self, other)
    }
    /// `self >= other` elementwise.
    pub fn ge<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(ge), self, other)
    }
    /// [`Array::lt`] (NumPy's name).
    pub fn less<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.lt(other)
    }
    /// [`Array::le`] (NumPy's name).
    pub fn less_equal<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.le(other)
    }
    /// [`Array::gt`] (NumPy's name).
    pub fn greater<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.gt(other)
    }
    /// [`Array::ge`] (NumPy's name).
    pub fn greater_equal<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.ge(other)
    }
}

impl<T: Number> Array<T> {
    /// `self == other` elementwise (broadcast; `other` an array or a scalar).
    pub fn eq<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(eq), self, other)
    }
    /// `self != other` elementwise.
    pub fn ne<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        binary(builtin!(ne), self, other)
    }
    /// [`Array::eq`] (NumPy's name).
    pub fn equal<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.eq(other)
    }
    /// [`Array::ne`] (NumPy's name).
    pub fn not_equal<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        self.ne(other)
    }
}

impl<T: Float> Array<T> {
    /// Whether each element is NaN.
    pub fn isnan(&self) -> Result<Array<bool>> {
        unary(builtin!(logic::isnan), self)
    }
    /// Whether each element is an infinity (of either sign).
    pub fn isinf(&self) -> Result<Array<bool>> {
        unary(builtin!(logic::isinf), self)
    }
    /// Whether each element is finite (neither infinite nor NaN).
    pub fn isfinite(&self) -> Result<Array<bool>> {
        unary(builtin!(logic::isfinite), self)
    }
}

/// A binary logical operation: its kernel for `bool` operands (no generic parameter) or for
/// numbers (truth is "non-zero").
fn logical2<'a, T: Scalar>(x: &Array<T>, y: impl Into<Input<'a, T>>, of_bool: Builtin, of_number: Builtin) -> Result<Array<bool>> {
    if T::DTYPE == DType::Bool { binary_concrete(of_bool, x, y) } else { binary(of_number, x, y) }
}

impl<T: Scalar> Array<T> {
    /// `self AND other` elementwise, a `bool` array (NumPy's `logical_and`; a number is true when
    /// non-zero), broadcast; `other` an array or a scalar. Complex numbers are taken as numbers.
    pub fn logical_and<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        logical2(self, other, builtin!(logic::and_bool), builtin!(logic::logical_and_number))
    }
    /// `self OR other` elementwise (NumPy's `logical_or`).
    pub fn logical_or<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        logical2(self, other, builtin!(logic::or_bool), builtin!(logic::logical_or_number))
    }
    /// `self XOR other` elementwise (NumPy's `logical_xor`).
    pub fn logical_xor<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<bool>> {
        logical2(self, other, builtin!(logic::xor_bool), builtin!(logic::logical_xor_number))
    }
    /// `NOT self` elementwise (NumPy's `logical_not`: true where the element is zero or false).
    pub fn logical_not(&self) -> Result<Array<bool>> {
        if T::DTYPE == DType::Bool {
            unary_concrete(builtin!(logic::not_bool), self)
        } else {
            unary(builtin!(logic::logical_not_number), self)
        }
    }
}
