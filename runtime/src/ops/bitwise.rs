//! NumPy's binary operations: `bitwise_and`/`or`/`xor`, `invert`, `left_shift`, `right_shift` as
//! methods, and the operators `& | ^ ! << >>`, of integer arrays (and `& | ^ !` of `bool` arrays,
//! the logical operations). Like `+`, each operator returns a `Result` and broadcasts; the right
//! side is an array or a scalar of the element type.
//!
//! Shifts take the amount modulo the width (Rust's `wrapping_shl`/`wrapping_shr`; docs/
//! semantics.md): `x << 65` of an `i64` is `x << 1`, where NumPy gives 0 (and `x >> n` of a
//! negative `x`, -1) for an amount of the width or more. A negative amount is taken modulo the
//! width the same way. `>>` of signed integers is arithmetic (the sign is kept).

use std::ops::{BitAnd, BitOr, BitXor, Not, Shl, Shr};

use super::{Builtin, binary, binary_concrete, builtin, unary, unary_concrete};
use crate::array::Array;
use crate::elementwise::Input;
use crate::error::Result;
use crate::Int;

/// The bitwise operations, binary and unary.
#[derive(Clone, Copy)]
pub(super) enum BitOp {
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// The kernel of `op` for integer operands.
pub(super) fn int_kernel(op: BitOp) -> Builtin {
    match op {
        BitOp::And => builtin!(bitwise::bitwise_and),
        BitOp::Or => builtin!(bitwise::bitwise_or),
        BitOp::Xor => builtin!(bitwise::bitwise_xor),
        BitOp::Shl => builtin!(bitwise::left_shift),
        BitOp::Shr => builtin!(bitwise::right_shift),
    }
}

impl<T: Int> Array<T> {
    /// `self & other` elementwise (NumPy's `bitwise_and`; the operator `&`), broadcast; `other`
    /// an array or a scalar.
    pub fn bitwise_and<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(int_kernel(BitOp::And), self, other)
    }
    /// `self | other` elementwise (NumPy's `bitwise_or`; the operator `|`).
    pub fn bitwise_or<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(int_kernel(BitOp::Or), self, other)
    }
    /// `self ^ other` elementwise (NumPy's `bitwise_xor`; the operator `^`).
    pub fn bitwise_xor<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(int_kernel(BitOp::Xor), self, other)
    }
    /// `!x` elementwise, every bit flipped (NumPy's `invert` and `bitwise_not`, Python's `~`;
    /// the operator `!`).
    #[doc(alias = "bitwise_not")]
    pub fn invert(&self) -> Result<Array<T>> {
        unary(builtin!(bitwise::invert), self)
    }
    /// `self << n` elementwise (NumPy's `left_shift`; the operator `<<`): the amount modulo the
    /// width, where NumPy gives 0 for an amount of the width or more (see the module).
    pub fn left_shift<'a>(&self, n: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(int_kernel(BitOp::Shl), self, n)
    }
    /// `self >> n` elementwise (NumPy's `right_shift`; the operator `>>`): arithmetic for signed
    /// integers, the amount modulo the width (NumPy: 0 or -1 for the width or more).
    pub fn right_shift<'a>(&self, n: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(int_kernel(BitOp::Shr), self, n)
    }
}

impl Array<bool> {
    /// `self AND other` elementwise (NumPy's `bitwise_and` of `bool`s, [`Array::logical_and`]).
    pub fn bitwise_and<'a>(&self, other: impl Into<Input<'a, bool>>) -> Result<Array<bool>> {
        binary_concrete(builtin!(logic::and_bool), self, other)
    }
    /// `self OR other` elementwise (NumPy's `bitwise_or` of `bool`s).
    pub fn bitwise_or<'a>(&self, other: impl Into<Input<'a, bool>>) -> Result<Array<bool>> {
        binary_concrete(builtin!(logic::or_bool), self, other)
    }
    /// `self XOR other` elementwise (NumPy's `bitwise_xor` of `bool`s).
    pub fn bitwise_xor<'a>(&self, other: impl Into<Input<'a, bool>>) -> Result<Array<bool>> {
        binary_concrete(builtin!(logic::xor_bool), self, other)
    }
    /// `NOT x` elementwise (NumPy's `invert` of `bool`s: a logical not, not `!1`).
    #[doc(alias = "bitwise_not")]
    pub fn invert(&self) -> Result<Array<bool>> {
        unary_concrete(builtin!(logic::not_bool), self)
    }
}

/// The six forms of a binary operator (`&a op &b`, `&a op b`, `a op &b`, `a op b`, `&a op s`,
/// `a op s`) for the arrays of `$T` (generic with the bounds in brackets, or concrete), launching
/// `$kernel` through `$binary` (`binary`, or `binary_concrete` for a kernel without generics).
macro_rules! bit_op {
    ([$($gen:tt)*] $T:ty, $Trait:ident, $method:ident, $binary:ident($kernel:expr)) => {
        impl<'b, $($gen)*> $Trait<&'b Array<$T>> for &Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: &'b Array<$T>) -> Result<Array<$T>> {
                $binary($kernel, self, rhs)
            }
        }
        impl<$($gen)*> $Trait<Array<$T>> for &Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: Array<$T>) -> Result<Array<$T>> {
                $binary($kernel, self, &rhs)
            }
        }
        impl<'b, $($gen)*> $Trait<&'b Array<$T>> for Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: &'b Array<$T>) -> Result<Array<$T>> {
                $binary($kernel, &self, rhs)
            }
        }
        impl<$($gen)*> $Trait<Array<$T>> for Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: Array<$T>) -> Result<Array<$T>> {
                $binary($kernel, &self, &rhs)
            }
        }
        impl<$($gen)*> $Trait<$T> for &Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: $T) -> Result<Array<$T>> {
                $binary($kernel, self, rhs)
            }
        }
        impl<$($gen)*> $Trait<$T> for Array<$T> {
            type Output = Result<Array<$T>>;
            fn $method(self, rhs: $T) -> Result<Array<$T>> {
                $binary($kernel, &self, rhs)
            }
        }
    };
}

bit_op!([T: Int] T, BitAnd, bitand, binary(int_kernel(BitOp::And)));
bit_op!([T: Int] T, BitOr, bitor, binary(int_kernel(BitOp::Or)));
bit_op!([T: Int] T, BitXor, bitxor, binary(int_kernel(BitOp::Xor)));
bit_op!([T: Int] T, Shl, shl, binary(int_kernel(BitOp::Shl)));
bit_op!([T: Int] T, Shr, shr, binary(int_kernel(BitOp::Shr)));
bit_op!([] bool, BitAnd, bitand, binary_concrete(builtin!(logic::and_bool)));
bit_op!([] bool, BitOr, bitor, binary_concrete(builtin!(logic::or_bool)));
bit_op!([] bool, BitXor, bitxor, binary_concrete(builtin!(logic::xor_bool)));

impl<T: Int> Not for &Array<T> {
    type Output = Result<Array<T>>;
    /// `!x`: every bit flipped (NumPy's `invert`, Python's `~`).
    fn not(self) -> Result<Array<T>> {
        self.invert()
    }
}

impl<T: Int> Not for Array<T> {
    type Output = Result<Array<T>>;
    fn not(self) -> Result<Array<T>> {
        self.invert()
    }
}

impl Not for &Array<bool> {
    type Output = Result<Array<bool>>;
    /// `!x`: the logical not.
    fn not(self) -> Result<Array<bool>> {
        self.invert()
    }
}

impl Not for Array<bool> {
    type Output = Result<Array<bool>>;
    fn not(self) -> Result<Array<bool>> {
        self.invert()
    }
}
