//! The built-in elementwise kernels of NumPy's mathematical ufuncs beyond the first few (issue
//! 36): trigonometric and hyperbolic functions, rounding, exponents and logarithms, the
//! floating-point functions (`signbit`, `copysign`, `ldexp`, `frexp`, `nextafter`, `modf`) and
//! the arithmetic of NumPy's names (`power`, `floor_divide`, `remainder`, `divmod`, `sign`,
//! NaN-propagating `maximum`/`minimum`, ...). A module of the runtime (`ops` includes it as
//! `math_kernels`), written with cuprum's own macros like `elementwise.rs`.
//!
//! Semantics are NumPy's where the kernel language can express them, written out below where
//! they need more than one operation (`floor_divide` and `remainder` are NumPy's `npy_divmod`,
//! `rint` rounds half to even, `logaddexp` is NumPy's formula); integers wrap as Rust's do
//! (docs/semantics.md). Math functions are the device's (`tan`, `arcsin`, ...: CUDA's on a GPU,
//! the host's on the CPU device; they may differ in the last bits).
//!
//! Precompiled instances (the built-ins' byte budget, docs/building.md): f32 of the rounding
//! functions (`floor`, `ceil`, `trunc`, `rint`), `square`, `sign`, `power` and NumPy's `maximum`/
//! `minimum`, and the two concrete `nextafter` kernels; every other kernel and dtype is compiled
//! by NVRTC at first use and kept in the disk cache (`cuprum audit` lists them).

use crate::lang::prelude::*;
use cuprum_macros::{device, elementwise};

// ---- trigonometric and hyperbolic ---------------------------------------------------------

#[elementwise(crate = crate, instances = [])]
pub fn tan<T: Float>(x: T) -> T {
    x.tan()
}

#[elementwise(crate = crate, instances = [])]
pub fn arcsin<T: Float>(x: T) -> T {
    x.asin()
}

#[elementwise(crate = crate, instances = [])]
pub fn arccos<T: Float>(x: T) -> T {
    x.acos()
}

#[elementwise(crate = crate, instances = [])]
pub fn arctan<T: Float>(x: T) -> T {
    x.atan()
}

/// The angle of the point `(x, y)`: `atan2(y, x)`.
#[elementwise(crate = crate, instances = [])]
pub fn arctan2<T: Float>(y: T, x: T) -> T {
    y.atan2(x)
}

#[elementwise(crate = crate, instances = [])]
pub fn hypot<T: Float>(x: T, y: T) -> T {
    x.hypot(y)
}

#[elementwise(crate = crate, instances = [])]
pub fn deg2rad<T: Float>(x: T) -> T {
    x.to_radians()
}

#[elementwise(crate = crate, instances = [])]
pub fn rad2deg<T: Float>(x: T) -> T {
    x.to_degrees()
}

#[elementwise(crate = crate, instances = [])]
pub fn sinh<T: Float>(x: T) -> T {
    x.sinh()
}

#[elementwise(crate = crate, instances = [])]
pub fn cosh<T: Float>(x: T) -> T {
    x.cosh()
}

#[elementwise(crate = crate, instances = [])]
pub fn arcsinh<T: Float>(x: T) -> T {
    x.asinh()
}

#[elementwise(crate = crate, instances = [])]
pub fn arccosh<T: Float>(x: T) -> T {
    x.acosh()
}

#[elementwise(crate = crate, instances = [])]
pub fn arctanh<T: Float>(x: T) -> T {
    x.atanh()
}

// ---- rounding -----------------------------------------------------------------------------

/// Rounds to the nearest integer, half to even (NumPy's `rint`): `round` (half away from zero),
/// corrected at an exact half. `x * 0.5` is exact and its `round` is the even neighbour's half.
#[elementwise(crate = crate, instances = [f32])]
pub fn rint<T: Float>(x: T) -> T {
    let r = x.round();
    let half = T::from_f64(0.5);
    if (r - x).abs() == half { (x * half).round() * T::from_f64(2.0) } else { r }
}

#[elementwise(crate = crate, instances = [f32])]
pub fn floor<T: Float>(x: T) -> T {
    x.floor()
}

#[elementwise(crate = crate, instances = [f32])]
pub fn ceil<T: Float>(x: T) -> T {
    x.ceil()
}

#[elementwise(crate = crate, instances = [f32])]
pub fn trunc<T: Float>(x: T) -> T {
    x.trunc()
}

// ---- exponents and logarithms -------------------------------------------------------------

#[elementwise(crate = crate, instances = [])]
pub fn expm1<T: Float>(x: T) -> T {
    x.exp_m1()
}

#[elementwise(crate = crate, instances = [])]
pub fn exp2<T: Float>(x: T) -> T {
    x.exp2()
}

#[elementwise(crate = crate, instances = [])]
pub fn log10<T: Float>(x: T) -> T {
    x.log10()
}

#[elementwise(crate = crate, instances = [])]
pub fn log2<T: Float>(x: T) -> T {
    x.log2()
}

#[elementwise(crate = crate, instances = [])]
pub fn log1p<T: Float>(x: T) -> T {
    x.ln_1p()
}

/// `ln(e^x + e^y)` without overflow (NumPy's formula: `x + ln 2` when `x == y`, which keeps
/// infinities of one sign; else the larger plus `ln_1p(e^-|x - y|)`; a NaN difference is NaN).
/// Written without branches on the data (the larger by `max`, the cases by selects): a GPU
/// would otherwise run both of NumPy's branches in every warp of random data (half the time
/// of the function).
#[elementwise(crate = crate, instances = [])]
pub fn logaddexp<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    let r = x.max(y) + (-d.abs()).exp().ln_1p();
    let s = if d.is_nan() { d } else { r };
    if x == y { x + T::from_f64(std::f64::consts::LN_2) } else { s }
}

/// `log2(2^x + 2^y)`, as `logaddexp` in base 2 (`log2(1 + v)` is `ln_1p(v) * log2(e)`).
#[elementwise(crate = crate, instances = [])]
pub fn logaddexp2<T: Float>(x: T, y: T) -> T {
    let zero = T::zero();
    let log2_e = T::from_f64(std::f64::consts::LOG2_E);
    if x == y {
        x + T::one()
    } else {
        let d = x - y;
        if d > zero {
            x + log2_e * (-d).exp2().ln_1p()
        } else if d <= zero {
            y + log2_e * d.exp2().ln_1p()
        } else {
            d
        }
    }
}

// ---- floating-point functions -------------------------------------------------------------

/// Whether the sign bit is set (`-0.0` and a negative NaN included).
#[elementwise(crate = crate, instances = [])]
pub fn signbit<T: Float>(x: T) -> bool {
    x.is_sign_negative()
}

/// The magnitude of `x` with the sign of `s`.
#[elementwise(crate = crate, instances = [])]
pub fn copysign<T: Float>(x: T, s: T) -> T {
    x.copysign(s)
}

/// `x * 2^n`, rounded once (musl's `scalbn`, in `f64`: exact for the narrower types until their
/// single rounding; for `f64` the factor is applied in at most three exact steps).
#[elementwise(crate = crate, instances = [])]
pub fn ldexp<T: Float>(x: T, n: i32) -> T {
    let mut y = x.to_f64();
    let mut k = n;
    if k > 1023 {
        y *= f64::from_bits(0x7fe0_0000_0000_0000);
        k -= 1023;
        if k > 1023 {
            y *= f64::from_bits(0x7fe0_0000_0000_0000);
            k -= 1023;
            if k > 1023 {
                k = 1023;
            }
        }
    } else if k < -1022 {
        // 2^-1022 * 2^53: the result stays normal until the last multiplication.
        y *= f64::from_bits(0x0360_0000_0000_0000);
        k += 969;
        if k < -1022 {
            y *= f64::from_bits(0x0360_0000_0000_0000);
            k += 969;
            if k < -1022 {
                k = -1022;
            }
        }
    }
    T::from_f64(y * f64::from_bits(((1023 + k) as u64) << 52))
}

/// `x = m * 2^e` with `|m|` in `[0.5, 1)`: `(m, e)`; `(x, 0)` for zeros, infinities and NaN.
#[elementwise(crate = crate, instances = [])]
pub fn frexp<T: Float>(x: T) -> (T, i32) {
    let v = x.to_f64();
    if v == 0.0 || !v.is_finite() {
        (x, 0)
    } else {
        let mut b = v.to_bits();
        let mut e = ((b >> 52) & 0x7ff) as i32;
        let mut adjust = 0;
        if e == 0 {
            // A subnormal f64: scaled by 2^64 into the normal range first.
            b = (v * f64::from_bits(0x43f0_0000_0000_0000)).to_bits();
            e = ((b >> 52) & 0x7ff) as i32;
            adjust = -64;
        }
        let m = f64::from_bits((b & 0x800f_ffff_ffff_ffff) | 0x3fe0_0000_0000_0000);
        (T::from_f64(m), e - 1022 + adjust)
    }
}

/// The next `f32` after `x` towards `y` (C's `nextafter`: `y` when equal, NaN when either is).
#[elementwise(crate = crate)]
pub fn nextafter_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x == y {
        y
    } else if x == 0.0 {
        if y > 0.0 { f32::from_bits(1) } else { f32::from_bits(0x8000_0001) }
    } else {
        let b = x.to_bits();
        if (y > x) == (x > 0.0) { f32::from_bits(b + 1) } else { f32::from_bits(b - 1) }
    }
}

/// The next `f64` after `x` towards `y`.
#[elementwise(crate = crate)]
pub fn nextafter_f64(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        x + y
    } else if x == y {
        y
    } else if x == 0.0 {
        if y > 0.0 { f64::from_bits(1) } else { f64::from_bits(0x8000_0000_0000_0001) }
    } else {
        let b = x.to_bits();
        if (y > x) == (x > 0.0) { f64::from_bits(b + 1) } else { f64::from_bits(b - 1) }
    }
}

/// `(fractional part, integral part)`, both with the sign of `x` (C's `modf`: `(±0, ±inf)` for
/// an infinity).
#[elementwise(crate = crate, instances = [])]
pub fn modf<T: Float>(x: T) -> (T, T) {
    let i = x.trunc();
    let f = if x.is_infinite() { T::zero() } else { x - i };
    (f.copysign(x), i)
}

// ---- arithmetic ---------------------------------------------------------------------------

/// `1 / x`; for integers Rust's division (`1 / x` truncated: 0 unless `x` is 1 or -1; 0 for 0).
#[elementwise(crate = crate, instances = [])]
pub fn reciprocal<T: Number>(x: T) -> T {
    T::one() / x
}

/// `x * x` (integers wrap).
#[elementwise(crate = crate, instances = [f32])]
pub fn square<T: Number>(x: T) -> T {
    x * x
}

/// `x^y` of `f64` (`powf`; `power_narrow` takes the other floats).
#[elementwise(crate = crate, instances = [])]
pub fn power_float<T: Float>(x: T, y: T) -> T {
    x.powf(y)
}

/// `x^y` of `f32`, `f16` and `bf16` (`powf`, in `f32`), compiled for four resident blocks of 256
/// threads (64 registers; CUDA's `powf` is about 82 instructions an element): on an H200 2^28
/// `f32` ran at 0.84 of copy uncapped and 0.90 capped. `f64` keeps `power_float` without the
/// cap: capped, its spills sit on the hot path and it fell from 0.53 to 0.17.
#[elementwise(crate = crate, instances = [f32], max_threads = 256, min_blocks = 4)]
pub fn power_narrow<T: Float>(x: T, y: T) -> T {
    x.powf(y)
}

/// `x^y` of integers by squaring, wrapping. A negative `y` (an error in NumPy) gives the
/// truncated value of `1 / x^-y`: 1 for `x == 1`, ±1 for `x == -1`, else 0.
#[elementwise(crate = crate, instances = [])]
pub fn power_int<T: Int>(x: T, y: T) -> T {
    let zero = T::zero();
    let one = T::one();
    if y < zero {
        if x == one {
            one
        } else if x == zero - one {
            if (y & one) == one { x } else { one }
        } else {
            zero
        }
    } else {
        let mut r = one;
        let mut b = x;
        let mut e = y;
        while e > zero {
            if (e & one) == one {
                r *= b;
            }
            b *= b;
            e >>= 1;
        }
        r
    }
}

/// Floored division of integers: the quotient rounded towards negative infinity; by zero 0
/// (NumPy's result, without its warning); `MIN // -1` wraps to `MIN`.
#[elementwise(crate = crate, instances = [])]
pub fn floor_divide_int<T: Int>(x: T, y: T) -> T {
    let zero = T::zero();
    let q = x / y;
    let r = x % y;
    if r != zero && ((r < zero) != (y < zero)) { q - T::one() } else { q }
}

/// Floored remainder of integers (the sign of `y`; Python's `%`); by zero 0.
#[elementwise(crate = crate, instances = [])]
pub fn remainder_int<T: Int>(x: T, y: T) -> T {
    let zero = T::zero();
    let r = x % y;
    if r != zero && ((r < zero) != (y < zero)) { r + y } else { r }
}

/// Both of `floor_divide_int` and `remainder_int`.
#[elementwise(crate = crate, instances = [])]
pub fn divmod_int<T: Int>(x: T, y: T) -> (T, T) {
    let zero = T::zero();
    let q = x / y;
    let r = x % y;
    if r != zero && ((r < zero) != (y < zero)) { (q - T::one(), r + y) } else { (q, r) }
}

/// `x % y` (C's `fmod`, exact: `x - q y` with `q` the quotient truncated toward zero) in a few
/// operations: `q = trunc(x / y)`, then `r = x - q y` in one fused multiply-add, which is exact
/// because the true remainder is representable. When the rounded quotient reached an integer the
/// exact one is just below, `r` has the wrong sign and `q` is one step toward zero. Quotients of
/// `1 / EPSILON` or more (or infinite or NaN operands, a zero `y`) take the math library's `fmod`,
/// as does any `r` the two steps leave out of range, so the result is always `fmod`'s: the same
/// bits on every device. (The library's `fmodf` loops over the exponent difference: about half
/// of `floor_divide`'s time on the H200.) Returns the remainder and that `q` (`x - q y` is the
/// remainder exactly), or infinity for `q` where the library computed the remainder.
#[device(crate = crate)]
fn fmod_quotient<T: Float>(x: T, y: T) -> (T, T) {
    let zero = T::zero();
    let library = T::from_f64(f64::INFINITY);
    let mut q = (x / y).trunc();
    if !(q.abs() < T::one() / T::epsilon()) {
        return (x % y, library);
    }
    let mut r = (-q).mul_add(y, x);
    if r != zero && (r < zero) != (x < zero) {
        q -= q.signum();
        r = (-q).mul_add(y, x);
    }
    if !(r.abs() < y.abs()) || (r != zero && (r < zero) != (x < zero)) {
        (x % y, library)
    } else if r == zero {
        (zero.copysign(x), q)
    } else {
        (r, q)
    }
}

/// `x % y`, exactly C's `fmod` ([`fmod_quotient`]'s remainder).
#[device(crate = crate)]
fn fmod_fast<T: Float>(x: T, y: T) -> T {
    let (r, _) = fmod_quotient(x, y);
    r
}

/// Floored division of floats: NumPy's `npy_divmod` (the quotient from the truncated remainder,
/// corrected to the floor and to the nearest integer; `x / y` when `y` is zero).
///
/// Where `fmod_quotient`'s quotient `q` is below 2^21 in magnitude, NumPy's `(x - m) / y` (`m`
/// the remainder) is `q` within two roundings, less than 1/4 from it, so NumPy's nearest integer
/// is `q` itself: the result is `q`, less one when the remainder's sign differs from `y`'s, and
/// a zero takes the sign of `x / y`. That skips a second division (and the rounding to an
/// integer), with the same bits; larger quotients (and the library's remainders, whose `q` is
/// infinite) take NumPy's steps.
///
/// Compiled for four resident blocks of 256 threads (64 registers): without the cap it takes 71,
/// three blocks fit, and the H200 ran it at 0.94 of copy (f32) and 0.86 (f64); with it, 1.03 and
/// 1.01 (a few bytes of spill, in the library's `fmod` path that random operands rarely take).
#[elementwise(crate = crate, instances = [], max_threads = 256, min_blocks = 4)]
pub fn floor_divide_float<T: Float>(x: T, y: T) -> T {
    let zero = T::zero();
    if y == zero {
        x / y
    } else {
        let (m, q) = fmod_quotient(x, y);
        let below = m != zero && ((y < zero) != (m < zero));
        if q.abs() < T::from_f64(2097152.0) {
            let div = if below { q - T::one() } else { q };
            // `x * y` has the sign of `x / y` and is not NaN here (`x` and `y` are finite).
            if div != zero { div } else { zero.copysign(x * y) }
        } else {
            let mut div = (x - m) / y;
            if below {
                div -= T::one();
            }
            if div != zero {
                let f = div.floor();
                if div - f > T::from_f64(0.5) { f + T::one() } else { f }
            } else {
                zero.copysign(x / y)
            }
        }
    }
}

/// Floored remainder of floats (the sign of `y`): NumPy's `npy_divmod`; NaN when `y` is zero.
#[elementwise(crate = crate, instances = [])]
pub fn remainder_float<T: Float>(x: T, y: T) -> T {
    let zero = T::zero();
    let m = fmod_fast(x, y);
    if y == zero {
        m
    } else if m != zero {
        if (y < zero) != (m < zero) { m + y } else { m }
    } else {
        zero.copysign(y)
    }
}

/// Both of `floor_divide_float` and `remainder_float`.
#[elementwise(crate = crate, instances = [])]
pub fn divmod_float<T: Float>(x: T, y: T) -> (T, T) {
    let zero = T::zero();
    let m = fmod_fast(x, y);
    if y == zero {
        (x / y, m)
    } else {
        let mut div = (x - m) / y;
        let mut r = m;
        if m != zero {
            if (y < zero) != (m < zero) {
                r = m + y;
                div -= T::one();
            }
        } else {
            r = zero.copysign(y);
        }
        if div != zero {
            let f = div.floor();
            (if div - f > T::from_f64(0.5) { f + T::one() } else { f }, r)
        } else {
            (zero.copysign(x / y), r)
        }
    }
}

/// -1, 0 or 1 by the sign of `x`; 0 for both zeros, NaN for NaN (NumPy's `sign`).
#[elementwise(crate = crate, instances = [f32])]
pub fn sign_float<T: Float>(x: T) -> T {
    let zero = T::zero();
    if x > zero {
        T::one()
    } else if x < zero {
        -T::one()
    } else if x == zero {
        zero
    } else {
        x
    }
}

/// -1, 0 or 1 by the sign of `x` (unsigned: 0 or 1).
#[elementwise(crate = crate, instances = [])]
pub fn sign_int<T: Int>(x: T) -> T {
    let zero = T::zero();
    if x > zero {
        T::one()
    } else if x < zero {
        zero - T::one()
    } else {
        zero
    }
}

/// The larger of each pair, NaN when either is NaN (NumPy's `maximum` of floats; `x` when
/// equal, so `maximum(-0.0, 0.0)` is `-0.0` as in NumPy's scalar loop).
#[elementwise(crate = crate, instances = [f32])]
pub fn maximum_float<T: Float>(x: T, y: T) -> T {
    if x >= y || x.is_nan() { x } else { y }
}

/// The smaller of each pair, NaN when either is NaN (NumPy's `minimum` of floats).
#[elementwise(crate = crate, instances = [f32])]
pub fn minimum_float<T: Float>(x: T, y: T) -> T {
    if x <= y || x.is_nan() { x } else { y }
}
