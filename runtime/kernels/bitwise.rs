//! The built-in elementwise kernels of NumPy's binary operations on integers (issue 36):
//! `bitwise_and`/`or`/`xor`, `invert`, `left_shift`, `right_shift` (the operators `& | ^ ! << >>`
//! of integer arrays; `bool` arrays use `logic.rs`'s kernels). A module of the runtime (`ops`
//! includes it as `bitwise_kernels`).
//!
//! Shifts are the kernel language's (docs/semantics.md): the amount is taken modulo the width
//! (Rust's `wrapping_shl`/`wrapping_shr`), where NumPy gives 0 (or -1 for a negative value
//! shifted right) for an amount of the width or more; `>>` of signed integers is arithmetic.
//!
//! Precompiled instances: i64 (NumPy's default integer) of `&`, `|` and `^`; `invert`, the shifts
//! and every other integer type are compiled by NVRTC at first use.

use crate::lang::prelude::*;
use cuprum_macros::{device, elementwise};

#[elementwise(crate = crate, instances = [i64])]
pub fn bitwise_and<T: Int>(x: T, y: T) -> T {
    x & y
}

#[elementwise(crate = crate, instances = [i64])]
pub fn bitwise_or<T: Int>(x: T, y: T) -> T {
    x | y
}

#[elementwise(crate = crate, instances = [i64])]
pub fn bitwise_xor<T: Int>(x: T, y: T) -> T {
    x ^ y
}

#[elementwise(crate = crate, instances = [])]
pub fn invert<T: Int>(x: T) -> T {
    !x
}

#[elementwise(crate = crate, instances = [])]
pub fn left_shift<T: Int>(x: T, n: T) -> T {
    x << amount(n)
}

#[elementwise(crate = crate, instances = [])]
pub fn right_shift<T: Int>(x: T, n: T) -> T {
    x >> amount(n)
}

/// A shift amount of `T` modulo `T`'s width, as the `u32` the shift operators take (the width is
/// the number of ones of `!0`; the masked amount converts exactly through `f64`).
#[device(crate = crate)]
pub fn amount<T: Int>(n: T) -> u32 {
    let bits = (!T::zero()).count_ones();
    (n & T::from_i64((bits - 1) as i64)).to_f64() as u32
}
