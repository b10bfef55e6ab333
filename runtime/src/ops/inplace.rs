//! The in-place forms of the arithmetic, bitwise and shift operators: `a.add_assign(&b)?` is
//! NumPy's `a += b`. Rust's `AddAssign` & co. cannot return an error, so these are methods
//! returning `Result<()>`; the other operand (an array or a scalar) broadcasts to `self`'s shape,
//! which does not change (a shape `other` would widen it to is an error, and nothing is written).
//! A broadcast view (stride 0) as `self` is an error too.
//!
//! When `other` is a view of `self`'s memory in another layout (`a[1:] += a[:-1]`, `a += a.T`),
//! it is copied first, so that every element reads `other` as it was before the operation
//! (NumPy's result); `a += a` needs no copy.

use std::sync::Arc;

use super::arithmetic::{ArithOp, kernel_of};
use super::bitwise::{BitOp, int_kernel};
use super::{Builtin, builtin, launch_into};
use crate::array::Array;
use crate::elementwise::{Arg, Input};
use crate::error::Result;
use crate::{DType, Int, Number, Real, Scalar};

/// Whether `o` reads memory of `x`'s buffer in another layout than `x`'s own (which would let an
/// element be read after the launch wrote it).
fn overlaps_differently<T: Scalar>(x: &Array<T>, o: &Array<T>) -> bool {
    Arc::ptr_eq(x.buffer(), o.buffer())
        && !(x.offset() == o.offset() && x.shape() == o.shape() && x.strides() == o.strides())
}

/// `x = b(x, other)` elementwise, `other` broadcast to `x`'s shape; `b` generic over `T`.
fn in_place<T: Scalar>(b: Builtin, x: &mut Array<T>, other: Input<'_, T>) -> Result<()> {
    in_place_as(b, &[T::DTYPE], x, other)
}

/// [`in_place`] of kernel instance `instance` (empty for a kernel without generic parameters).
fn in_place_as<T: Scalar>(b: Builtin, instance: &[DType], x: &mut Array<T>, other: Input<'_, T>) -> Result<()> {
    let copied;
    let other = match other {
        Input::Array(o) if overlaps_differently(x, o) => {
            copied = o.copy()?;
            Input::Array(&copied)
        }
        o => o,
    };
    // A second handle of the same memory and layout: the kernel's input side.
    let input = x.clone();
    launch_into(b, instance, &[Arg::input(&input), other.arg(), Arg::output(x)])
}

impl<T: Number> Array<T> {
    /// `self += other` (NumPy's in-place `+`); integers wrap.
    pub fn add_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Add, T::DTYPE), self, other.into())
    }
    /// `self -= other`; integers wrap.
    pub fn sub_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Sub, T::DTYPE), self, other.into())
    }
    /// `self *= other`; integers wrap.
    pub fn mul_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Mul, T::DTYPE), self, other.into())
    }
    /// `self /= other` (the operator `/`: integers truncate, by zero 0).
    pub fn div_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Div, T::DTYPE), self, other.into())
    }
}

impl<T: Real> Array<T> {
    /// `self %= other` (the operator `%`: Rust's truncated remainder, NumPy's `fmod`).
    pub fn rem_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Rem, T::DTYPE), self, other.into())
    }
    /// `self **= other` ([`Array::power`]).
    pub fn pow_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Pow, T::DTYPE), self, other.into())
    }
    /// `self //= other` ([`Array::floor_divide`]).
    pub fn floor_divide_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::FloorDiv, T::DTYPE), self, other.into())
    }
    /// NumPy's `self %= other` ([`Array::remainder`]: floored).
    pub fn remainder_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(kernel_of(ArithOp::Remainder, T::DTYPE), self, other.into())
    }
}

impl<T: Int> Array<T> {
    /// `self &= other`.
    pub fn bitand_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(int_kernel(BitOp::And), self, other.into())
    }
    /// `self |= other`.
    pub fn bitor_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(int_kernel(BitOp::Or), self, other.into())
    }
    /// `self ^= other`.
    pub fn bitxor_assign<'a>(&mut self, other: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(int_kernel(BitOp::Xor), self, other.into())
    }
    /// `self <<= n` ([`Array::left_shift`]: the amount modulo the width).
    pub fn shl_assign<'a>(&mut self, n: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(int_kernel(BitOp::Shl), self, n.into())
    }
    /// `self >>= n` ([`Array::right_shift`]).
    pub fn shr_assign<'a>(&mut self, n: impl Into<Input<'a, T>>) -> Result<()> {
        in_place(int_kernel(BitOp::Shr), self, n.into())
    }
}

impl Array<bool> {
    /// `self &= other` (logical and).
    pub fn bitand_assign<'a>(&mut self, other: impl Into<Input<'a, bool>>) -> Result<()> {
        in_place_as(builtin!(logic::and_bool), &[], self, other.into())
    }
    /// `self |= other` (logical or).
    pub fn bitor_assign<'a>(&mut self, other: impl Into<Input<'a, bool>>) -> Result<()> {
        in_place_as(builtin!(logic::or_bool), &[], self, other.into())
    }
    /// `self ^= other` (logical xor).
    pub fn bitxor_assign<'a>(&mut self, other: impl Into<Input<'a, bool>>) -> Result<()> {
        in_place_as(builtin!(logic::xor_bool), &[], self, other.into())
    }
}
