//! The OCP 8-bit floats `f8e4m3` and `f8e5m2` (CUDA's `__nv_fp8_e4m3`/`__nv_fp8_e5m2`): their
//! host definitions, bit for bit what the device computes (`abi/include/cuprum/fp8.h`).
//!
//! | type | layout | max | smallest subnormal | infinities | NaN |
//! | --- | --- | --- | --- | --- | --- |
//! | `f8e4m3` ("e4m3fn") | 1 sign, 4 exponent (bias 7), 3 mantissa bits | 448 | 2^-9 | none | `0x7f`, `0xff` only |
//! | `f8e5m2` | 1 sign, 5 exponent (bias 15), 2 mantissa bits | 57344 | 2^-16 | `0x7c`, `0xfc` | `0x7d`..`0x7f`, `0xfd`..`0xff` |
//!
//! **The conversion rule** (that of the constructors of CUDA's `cuda_fp8.h`, which convert with
//! `__NV_SATFINITE`): a wider float (`f64`, `f32`, `f16`, `bf16`) becomes an 8-bit float by one
//! rounding to nearest, ties to even, of its exact value; a finite value beyond the largest
//! finite one, and an infinity, become the largest finite value of the same sign (448 or 57344:
//! "satfinite"); NaN becomes NaN (`f8e4m3`: `0x7f` with the sign; `f8e5m2`: `0x7e` with the
//! sign and the two highest mantissa bits of the `f64`, as CUDA's software path gives them);
//! `-0.0` stays `-0.0`, and a value at most half the smallest subnormal becomes a zero of its sign.
//! From an 8-bit float to a wider one is exact; NaN becomes the positive quiet NaN of the wider
//! type (`f32` `0x7fffe000`: CUDA widens through `f16`'s canonical NaN `0x7fff`).
//! `f32`, `f16` and `bf16` convert through `f64`, which is exact, so no value rounds twice.
//! Arithmetic computes in `f32` and rounds back by the same rule (as `f16`/`bf16` do).
//!
//! Why not the `float8` crate (0.7): its conversions port the same CUDA code, but its constants
//! and predicates are wrong for OCP FP8 (`F8E4M3::MAX` is 416 and `F8E4M3::INFINITY` is 448, the
//! largest finite value, which `is_infinite` reports as infinite; `F8E5M2::MAX` is 49152,
//! `F8E5M2::INFINITY` is 57344 and `is_nan` misses `0x7d` and `0x7f`), and the runtime needs the
//! C header and these definitions to be one rule it owns and tests.

#![allow(non_camel_case_types)]

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign};

use half::{bf16, f16};

use crate::repr::DeviceRepr;

// SAFETY: one byte of plain data, passed as CUDA's 8-bit float (`__nv_fp8_*`, one byte, no
// padding); here, in the module above `repr` that defines the types (the runtime's layers).
unsafe impl DeviceRepr for f8e4m3 {}
// SAFETY: as above.
unsafe impl DeviceRepr for f8e5m2 {}

/// The parameters of one 8-bit format, as `cuda_fp8.hpp`'s `__nv_cvt_double_to_fp8` names them.
struct Format {
    /// The code of the largest finite magnitude.
    max_norm: u8,
    /// Mask of the stored mantissa bits.
    mantissa_mask: u8,
    /// Exponent bias.
    bias: u16,
    /// Significand bits, the implicit one included.
    significand_bits: u32,
    /// The `f64` bits of half the smallest subnormal: at most this magnitude rounds to zero.
    min_denorm_half: u64,
    /// The `f64` bits above which a finite magnitude saturates.
    overflow_threshold: u64,
    /// The `f64` bits of the smallest normal magnitude.
    min_norm: u64,
    /// Whether the format is e4m3 (NaN is `0x7f`) rather than e5m2 (NaN keeps mantissa bits).
    e4m3: bool,
}

const E4M3: Format = Format {
    max_norm: 0x7e,
    mantissa_mask: 0x7,
    bias: 7,
    significand_bits: 4,
    min_denorm_half: 0x3F50_0000_0000_0000,    // 2^-10
    overflow_threshold: 0x407D_0000_0000_0000, // 464, the midpoint above 448
    min_norm: 0x3F90_0000_0000_0000,           // 2^-6
    e4m3: true,
};

const E5M2: Format = Format {
    max_norm: 0x7b,
    mantissa_mask: 0x3,
    bias: 15,
    significand_bits: 3,
    min_denorm_half: 0x3EE0_0000_0000_0000,        // 2^-17
    overflow_threshold: 0x40EE_0000_0000_0000 - 1, // just below 61440, the midpoint above 57344
    min_norm: 0x3F10_0000_0000_0000,               // 2^-14
    e4m3: false,
};

/// `x` rounded to the format by the conversion rule (the module's documentation): a port of
/// `__nv_cvt_double_to_fp8(x, __NV_SATFINITE, ...)`.
const fn from_f64_bits(x: f64, f: &Format) -> u8 {
    let xbits = x.to_bits();
    const DP_INF_BITS: u64 = 0x7FF0_0000_0000_0000;
    let half_ulp: u64 = 1 << (53 - f.significand_bits - 1);
    let sign = ((xbits >> 63) << 7) as u8;
    let exp = ((((xbits >> 52) as u16) & 0x7FF).wrapping_sub(1023).wrapping_add(f.bias)) as u8;
    let mantissa = ((xbits >> (53 - f.significand_bits)) & f.mantissa_mask as u64) as u8;
    let absx = xbits & 0x7FFF_FFFF_FFFF_FFFF;
    let res = if absx <= f.min_denorm_half {
        0
    } else if absx > DP_INF_BITS {
        if f.e4m3 { 0x7f } else { 0x7e | mantissa }
    } else if absx > f.overflow_threshold {
        f.max_norm
    } else if absx >= f.min_norm {
        let res = (exp << (f.significand_bits - 1)) | mantissa;
        let round = xbits & ((half_ulp << 1) - 1);
        if round > half_ulp || (round == half_ulp && mantissa & 1 != 0) {
            res + 1
        } else {
            res
        }
    } else {
        let shift = 1u8.wrapping_sub(exp) as u32;
        let mantissa = mantissa | (1 << (f.significand_bits - 1));
        let res = mantissa >> shift;
        let round = (xbits | (1 << 52)) & ((half_ulp << (shift + 1)) - 1);
        let half = half_ulp << shift;
        if round > half || (round == half && res & 1 != 0) {
            res + 1
        } else {
            res
        }
    };
    res | sign
}

/// The `f32` of `bits`: exact; NaN is `0x7fffe000`.
const fn to_f32_bits(bits: u8, f: &Format) -> f32 {
    let sign = ((bits as u32) & 0x80) << 24;
    let mant_bits = f.significand_bits - 1;
    let e = ((bits & 0x7f) >> mant_bits) as u32;
    let m = (bits & f.mantissa_mask) as u32;
    let max_e = (1u32 << (7 - mant_bits)) - 1;
    let magnitude = if f.e4m3 && bits & 0x7f == 0x7f {
        return f32::from_bits(0x7fff_e000);
    } else if !f.e4m3 && e == max_e {
        if m != 0 {
            return f32::from_bits(0x7fff_e000);
        }
        0x7f80_0000
    } else if e == 0 {
        // A subnormal m * 2^(1 - bias - mant_bits): exact in f32.
        let v = m as f32 * f32::from_bits((127 + 1 - f.bias as u32 - mant_bits) << 23);
        v.to_bits()
    } else {
        ((e + 127 - f.bias as u32) << 23) | (m << (23 - mant_bits))
    };
    f32::from_bits(sign | magnitude)
}

macro_rules! fp8_type {
    ($t:ident, $fmt:ident, $cuda:literal, $doc:literal,
     max $max:literal, min_positive $minpos:literal, epsilon $eps:literal, infinity $inf:literal, nan $nan:literal) => {
        #[doc = $doc]
        ///
        /// The conversion rule is the module's (`runtime/src/scalar/fp8.rs`); the C type is
        #[doc = concat!("`", $cuda, "` (`abi/include/cuprum/fp8.h`).")]
        #[derive(Clone, Copy, Default)]
        #[repr(transparent)]
        pub struct $t(u8);

        impl $t {
            /// The largest finite value.
            pub const MAX: $t = $t($max);
            /// The smallest finite value (`-MAX`).
            pub const MIN: $t = $t($max | 0x80);
            /// The smallest positive normal value.
            pub const MIN_POSITIVE: $t = $t($minpos);
            /// The difference between 1 and the next larger value.
            pub const EPSILON: $t = $t($eps);
            /// Positive infinity; for `f8e4m3`, which has none, the value an infinity converts to
            /// (`MAX`, by the saturating rule).
            pub const INFINITY: $t = $t($inf);
            /// Negative infinity (`f8e4m3`: `MIN`).
            pub const NEG_INFINITY: $t = $t($inf | 0x80);
            /// The NaN the device writes.
            pub const NAN: $t = $t($nan);
            /// `0.0`.
            pub const ZERO: $t = $t(0);
            /// `-0.0`.
            pub const NEG_ZERO: $t = $t(0x80);
            /// `1.0`.
            pub const ONE: $t = $t::from_f64(1.0);

            /// The value whose bits are `bits` (every byte is a value).
            pub const fn from_bits(bits: u8) -> $t {
                $t(bits)
            }
            /// The bits of the value.
            pub const fn to_bits(self) -> u8 {
                self.0
            }
            /// `v` by the conversion rule: rounded to nearest even, saturated to `±MAX`, NaN kept.
            pub const fn from_f64(v: f64) -> $t {
                $t(from_f64_bits(v, &$fmt))
            }
            /// `v` by the conversion rule (through `f64`, exactly: one rounding).
            pub const fn from_f32(v: f32) -> $t {
                $t::from_f64(v as f64)
            }
            /// `v` by the conversion rule (through `f64`, exactly: one rounding).
            pub fn from_f16(v: f16) -> $t {
                $t::from_f64(v.to_f64())
            }
            /// `v` by the conversion rule (through `f64`, exactly: one rounding).
            pub fn from_bf16(v: bf16) -> $t {
                $t::from_f64(v.to_f64())
            }
            /// The value as `f32` (exact; NaN is `0x7fffe000`).
            pub const fn to_f32(self) -> f32 {
                to_f32_bits(self.0, &$fmt)
            }
            /// The value as `f64` (exact; NaN is quiet).
            pub const fn to_f64(self) -> f64 {
                self.to_f32() as f64
            }
            /// The value as `f16` (exact: every value of both formats is an `f16`).
            pub fn to_f16(self) -> f16 {
                f16::from_f32(self.to_f32())
            }
            /// The value as `bf16` (exact: every value of both formats is a `bf16`).
            pub fn to_bf16(self) -> bf16 {
                bf16::from_f32(self.to_f32())
            }
            /// Whether the value is NaN.
            pub const fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }
        }

        impl PartialEq for $t {
            fn eq(&self, other: &$t) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &$t) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        impl From<$t> for f32 {
            fn from(v: $t) -> f32 {
                v.to_f32()
            }
        }

        impl From<$t> for f64 {
            fn from(v: $t) -> f64 {
                v.to_f64()
            }
        }

        fp8_type!(@ops $t; Add add +, Sub sub -, Mul mul *, Div div /, Rem rem %);
        fp8_type!(@assign $t; AddAssign add_assign +, SubAssign sub_assign -, MulAssign mul_assign *,
            DivAssign div_assign /, RemAssign rem_assign %);

        impl Neg for $t {
            type Output = $t;
            /// Flips the sign bit (as the device does; `-NaN` is a NaN).
            fn neg(self) -> $t {
                $t(self.0 ^ 0x80)
            }
        }
    };
    (@ops $t:ident; $($tr:ident $f:ident $op:tt),*) => {$(
        impl $tr for $t {
            type Output = $t;
            /// Computed in `f32` and rounded back by the conversion rule.
            fn $f(self, o: $t) -> $t {
                $t::from_f32(self.to_f32() $op o.to_f32())
            }
        }
    )*};
    (@assign $t:ident; $($tr:ident $f:ident $op:tt),*) => {$(
        impl $tr for $t {
            /// Computed in `f32` and rounded back by the conversion rule.
            fn $f(&mut self, o: $t) {
                *self = $t::from_f32(self.to_f32() $op o.to_f32());
            }
        }
    )*};
}

fp8_type!(f8e4m3, E4M3, "cuprum::fp8_e4m3",
    "OCP FP8 E4M3 (\"e4m3fn\"): 4 exponent bits, 3 mantissa bits, max 448, no infinities, NaN `0x7f`/`0xff`.",
    max 0x7e, min_positive 0x08, epsilon 0x20, infinity 0x7e, nan 0x7f);
fp8_type!(f8e5m2, E5M2, "cuprum::fp8_e5m2",
    "OCP FP8 E5M2: 5 exponent bits, 2 mantissa bits, max 57344, IEEE infinities and NaNs.",
    max 0x7b, min_positive 0x04, epsilon 0x34, infinity 0x7c, nan 0x7e);

#[cfg(test)]
mod tests;
