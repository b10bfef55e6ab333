//! The numeric traits of the kernel language (docs/kernel-language.md).
//!
//! These traits play two roles at once:
//!
//! - **Bounds the compiler understands.** A generic kernel `fn k<T: Float>(x: T) -> T` becomes a
//!   C++ template whose parameter is one of the types implementing the bound; every method declared
//!   here is a method the compiler knows how to translate (`x.sqrt()`, `T::zero()`,
//!   `x.wrapping_add(y)`, ...).
//! - **The host implementation.** Every method has a Rust body with the semantics the generated CUDA
//!   code keeps, so elementwise and reduction bodies are callable (and testable) on the host.
//!
//! The hierarchy, following num-traits' naming:
//!
//! | trait | implemented for | adds |
//! | --- | --- | --- |
//! | [`Scalar`] | every dtype: `bool`, `i8`..`i64`, `u8`..`u64`, `f16`, `bf16`, `f32`, `f64`, `Complex<f32>`, `Complex<f64>`, `f8e4m3`, `f8e5m2` | [`Scalar::DTYPE`] |
//! | [`Number`] | all of them but `bool` | `+ - * /` (and `+=` ...), `zero`, `one`, `from_f64`, `from_i64` |
//! | [`Real`] | integers and real floats | `<`, `to_f64`, `min`, `max`, `min_value`, `max_value` |
//! | [`Float`] | `f16`, `bf16`, `f32`, `f64`, `f8e4m3`, `f8e5m2` | the float methods (`sqrt`, `exp`, `powi`, `is_nan`, ...) and constants |
//! | [`Int`] | `i8`..`i64`, `u8`..`u64` | `%`, bit operators, shifts by `u32`, `wrapping_*`, `count_ones`, ... |
//!
//! On concrete types the inherent methods of the standard library and of `half` take precedence over
//! these trait methods (Rust's method resolution); they have the same semantics. `f16` and `bf16`
//! compute through `f32` and round back, as `half` does; conversions from `f64` and `i64` round
//! correctly (once), as the device conversions do.
//!
//! [`Number`] and its sub-traits are sealed: the compiler only understands the types of the dtype
//! table, so no other type may implement them. Integer `+ - *` on the host are Rust's operators: they
//! wrap in a release build and panic on overflow in a debug build, whereas the device always wraps;
//! use the `wrapping_*` methods where a test must overflow in a debug build. (The CPU device does
//! not call the body as written: it calls a copy whose operators are `kernel_ops`', which keep
//! the device's semantics in every build.)

use std::ops::{
    Add, AddAssign, BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Div, DivAssign,
    Mul, MulAssign, Neg, Not, Rem, RemAssign, Shl, ShlAssign, Shr, ShrAssign, Sub, SubAssign,
};

use cuprum_abi::dtype::DType;
use half::{bf16, f16};
use num_complex::Complex;

use super::fp8::{f8e4m3, f8e5m2};

/// A scalar element type of the dtype table: the element type of arrays, slices, views and shared
/// memory in kernels.
///
/// # Safety
///
/// Implementing `Scalar` promises that the bytes of a value of `Self` are exactly a value of the C
/// type of [`Scalar::DTYPE`] (`DType::c_type`): same size (`DType::size`), same meaning of every bit,
/// no padding bytes, and every value of the C type is a valid `Self`. The runtime relies on it to copy
/// values and buffers to and from the device as raw bytes, and the host atomics compare values bit for
/// bit.
pub unsafe trait Scalar: crate::element::Element + Default + PartialEq {
    /// The dtype whose C type this type is.
    const DTYPE: DType;
}

macro_rules! impl_scalar {
    ($($t:ty => $dtype:ident),* $(,)?) => {$(
        // SAFETY: `$t` is a plain value type with no padding whose layout is the dtype's C type:
        // bool and the integers are the C types of the same size, f16/bf16 are `repr(transparent)`
        // over the IEEE bits, f8e4m3/f8e5m2 `repr(transparent)` over their byte, f32/f64 are IEEE, `Complex` is `repr(C)` `{ re, im }`.
        unsafe impl Scalar for $t {
            const DTYPE: DType = DType::$dtype;
        }
        // SAFETY: `Scalar`'s contract is `Element`'s, for the dtype's C type (bool values are
        // normalised on the way back, see `array::read_elems`).
        unsafe impl crate::element::Element for $t {
            const ELEM: crate::elem_type::ElemType = crate::elem_type::ElemType::Scalar(DType::$dtype);
        }
    )*};
}

impl_scalar!(
    bool => Bool,
    i8 => I8,
    i16 => I16,
    i32 => I32,
    i64 => I64,
    u8 => U8,
    u16 => U16,
    u32 => U32,
    u64 => U64,
    f16 => F16,
    bf16 => BF16,
    f32 => F32,
    f64 => F64,
    Complex<f32> => C32,
    Complex<f64> => C64,
    f8e4m3 => F8E4M3,
    f8e5m2 => F8E5M2,
);

mod sealed {
    /// Host helpers of [`super::Number`] that must not be visible to kernels (the trait is not
    /// nameable outside this module, so its methods are never in scope for concrete types).
    pub trait HostArith: Sized {
        /// `self + other`, wrapping for integers (as the device does).
        fn __wrapping_add(self, other: Self) -> Self;
        /// `self - other`, wrapping for integers (as the device does).
        fn __wrapping_sub(self, other: Self) -> Self;
    }
}

/// A number: every [`Scalar`] but `bool`. Closed under `+ - * /` and their assignment forms.
pub trait Number:
    Scalar
    + sealed::HostArith
    + super::kernel_ops::KernelOps
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// The additive identity `0`.
    fn zero() -> Self;
    /// The multiplicative identity `1`.
    fn one() -> Self;
    /// `v as Self`: integers saturate and NaN becomes 0 (Rust's `as`), floats round to nearest,
    /// complex numbers get `v` as real part.
    fn from_f64(v: f64) -> Self;
    /// `v as Self`: integers wrap (Rust's `as`), floats round to nearest, complex numbers get `v` as
    /// real part.
    fn from_i64(v: i64) -> Self;
}

/// A real number: an integer or a real float. Ordered by `PartialOrd`.
pub trait Real: Number + PartialOrd {
    /// `self as f64`.
    fn to_f64(self) -> f64;
    /// The smaller of two values. For floats, if one is NaN the other is returned (`f32::min`,
    /// CUDA `fmin`).
    ///
    /// Takes `&self` so that on integers `a.min(b)` resolves to `Ord::min` (found first, by value)
    /// instead of being ambiguous; `a.min(b)` reads the same on every type.
    fn min(&self, other: Self) -> Self;
    /// The larger of two values. For floats, if one is NaN the other is returned (`f32::max`,
    /// CUDA `fmax`). Takes `&self` for the reason given at [`Real::min`].
    fn max(&self, other: Self) -> Self;
    /// The smallest finite value (`i32::MIN`, `f32::MIN`).
    fn min_value() -> Self;
    /// The largest finite value (`i32::MAX`, `f32::MAX`).
    fn max_value() -> Self;
    /// The value's bits, zero-extended to 64 (`f32::to_bits(x) as u64`; `x as u32 as u64` for
    /// an `i32`): with [`Real::from_bits_u64`], the way to pack a generic value and a flag into
    /// one 64-bit word that an atomic writes at once.
    ///
    /// ```
    /// use cuprum_runtime::Real;
    /// assert_eq!((-2i32).to_bits_u64(), 0xffff_fffe);
    /// assert_eq!((-0.0f32).to_bits_u64(), 0x8000_0000);
    /// // A flag above a value's 32 bits, and the value back.
    /// let word = (2u64 << 32) | 1.5f32.to_bits_u64();
    /// assert_eq!(<f32 as Real>::from_bits_u64(word & 0xffff_ffff), 1.5);
    /// ```
    fn to_bits_u64(self) -> u64;
    /// The value whose bits are the low bits of `b`, as many as the type has (the inverse of
    /// [`Real::to_bits_u64`]).
    fn from_bits_u64(b: u64) -> Self;
}

/// A real floating-point number: `f16`, `bf16`, `f32`, `f64`. The methods are those of `f32`/`f64`
/// in the standard library, with the same semantics.
pub trait Float: Real + Neg<Output = Self> + Rem<Output = Self> {
    /// Square root (`sqrt`).
    fn sqrt(self) -> Self;
    /// Cube root (`cbrt`).
    fn cbrt(self) -> Self;
    /// `e^self` (`exp`).
    fn exp(self) -> Self;
    /// `2^self` (`exp2`).
    fn exp2(self) -> Self;
    /// `e^self - 1`, accurate near zero (`expm1`).
    fn exp_m1(self) -> Self;
    /// Natural logarithm (`log`).
    fn ln(self) -> Self;
    /// `ln(1 + self)`, accurate near zero (`log1p`).
    fn ln_1p(self) -> Self;
    /// Base-2 logarithm (`log2`).
    fn log2(self) -> Self;
    /// Base-10 logarithm (`log10`).
    fn log10(self) -> Self;
    /// Sine (`sin`).
    fn sin(self) -> Self;
    /// Cosine (`cos`).
    fn cos(self) -> Self;
    /// Tangent (`tan`).
    fn tan(self) -> Self;
    /// Arcsine (`asin`).
    fn asin(self) -> Self;
    /// Arccosine (`acos`).
    fn acos(self) -> Self;
    /// Arctangent (`atan`).
    fn atan(self) -> Self;
    /// Hyperbolic sine (`sinh`).
    fn sinh(self) -> Self;
    /// Hyperbolic cosine (`cosh`).
    fn cosh(self) -> Self;
    /// Hyperbolic tangent (`tanh`).
    fn tanh(self) -> Self;
    /// Inverse hyperbolic sine (`asinh`).
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine (`acosh`).
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent (`atanh`).
    fn atanh(self) -> Self;
    /// Absolute value (`fabs`).
    fn abs(self) -> Self;
    /// Largest integer `<= self` (`floor`).
    fn floor(self) -> Self;
    /// Smallest integer `>= self` (`ceil`).
    fn ceil(self) -> Self;
    /// Nearest integer, halves away from zero (`round`).
    fn round(self) -> Self;
    /// Integer part, towards zero (`trunc`).
    fn trunc(self) -> Self;
    /// `self - self.trunc()`.
    fn fract(self) -> Self;
    /// `1` for `+0` and positive numbers, `-1` for `-0` and negative numbers, NaN for NaN.
    fn signum(self) -> Self;
    /// `1 / self`.
    fn recip(self) -> Self;
    /// Radians to degrees.
    fn to_degrees(self) -> Self;
    /// Degrees to radians.
    fn to_radians(self) -> Self;
    /// `self^n` for an integer `n` (`pow` with an integer exponent).
    fn powi(self, n: i32) -> Self;
    /// `self^n` (`pow`).
    fn powf(self, n: Self) -> Self;
    /// Four-quadrant arctangent of `self / other` (`atan2(self, other)`).
    fn atan2(self, other: Self) -> Self;
    /// `sqrt(self^2 + other^2)` without undue overflow (`hypot`).
    fn hypot(self, other: Self) -> Self;
    /// The magnitude of `self` with the sign of `sign` (`copysign`).
    fn copysign(self, sign: Self) -> Self;
    /// `self` restricted to `[min, max]`: `min` if `self < min`, `max` if `self > max`, else `self`
    /// (a NaN `self` stays NaN). Unlike `f32::clamp` it never panics.
    fn clamp(self, min: Self, max: Self) -> Self {
        if self < min {
            min
        } else if self > max {
            max
        } else {
            self
        }
    }
    /// `self * a + b` with one rounding (`fma`). `f16`/`bf16` compute it in `f32` and round back.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// Whether `self` is NaN (`isnan`).
    fn is_nan(self) -> bool;
    /// Whether `self` is neither infinite nor NaN (`isfinite`).
    fn is_finite(self) -> bool;
    /// Whether `self` is positive or negative infinity (`isinf`).
    fn is_infinite(self) -> bool;
    /// Whether the sign bit is set (`signbit`), also for `-0` and NaNs.
    fn is_sign_negative(self) -> bool;
    /// Positive infinity.
    fn infinity() -> Self;
    /// Negative infinity.
    fn neg_infinity() -> Self;
    /// A quiet NaN.
    fn nan() -> Self;
    /// The difference between `1` and the next larger representable number.
    fn epsilon() -> Self;
    /// π.
    fn pi() -> Self;
    /// Euler's number e.
    fn e() -> Self;
}

/// A primitive integer: `i8`..`i64`, `u8`..`u64`. The methods are those of the standard library's
/// integers, with release-build semantics (they never panic).
pub trait Int:
    Real
    + super::kernel_ops::KernelShift
    + super::kernel_ops::ShiftAmount
    + Ord
    + Eq
    + Rem<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + RemAssign
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
    + ShlAssign<u32>
    + ShrAssign<u32>
{
    /// `self + other`, wrapping around at the type's bounds.
    fn wrapping_add(self, other: Self) -> Self;
    /// `self - other`, wrapping around at the type's bounds.
    fn wrapping_sub(self, other: Self) -> Self;
    /// `self * other`, wrapping around at the type's bounds.
    fn wrapping_mul(self, other: Self) -> Self;
    /// `-self`, wrapping around at the type's bounds (`MIN.wrapping_neg() == MIN`; for unsigned
    /// types `2^bits - self`).
    fn wrapping_neg(self) -> Self;
    /// `self + other`, saturating at the type's bounds.
    fn saturating_add(self, other: Self) -> Self;
    /// `self - other`, saturating at the type's bounds.
    fn saturating_sub(self, other: Self) -> Self;
    /// Number of one bits (`__popc`).
    fn count_ones(self) -> u32;
    /// Number of zero bits.
    fn count_zeros(self) -> u32;
    /// Number of leading zero bits (`__clz`).
    fn leading_zeros(self) -> u32;
    /// Number of trailing zero bits.
    fn trailing_zeros(self) -> u32;
    /// The low 32 bits as `u32` (Rust's `self as u32`): an index from a generic integer.
    fn low_u32(self) -> u32;
    /// Rotates the bits left by `n` (modulo the bit width).
    fn rotate_left(self, n: u32) -> Self;
    /// Rotates the bits right by `n` (modulo the bit width).
    fn rotate_right(self, n: u32) -> Self;
    /// Reverses the byte order (`__byte_perm`).
    fn swap_bytes(self) -> Self;
    /// Reverses the bit order (`__brev`).
    fn reverse_bits(self) -> Self;
    /// `self^exp`, wrapping around at the type's bounds (as `pow` does in a release build).
    fn pow(self, exp: u32) -> Self;
}

// ---------------------------------------------------------------------------------------------
// Correctly rounded conversions to f16/bf16 (`half`'s f64 conversions ignore the low 32 mantissa
// bits, and its x86 path goes through f32, both of which can round twice).
// ---------------------------------------------------------------------------------------------

/// `v` as `f64`, rounded to odd: exact when `v` fits in 53 bits, else the truncation with its
/// lowest bit set. A later round-to-nearest to a narrower float is then correctly rounded.
fn i64_to_f64_odd(v: i64) -> f64 {
    let m = v.unsigned_abs();
    let bits = u64::BITS - m.leading_zeros();
    let r = if bits <= f64::MANTISSA_DIGITS {
        m
    } else {
        let s = bits - f64::MANTISSA_DIGITS;
        let sticky = u64::from(m & ((1u64 << s) - 1) != 0);
        ((m >> s) | sticky) << s
    };
    // Exact: `r` has at most 53 significant bits.
    let f = r as f64;
    if v < 0 { -f } else { f }
}

/// `v` as `f32`, rounded to odd (see [`i64_to_f64_odd`]); NaN and infinities map to themselves.
fn f64_to_f32_odd(v: f64) -> f32 {
    let f = v as f32;
    if v.is_nan() || f64::from(f) == v {
        return f;
    }
    // Inexact: take the truncation towards zero (for values of one sign, the bit patterns are
    // ordered like the magnitudes), then force the lowest bit to 1.
    let mut bits = f.to_bits();
    if f64::from(f).abs() > v.abs() {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

/// Correctly rounded `f64` -> `f16`.
fn f16_from_f64(v: f64) -> f16 {
    f16::from_f32(f64_to_f32_odd(v))
}

/// Correctly rounded `f64` -> `bf16`.
fn bf16_from_f64(v: f64) -> bf16 {
    bf16::from_f32(f64_to_f32_odd(v))
}

// ---------------------------------------------------------------------------------------------
// Integers.
// ---------------------------------------------------------------------------------------------

macro_rules! impl_int {
    ($($t:ident),* $(,)?) => {$(
        impl sealed::HostArith for $t {
            fn __wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            fn __wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
        }

        impl Number for $t {
            fn zero() -> Self {
                0
            }
            fn one() -> Self {
                1
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }

        impl Real for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn min(&self, other: Self) -> Self {
                Ord::min(*self, other)
            }
            fn max(&self, other: Self) -> Self {
                Ord::max(*self, other)
            }
            fn min_value() -> Self {
                <$t>::MIN
            }
            fn max_value() -> Self {
                <$t>::MAX
            }
            fn to_bits_u64(self) -> u64 {
                (self as u64) & (u64::MAX >> (64 - <$t>::BITS))
            }
            fn from_bits_u64(b: u64) -> Self {
                b as $t
            }
        }

        impl Int for $t {
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            fn saturating_add(self, other: Self) -> Self {
                <$t>::saturating_add(self, other)
            }
            fn saturating_sub(self, other: Self) -> Self {
                <$t>::saturating_sub(self, other)
            }
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            fn count_zeros(self) -> u32 {
                <$t>::count_zeros(self)
            }
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
            fn low_u32(self) -> u32 {
                self as u32
            }
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            fn rotate_left(self, n: u32) -> Self {
                <$t>::rotate_left(self, n)
            }
            fn rotate_right(self, n: u32) -> Self {
                <$t>::rotate_right(self, n)
            }
            fn swap_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
            fn reverse_bits(self) -> Self {
                <$t>::reverse_bits(self)
            }
            fn pow(self, exp: u32) -> Self {
                <$t>::wrapping_pow(self, exp)
            }
        }
    )*};
}

impl_int!(i8, i16, i32, i64, u8, u16, u32, u64);

// ---------------------------------------------------------------------------------------------
// Floats. `$via` is the type the computation runs in (the type itself for f32/f64, f32 for the
// half types), `$to` converts to it and `$back` rounds a result back.
// ---------------------------------------------------------------------------------------------

macro_rules! impl_float {
    ($t:ident, via $via:ident, to $to:expr, back $back:expr, from_f64 $from_f64:expr, from_i64 $from_i64:expr) => {
        impl sealed::HostArith for $t {
            fn __wrapping_add(self, other: Self) -> Self {
                self + other
            }
            fn __wrapping_sub(self, other: Self) -> Self {
                self - other
            }
        }

        impl Number for $t {
            fn zero() -> Self {
                $from_f64(0.0)
            }
            fn one() -> Self {
                $from_f64(1.0)
            }
            fn from_f64(v: f64) -> Self {
                $from_f64(v)
            }
            fn from_i64(v: i64) -> Self {
                $from_i64(v)
            }
        }

        impl Real for $t {
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            fn min(&self, other: Self) -> Self {
                $back($via::min($to(*self), $to(other)))
            }
            fn max(&self, other: Self) -> Self {
                $back($via::max($to(*self), $to(other)))
            }
            fn min_value() -> Self {
                <$t>::MIN
            }
            fn max_value() -> Self {
                <$t>::MAX
            }
            fn to_bits_u64(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn from_bits_u64(b: u64) -> Self {
                <$t>::from_bits(b as _)
            }
        }

        impl_float!(@float $t, $via, $to, $back;
            unary sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 sin cos tan asin acos atan sinh cosh
                tanh asinh acosh atanh abs floor ceil round trunc fract signum recip to_degrees
                to_radians;
            binary powf atan2 hypot copysign;
            predicate is_nan is_finite is_infinite is_sign_negative;
        );
    };
    (@float $t:ident, $via:ident, $to:expr, $back:expr;
        unary $($u:ident)*; binary $($b:ident)*; predicate $($p:ident)*;) => {
        impl Float for $t {
            $(
                fn $u(self) -> Self {
                    $back($via::$u($to(self)))
                }
            )*
            $(
                fn $b(self, other: Self) -> Self {
                    $back($via::$b($to(self), $to(other)))
                }
            )*
            $(
                fn $p(self) -> bool {
                    $via::$p($to(self))
                }
            )*
            fn powi(self, n: i32) -> Self {
                $back($via::powi($to(self), n))
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                $back($via::mul_add($to(self), $to(a), $to(b)))
            }
            fn infinity() -> Self {
                <$t>::INFINITY
            }
            fn neg_infinity() -> Self {
                <$t>::NEG_INFINITY
            }
            fn nan() -> Self {
                <$t>::NAN
            }
            fn epsilon() -> Self {
                <$t>::EPSILON
            }
            fn pi() -> Self {
                <$t as Number>::from_f64(std::f64::consts::PI)
            }
            fn e() -> Self {
                <$t as Number>::from_f64(std::f64::consts::E)
            }
        }
    };
}

fn id<T>(v: T) -> T {
    v
}
fn f32_from_f64(v: f64) -> f32 {
    v as f32
}
fn f32_from_i64(v: i64) -> f32 {
    v as f32
}
fn f64_from_i64(v: i64) -> f64 {
    v as f64
}
fn f16_from_i64(v: i64) -> f16 {
    f16_from_f64(i64_to_f64_odd(v))
}
fn bf16_from_i64(v: i64) -> bf16 {
    bf16_from_f64(i64_to_f64_odd(v))
}

impl_float!(f32, via f32, to id, back id, from_f64 f32_from_f64, from_i64 f32_from_i64);
impl_float!(f64, via f64, to id, back id, from_f64 id, from_i64 f64_from_i64);
impl_float!(f16, via f32, to f32::from, back f16::from_f32, from_f64 f16_from_f64, from_i64 f16_from_i64);
impl_float!(bf16, via f32, to f32::from, back bf16::from_f32, from_f64 bf16_from_f64, from_i64 bf16_from_i64);
// The 8-bit floats round from f64 directly (one rounding, `scalar/fp8.rs`); `i64 as f64` rounds
// only above 2^53, where both formats have long saturated.
fn f8e4m3_from_i64(v: i64) -> f8e4m3 {
    f8e4m3::from_f64(v as f64)
}
fn f8e5m2_from_i64(v: i64) -> f8e5m2 {
    f8e5m2::from_f64(v as f64)
}
impl_float!(f8e4m3, via f32, to f32::from, back f8e4m3::from_f32, from_f64 f8e4m3::from_f64, from_i64 f8e4m3_from_i64);
impl_float!(f8e5m2, via f32, to f32::from, back f8e5m2::from_f32, from_f64 f8e5m2::from_f64, from_i64 f8e5m2_from_i64);

// ---------------------------------------------------------------------------------------------
// Complex numbers.
// ---------------------------------------------------------------------------------------------

macro_rules! impl_complex {
    ($($t:ident),*) => {$(
        impl sealed::HostArith for Complex<$t> {
            fn __wrapping_add(self, other: Self) -> Self {
                self + other
            }
            fn __wrapping_sub(self, other: Self) -> Self {
                self - other
            }
        }

        impl Number for Complex<$t> {
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            fn from_f64(v: f64) -> Self {
                Complex::new(<$t as Number>::from_f64(v), 0.0)
            }
            fn from_i64(v: i64) -> Self {
                Complex::new(<$t as Number>::from_i64(v), 0.0)
            }
        }
    )*};
}

impl_complex!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes() {
        assert_eq!(bool::DTYPE, DType::Bool);
        assert_eq!(u16::DTYPE, DType::U16);
        assert_eq!(bf16::DTYPE, DType::BF16);
        assert_eq!(<Complex<f64>>::DTYPE, DType::C64);
        fn size_matches<T: Scalar>() {
            assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size(), "{:?}", T::DTYPE);
        }
        size_matches::<bool>();
        size_matches::<i8>();
        size_matches::<i64>();
        size_matches::<u32>();
        size_matches::<f16>();
        size_matches::<bf16>();
        size_matches::<f64>();
        size_matches::<Complex<f32>>();
        size_matches::<Complex<f64>>();
    }

    #[test]
    fn int_from_f64_is_rust_as() {
        assert_eq!(i32::from_f64(f64::NAN), 0);
        assert_eq!(u8::from_f64(300.0), 255);
        assert_eq!(u8::from_f64(-5.0), 0);
        assert_eq!(i8::from_f64(-1e9), -128);
        assert_eq!(i64::from_f64(f64::INFINITY), i64::MAX);
        assert_eq!(i32::from_f64(-2.9), -2);
        assert_eq!(u32::from_i64(-1), u32::MAX);
        assert_eq!(i8::from_i64(200), -56);
        assert_eq!(i64::from_i64(i64::MIN), i64::MIN);
    }

    #[test]
    fn number_identities() {
        fn sum<T: Number>(xs: &[T]) -> T {
            let mut acc = T::zero();
            for &x in xs {
                acc += x;
            }
            acc
        }
        assert_eq!(sum(&[1u8, 2, 3]), 6);
        assert_eq!(sum(&[0.5f32, 0.25]), 0.75);
        assert_eq!(sum(&[f16::ONE, f16::ONE]), f16::from_f32(2.0));
        assert_eq!(
            sum(&[Complex::new(1.0f64, 2.0), Complex::new(3.0, -1.0)]),
            Complex::new(4.0, 1.0)
        );
        assert_eq!(<Complex<f32>>::one(), Complex::new(1.0, 0.0));
        assert_eq!(<Complex<f32>>::from_i64(-3), Complex::new(-3.0, 0.0));
        assert_eq!(bf16::one(), bf16::ONE);
        assert_eq!(f16::zero(), f16::ZERO);
    }

    #[test]
    fn float_from_f64_and_i64_round_once() {
        // 1 + 2^-11 + 2^-40 is just above the midpoint between the f16 values 1 and 1 + 2^-10:
        // it must round up (rounding through a truncated mantissa would tie to even, down).
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(
            <f16 as Number>::from_f64(v),
            f16::from_f32(1.0 + 2f32.powi(-10))
        );
        assert_eq!(<f16 as Number>::from_f64(v).to_bits(), 0x3C01);
        // Same for bf16 (8 significant bits).
        let v = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(
            <bf16 as Number>::from_f64(v),
            bf16::from_f32(1.0 + 2f32.powi(-7))
        );
        // Exact midpoints tie to even.
        assert_eq!(<f16 as Number>::from_f64(1.0 + 2f64.powi(-11)), f16::ONE);
        // i64 above 2^53: 2^62 + 2^54 + 1 is just above the bf16 midpoint between 2^62 and
        // 2^62 + 2^55.
        let v = (1i64 << 62) + (1i64 << 54) + 1;
        assert_eq!(
            <bf16 as Number>::from_i64(v),
            bf16::from_f64((1u64 << 62) as f64 + 2f64.powi(55))
        );
        assert_eq!(<f16 as Number>::from_i64(-7), f16::from_f32(-7.0));
        assert!(<f16 as Number>::from_i64(1 << 20).is_infinite());
        assert!(<f16 as Number>::from_f64(f64::NAN).is_nan());
        assert_eq!(<f32 as Number>::from_i64(i64::MAX), 2f32.powi(63));
        assert_eq!(f64::from_i64(-3), -3.0);
    }

    #[test]
    fn round_to_odd_helpers() {
        assert_eq!(i64_to_f64_odd(0), 0.0);
        assert_eq!(i64_to_f64_odd(i64::MIN), -(2f64.powi(63)));
        assert_eq!(i64_to_f64_odd((1 << 53) + 1), ((1u64 << 53) | 2) as f64);
        assert_eq!(f64_to_f32_odd(f64::INFINITY), f32::INFINITY);
        assert_eq!(f64_to_f32_odd(1e300), f32::MAX);
        assert_eq!(f64_to_f32_odd(-1e300), -f32::MAX);
        assert_eq!(f64_to_f32_odd(1e-300), f32::from_bits(1));
        assert_eq!(f64_to_f32_odd(0.5), 0.5);
        let odd = f64_to_f32_odd(1.0 + 2f64.powi(-40));
        assert_eq!(odd.to_bits(), 1f32.to_bits() | 1);
        let odd = f64_to_f32_odd(-(1.0 + 2f64.powi(-40)));
        assert_eq!(odd.to_bits(), (-1f32).to_bits() | 1);
    }

    #[test]
    fn half_math_rounds_through_f32() {
        let two = f16::from_f32(2.0);
        // sqrt(2) = 1.41421..., the nearest f16 is 1.4140625 (0x3DA8).
        assert_eq!(Float::sqrt(two).to_bits(), 0x3DA8);
        assert_eq!(Float::sqrt(two), f16::from_f32(2f32.sqrt()));
        assert_eq!(Float::exp(f16::ONE), f16::E);
        assert_eq!(<f16 as Float>::pi(), f16::PI);
        assert_eq!(<bf16 as Float>::pi(), bf16::PI);
        assert_eq!(<f16 as Float>::e(), f16::E);
        assert_eq!(<f16 as Float>::epsilon(), f16::EPSILON);
        assert_eq!(Float::powi(two, 16), f16::INFINITY);
        assert_eq!(Float::powf(two, f16::from_f32(3.0)), f16::from_f32(8.0));
        assert_eq!(Float::mul_add(two, two, f16::ONE), f16::from_f32(5.0));
        assert_eq!(Float::round(f16::from_f32(-2.5)), f16::from_f32(-3.0));
        assert_eq!(Float::fract(f16::from_f32(2.75)), f16::from_f32(0.75));
        assert!(Float::is_nan(<f16 as Float>::nan()));
        assert!(Float::is_sign_negative(f16::from_f32(-0.0)));
        assert_eq!(Real::max(&<f16 as Float>::nan(), two), two);
        assert_eq!(
            Real::min(&bf16::ONE, bf16::from_f32(-1.0)),
            bf16::from_f32(-1.0)
        );
        // 1/3 in bf16 is 0.333984375 (0x3EAB).
        assert_eq!(Float::recip(bf16::from_f32(3.0)).to_bits(), 0x3EAB);
        assert_eq!(Real::to_f64(bf16::from_f32(0.5)), 0.5);
        assert_eq!(<f16 as Real>::max_value(), f16::MAX);
    }

    #[test]
    fn float_methods_generic() {
        fn norm<T: Float>(x: T, y: T) -> T {
            (x * x + y * y).sqrt()
        }
        fn clip<T: Real>(x: T, lo: T, hi: T) -> T {
            x.max(lo).min(hi)
        }
        assert_eq!(norm(3.0f32, 4.0), 5.0);
        assert_eq!(norm(3.0f64, 4.0), 5.0);
        assert_eq!(
            norm(f16::from_f32(3.0), f16::from_f32(4.0)),
            f16::from_f32(5.0)
        );
        assert_eq!(clip(7i32, 0, 5), 5);
        assert_eq!(clip(-7.5f64, 0.0, 5.0), 0.0);
        assert_eq!(clip(3u8, 1, 5), 3);
        // Float::clamp does not panic on NaN or inverted bounds.
        assert!(Float::clamp(f32::NAN, 0.0, 1.0).is_nan());
        assert_eq!(Float::clamp(0.5f32, 1.0, 0.0), 1.0);
        assert_eq!(Float::clamp(2.0f64, 0.0, 1.0), 1.0);
        assert_eq!(<f32 as Float>::infinity(), f32::INFINITY);
        assert_eq!(<f64 as Real>::min_value(), f64::MIN);
        assert!((Float::to_degrees(std::f64::consts::PI) - 180.0).abs() < 1e-12);
        assert_eq!(Float::copysign(2.0f32, -0.0), -2.0);
        assert_eq!(
            Float::hypot(f16::from_f32(3.0), f16::from_f32(4.0)),
            f16::from_f32(5.0)
        );
    }

    #[test]
    fn min_max_are_unambiguous_on_concrete_integers() {
        // `Ord::min` (by value) is found before `Real::min` (by reference).
        let (a, b) = std::hint::black_box((3i32, 4u64));
        assert_eq!(a.min(4), 3);
        assert_eq!(b.max(5), 5);
        fn generic_int<T: Int>(a: T, b: T) -> (T, T) {
            (a.min(b), a.max(b))
        }
        assert_eq!(generic_int(5i16, -2), (-2, 5));
    }

    #[test]
    fn int_methods_wrap() {
        fn p<T: Int>(x: T, e: u32) -> T {
            x.pow(e)
        }
        assert_eq!(p(3u8, 5), 243);
        assert_eq!(p(3u8, 6), 3u8.wrapping_pow(6));
        assert_eq!(p(2i32, 31), i32::MIN);
        assert_eq!(p(2i32, 32), 0);
        assert_eq!(p(-1i64, 3), -1);
        fn ops<T: Int>(a: T, b: T) -> [T; 6] {
            [
                a.wrapping_add(b),
                a.wrapping_sub(b),
                a.wrapping_mul(b),
                a.wrapping_neg(),
                a.saturating_add(b),
                a.saturating_sub(b),
            ]
        }
        assert_eq!(ops(250u8, 10), [4, 240, 196, 6, 255, 240]);
        assert_eq!(ops(i8::MIN, 1), [-127, 127, -128, -128, -127, -128]);
        fn bits<T: Int>(a: T) -> [u32; 4] {
            [
                a.count_ones(),
                a.count_zeros(),
                a.leading_zeros(),
                a.trailing_zeros(),
            ]
        }
        assert_eq!(bits(0b0110_0000u8), [2, 6, 1, 5]);
        assert_eq!(bits(-1i16), [16, 0, 0, 0]);
        assert_eq!([Int::low_u32(-5i8), Int::low_u32(0x1_2345_6789u64), Int::low_u32(-2i64)], [0xffff_fffb, 0x2345_6789, 0xffff_fffe]);
        // Bits zero-extended to 64, and back.
        assert_eq!([Real::to_bits_u64(-5i8), Real::to_bits_u64(-2i32), Real::to_bits_u64(-2i64)], [0xfb, 0xffff_fffe, u64::MAX - 1]);
        assert_eq!([Real::to_bits_u64(-0.0f32), Real::to_bits_u64(1.5f64), Real::to_bits_u64(f16::from_f32(-2.0))], [0x8000_0000, 0x3ff8_0000_0000_0000, 0xc000]);
        assert_eq!(<i32 as Real>::from_bits_u64(0xdead_ffff_fffe), -2);
        assert_eq!(<i8 as Real>::from_bits_u64(0x1fb), -5);
        assert_eq!(<f32 as Real>::from_bits_u64(0x1234_c000_0000).to_bits(), 0xc000_0000);
        assert!(<f64 as Real>::from_bits_u64(Real::to_bits_u64(f64::NAN)).is_nan());
        fn rot<T: Int>(a: T) -> [T; 4] {
            [
                a.rotate_left(4),
                a.rotate_right(4),
                a.swap_bytes(),
                a.reverse_bits(),
            ]
        }
        assert_eq!(rot(0x1234u16), [0x2341, 0x4123, 0x3412, 0x2c48]);
        fn shifts<T: Int>(a: T) -> T {
            let mut b = (a << 2) | (a >> 1);
            b ^= !T::zero();
            b &= T::from_i64(0xff);
            b %= T::from_i64(100);
            b
        }
        assert_eq!(shifts(5u32), 33); // ((20 | 2) ^ !0) & 0xff = 233, % 100
        assert_eq!(<u16 as Real>::max_value(), u16::MAX);
        assert_eq!(<i8 as Real>::min_value(), i8::MIN);
        assert_eq!(Real::to_f64(-3i32), -3.0);
    }
}
