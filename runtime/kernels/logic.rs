//! The built-in elementwise kernels of NumPy's logic functions (issue 36): `isfinite`, `isinf`,
//! `isnan`, and `logical_and`/`or`/`xor`/`not`, whose `bool` kernels are also the bitwise
//! operators of `bool` arrays. A module of the runtime (`ops` includes it as `logic_kernels`).
//! The comparisons (`greater`, `equal`, ...) are `elementwise.rs`'s `gt`, `eq`, ...
//!
//! Precompiled instances: f32 for the float predicates and the `bool` kernels; the logical
//! functions of numbers (`x != 0`) are compiled by NVRTC at first use.

use crate::lang::prelude::*;
use cuprum_macros::elementwise;

// ---- float predicates ---------------------------------------------------------------------

#[elementwise(crate = crate, instances = [f32])]
pub fn isnan<T: Float>(x: T) -> bool {
    x.is_nan()
}

#[elementwise(crate = crate, instances = [f32])]
pub fn isinf<T: Float>(x: T) -> bool {
    x.is_infinite()
}

#[elementwise(crate = crate, instances = [f32])]
pub fn isfinite<T: Float>(x: T) -> bool {
    x.is_finite()
}

// ---- logical operations of bool -----------------------------------------------------------

#[elementwise(crate = crate)]
pub fn and_bool(x: bool, y: bool) -> bool {
    x && y
}

#[elementwise(crate = crate)]
pub fn or_bool(x: bool, y: bool) -> bool {
    x || y
}

#[elementwise(crate = crate)]
pub fn xor_bool(x: bool, y: bool) -> bool {
    x != y
}

#[elementwise(crate = crate)]
pub fn not_bool(x: bool) -> bool {
    !x
}

// ---- logical operations of numbers (truth is "non-zero") ----------------------------------

#[elementwise(crate = crate, instances = [])]
pub fn logical_and_number<T: Number>(x: T, y: T) -> bool {
    x != T::zero() && y != T::zero()
}

#[elementwise(crate = crate, instances = [])]
pub fn logical_or_number<T: Number>(x: T, y: T) -> bool {
    x != T::zero() || y != T::zero()
}

#[elementwise(crate = crate, instances = [])]
pub fn logical_xor_number<T: Number>(x: T, y: T) -> bool {
    (x != T::zero()) != (y != T::zero())
}

#[elementwise(crate = crate, instances = [])]
pub fn logical_not_number<T: Number>(x: T) -> bool {
    x == T::zero()
}
