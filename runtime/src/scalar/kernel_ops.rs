//! The kernel language's arithmetic on the host, as the GPU does it (docs/semantics.md): integer
//! `+ - *` and negation wrap (in debug builds too), integer division and remainder by zero give 0
//! and `MIN / -1` wraps, shift amounts are masked to the type's width. Floats, `f16`/`bf16` and
//! complex numbers keep Rust's operators.
//!
//! The CPU device runs a kernel's body through a copy of it whose operators call these functions
//! (`#[elementwise]` writes it: `a + b` becomes `add(a, b)`, `x /= y` becomes
//! `div_assign(&mut x, y)`), so that the host computes what the GPU computes whatever the build
//! profile (docs/cpu.md).

use half::{bf16, f16};
use num_complex::Complex;

use super::fp8::{f8e4m3, f8e5m2};

/// A type with the kernel language's arithmetic operators.
pub trait KernelOps: Copy {
    /// `self + o` as a kernel computes it.
    fn k_add(self, o: Self) -> Self;
    /// `self - o` as a kernel computes it.
    fn k_sub(self, o: Self) -> Self;
    /// `self * o` as a kernel computes it.
    fn k_mul(self, o: Self) -> Self;
    /// `self / o` as a kernel computes it.
    fn k_div(self, o: Self) -> Self;
    /// `self % o` as a kernel computes it.
    fn k_rem(self, o: Self) -> Self;
    /// `-self` as a kernel computes it.
    fn k_neg(self) -> Self;
}

/// An integer with the kernel language's shifts (the amount masked to the width).
pub trait KernelShift: Copy {
    /// `self << amount` as a kernel computes it.
    fn k_shl(self, amount: u32) -> Self;
    /// `self >> amount` as a kernel computes it.
    fn k_shr(self, amount: u32) -> Self;
}

/// A shift amount of any integer type, as the `u32` the shift masks.
pub trait ShiftAmount: Copy {
    /// The amount converted with `as u32` (the shift masks it to the width anyway).
    fn amount(self) -> u32;
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl KernelOps for $t {
            #[inline(always)]
            fn k_add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn k_sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)]
            fn k_mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)]
            fn k_div(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_div(o) } }
            #[inline(always)]
            fn k_rem(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_rem(o) } }
            #[inline(always)]
            fn k_neg(self) -> Self { self.wrapping_neg() }
        }
        impl KernelShift for $t {
            #[inline(always)]
            fn k_shl(self, amount: u32) -> Self { self.wrapping_shl(amount) }
            #[inline(always)]
            fn k_shr(self, amount: u32) -> Self { self.wrapping_shr(amount) }
        }
        impl ShiftAmount for $t {
            #[inline(always)]
            fn amount(self) -> u32 { self as u32 }
        }
    )*};
}
int_ops!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! plain_ops {
    ($($t:ty),*) => {$(
        impl KernelOps for $t {
            #[inline(always)]
            fn k_add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn k_sub(self, o: Self) -> Self { self - o }
            #[inline(always)]
            fn k_mul(self, o: Self) -> Self { self * o }
            #[inline(always)]
            fn k_div(self, o: Self) -> Self { self / o }
            #[inline(always)]
            fn k_rem(self, o: Self) -> Self { self % o }
            #[inline(always)]
            fn k_neg(self) -> Self { -self }
        }
    )*};
}
plain_ops!(f32, f64, f16, bf16, Complex<f32>, Complex<f64>, f8e4m3, f8e5m2);

/// `a + b`.
#[inline(always)]
pub fn add<T: KernelOps>(a: T, b: T) -> T {
    a.k_add(b)
}
/// `a - b`.
#[inline(always)]
pub fn sub<T: KernelOps>(a: T, b: T) -> T {
    a.k_sub(b)
}
/// `a * b`.
#[inline(always)]
pub fn mul<T: KernelOps>(a: T, b: T) -> T {
    a.k_mul(b)
}
/// `a / b`.
#[inline(always)]
pub fn div<T: KernelOps>(a: T, b: T) -> T {
    a.k_div(b)
}
/// `a % b`.
#[inline(always)]
pub fn rem<T: KernelOps>(a: T, b: T) -> T {
    a.k_rem(b)
}
/// `-a`.
#[inline(always)]
pub fn neg<T: KernelOps>(a: T) -> T {
    a.k_neg()
}
/// `a << n`.
#[inline(always)]
pub fn shl<T: KernelShift, N: ShiftAmount>(a: T, n: N) -> T {
    a.k_shl(n.amount())
}
/// `a >> n`.
#[inline(always)]
pub fn shr<T: KernelShift, N: ShiftAmount>(a: T, n: N) -> T {
    a.k_shr(n.amount())
}

macro_rules! assign_ops {
    ($($name:ident = $op:ident),*) => {$(
        #[doc = concat!("`*p ", stringify!($op), "= v` (see [`", stringify!($op), "`]).")]
        #[inline(always)]
        pub fn $name<T: KernelOps>(p: &mut T, v: T) {
            *p = $op(*p, v);
        }
    )*};
}
assign_ops!(add_assign = add, sub_assign = sub, mul_assign = mul, div_assign = div, rem_assign = rem);

/// `*p <<= n`.
#[inline(always)]
pub fn shl_assign<T: KernelShift, N: ShiftAmount>(p: &mut T, n: N) {
    *p = shl(*p, n);
}
/// `*p >>= n`.
#[inline(always)]
pub fn shr_assign<T: KernelShift, N: ShiftAmount>(p: &mut T, n: N) {
    *p = shr(*p, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_divide_by_zero_to_zero() {
        assert_eq!(add(i32::MAX, 1), i32::MIN);
        assert_eq!(mul(200u8, 2), 144);
        assert_eq!(sub(0u64, 1), u64::MAX);
        assert_eq!(neg(i8::MIN), i8::MIN);
        assert_eq!(div(7i64, 0), 0);
        assert_eq!(rem(7u16, 0), 0);
        assert_eq!(div(i32::MIN, -1), i32::MIN);
        assert_eq!(rem(i32::MIN, -1), 0);
        assert_eq!(shl(1u32, 33u8), 2);
        assert_eq!(shr(-8i32, 1i64), -4);
        let mut x = 250u8;
        add_assign(&mut x, 10);
        assert_eq!(x, 4);
        assert!(div(1.0f32, 0.0).is_infinite());
        assert_eq!(rem(7.5f64, 2.0), 1.5);
        assert_eq!(mul(Complex::new(0.0f32, 1.0), Complex::new(0.0, 1.0)), Complex::new(-1.0, 0.0));
    }
}
