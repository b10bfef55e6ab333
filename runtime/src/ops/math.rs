//! NumPy's mathematical functions as methods of `Array`: trigonometric and hyperbolic
//! functions, rounding, exponents and logarithms, the floating-point functions, `abs`/`sign`,
//! and `maximum`/`minimum`/`fmax`/`fmin`.
//!
//! The float functions take every float type (`f16`/`bf16` compute through `f32`); f32 is
//! precompiled, the others compile at first use. Math functions are the device's (CUDA's on a
//! GPU, the host's on the CPU device): results may differ between devices in the last bits.

use super::{Builtin, binary, builtin, is_float, launch_new, launch_new2, unary};
use crate::array::Array;
use crate::elementwise::{Arg, Input};
use crate::error::{Error, Result};
use crate::{DType, Float, Real};

/// One method per unary float function: `$name` launches kernel `$kernel` of `kernels/$file.rs`.
macro_rules! float_unary {
    ($($(#[$doc:meta])* $name:ident => $file:ident::$kernel:ident;)*) => {
        impl<T: Float> Array<T> {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Array<T>> {
                    unary(builtin!($file::$kernel), self)
                }
            )*
        }
    };
}

/// One method per binary float function (broadcast; `other` an array or a scalar).
macro_rules! float_binary {
    ($($(#[$doc:meta])* $name:ident => $file:ident::$kernel:ident;)*) => {
        impl<T: Float> Array<T> {
            $(
                $(#[$doc])*
                pub fn $name<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
                    binary(builtin!($file::$kernel), self, other)
                }
            )*
        }
    };
}

impl<T: Float> Array<T> {
    /// `sqrt(x)` elementwise (NaN for negative `x`).
    pub fn sqrt(&self) -> Result<Array<T>> {
        unary(builtin!(sqrt), self)
    }
    /// `e^x` elementwise.
    pub fn exp(&self) -> Result<Array<T>> {
        unary(builtin!(exp), self)
    }
    /// The natural logarithm elementwise.
    pub fn log(&self) -> Result<Array<T>> {
        unary(builtin!(log), self)
    }
    /// `sin(x)` elementwise.
    pub fn sin(&self) -> Result<Array<T>> {
        unary(builtin!(sin), self)
    }
    /// `cos(x)` elementwise.
    pub fn cos(&self) -> Result<Array<T>> {
        unary(builtin!(cos), self)
    }
    /// `tanh(x)` elementwise.
    pub fn tanh(&self) -> Result<Array<T>> {
        unary(builtin!(tanh), self)
    }
}

float_unary! {
    /// `tan(x)` elementwise.
    tan => math::tan;
    /// The inverse sine elementwise (NaN outside `[-1, 1]`).
    arcsin => math::arcsin;
    /// The inverse cosine elementwise (NaN outside `[-1, 1]`).
    arccos => math::arccos;
    /// The inverse tangent elementwise, in `[-π/2, π/2]`.
    arctan => math::arctan;
    /// Degrees to radians elementwise (`x * π / 180`).
    deg2rad => math::deg2rad;
    /// [`Array::deg2rad`] (NumPy's other name).
    radians => math::deg2rad;
    /// Radians to degrees elementwise (`x * 180 / π`).
    rad2deg => math::rad2deg;
    /// [`Array::rad2deg`] (NumPy's other name).
    degrees => math::rad2deg;
    /// `sinh(x)` elementwise.
    sinh => math::sinh;
    /// `cosh(x)` elementwise.
    cosh => math::cosh;
    /// The inverse hyperbolic sine elementwise.
    arcsinh => math::arcsinh;
    /// The inverse hyperbolic cosine elementwise (NaN below 1).
    arccosh => math::arccosh;
    /// The inverse hyperbolic tangent elementwise (±inf at ±1, NaN outside `[-1, 1]`). On the
    /// CPU device it is Rust's `atanh`, whose `f32` loses accuracy close to -1 (a relative error
    /// near 1e-4 within 1e-3 of it).
    arctanh => math::arctanh;
    /// The nearest integer elementwise, half to even (NumPy's `rint`; Rust's `round` rounds
    /// half away from zero); keeps the sign of zero.
    rint => math::rint;
    /// The largest integer not above `x`, elementwise.
    floor => math::floor;
    /// The smallest integer not below `x`, elementwise.
    ceil => math::ceil;
    /// `x` rounded towards zero, elementwise.
    trunc => math::trunc;
    /// `e^x - 1` elementwise, accurate near 0.
    expm1 => math::expm1;
    /// `2^x` elementwise.
    exp2 => math::exp2;
    /// The base-10 logarithm elementwise.
    log10 => math::log10;
    /// The base-2 logarithm elementwise.
    log2 => math::log2;
    /// `ln(1 + x)` elementwise, accurate near 0.
    log1p => math::log1p;
}

float_binary! {
    /// The angle of the point `(other, self)` elementwise: `atan2(self, other)` in `[-π, π]`
    /// (NumPy's `arctan2(x1, x2)` with `x1 = self`, the `y` coordinate).
    arctan2 => math::arctan2;
    /// `sqrt(x² + y²)` elementwise, without undue overflow.
    hypot => math::hypot;
    /// `ln(e^x + e^y)` elementwise without overflow (NumPy's formula: `x + ln 2` when equal).
    logaddexp => math::logaddexp;
    /// `log2(2^x + 2^y)` elementwise without overflow.
    logaddexp2 => math::logaddexp2;
    /// The magnitude of `self` with the sign of `other`, elementwise.
    copysign => math::copysign;
}

impl<T: Float> Array<T> {
    /// Whether the sign bit is set, elementwise (true for `-0.0` and a negative NaN).
    pub fn signbit(&self) -> Result<Array<bool>> {
        unary(builtin!(math::signbit), self)
    }
    /// `self * 2^n` elementwise, rounded once (NumPy's `ldexp`; `n` an `i32` array or scalar,
    /// broadcast).
    pub fn ldexp<'a>(&self, n: impl Into<Input<'a, i32>>) -> Result<Array<T>> {
        launch_new::<T>(builtin!(math::ldexp), &[T::DTYPE], &[Arg::input(self), n.into().arg()])
    }
    /// The mantissa and exponent of each element (NumPy's `frexp`): `x = m * 2^e` with `|m|` in
    /// `[0.5, 1)`; `(x, 0)` for zeros, infinities and NaN.
    pub fn frexp(&self) -> Result<(Array<T>, Array<i32>)> {
        launch_new2::<T, i32>(builtin!(math::frexp), &[T::DTYPE], &[Arg::input(self)])
    }
    /// `(fractional part, integral part)` of each element, both with the sign of `x` (NumPy's
    /// `modf`; `(±0, ±inf)` for an infinity, NaN for NaN).
    pub fn modf(&self) -> Result<(Array<T>, Array<T>)> {
        launch_new2::<T, T>(builtin!(math::modf), &[T::DTYPE], &[Arg::input(self)])
    }
    /// The next representable value after each element towards `other` (NumPy's
    /// `nextafter`; `other` when equal, NaN when either is NaN). `f32` and `f64` only: `f16` and
    /// `bf16` are an error (convert with `astype` first).
    pub fn nextafter<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        let b = match T::DTYPE {
            DType::F32 => builtin!(math::nextafter_f32),
            DType::F64 => builtin!(math::nextafter_f64),
            d => {
                return Err(Error::Unsupported {
                    what: format!("nextafter of {d}: only f32 and f64 are implemented; convert with astype::<f32>() first"),
                });
            }
        };
        launch_new::<T>(b, &[], &[Arg::input(self), other.into().arg()])
    }
}

/// `abs`, `sign` and the NaN-propagating `maximum`/`minimum` have one kernel for integers and one
/// for floats.
fn pick(d: DType, float: Builtin, int: Builtin) -> Builtin {
    if is_float(d) { float } else { int }
}

impl<T: Real> Array<T> {
    /// `|x|` elementwise; for signed integers `|MIN|` is `MIN` (wrapping).
    pub fn abs(&self) -> Result<Array<T>> {
        unary(pick(T::DTYPE, builtin!(abs_float), builtin!(abs_int)), self)
    }
    /// [`Array::abs`] (NumPy's name).
    pub fn absolute(&self) -> Result<Array<T>> {
        self.abs()
    }
    /// -1, 0 or 1 by the sign of each element (NumPy's `sign`): 0 for both zeros, NaN for NaN;
    /// unsigned integers give 0 or 1.
    pub fn sign(&self) -> Result<Array<T>> {
        unary(pick(T::DTYPE, builtin!(math::sign_float), builtin!(math::sign_int)), self)
    }
    /// The larger of each pair (broadcast; `other` an array or a scalar), NaN when either is NaN
    /// (NumPy's `maximum`; [`Array::fmax`] ignores a NaN). Of two equal values (`-0.0` and
    /// `0.0`), `self`'s.
    pub fn maximum<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(pick(T::DTYPE, builtin!(math::maximum_float), builtin!(maximum)), self, other)
    }
    /// The smaller of each pair, NaN when either is NaN (NumPy's `minimum`; [`Array::fmin`]
    /// ignores a NaN).
    pub fn minimum<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(pick(T::DTYPE, builtin!(math::minimum_float), builtin!(minimum)), self, other)
    }
    /// The larger of each pair; a NaN operand is ignored (NumPy's `fmax`, Rust's `f32::max`):
    /// NaN only when both are.
    pub fn fmax<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(maximum), self, other)
    }
    /// The smaller of each pair; a NaN operand is ignored (NumPy's `fmin`, Rust's `f32::min`).
    pub fn fmin<'a>(&self, other: impl Into<Input<'a, T>>) -> Result<Array<T>> {
        binary(builtin!(minimum), self, other)
    }
}
