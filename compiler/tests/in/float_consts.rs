use cuprum::prelude::*;
use std::f32::consts::{FRAC_PI_2, PI as PI32};
use std::f64::consts::*;

/// File-level constants of primitive types.
const HALF: f64 = 0.5;
const LIMIT: i64 = 1 << 40;
const ENABLED: bool = true;

/// Associated constants of the concrete types: `f32::INFINITY`, `std::f64::consts::PI` (also
/// through `core::`), `i32::MAX`, `u32::BITS`.
#[elementwise]
pub fn constants(x: f32, n: i32) -> (f32, f64, i64) {
    let big = if x.is_finite() { x } else { f32::MAX };
    let clipped = big.max(f32::NEG_INFINITY).min(f32::INFINITY) + f32::EPSILON - f32::MIN_POSITIVE;
    let nan_free = if clipped.is_nan() { f32::NAN.max(0.0) } else { clipped + f32::MIN.abs() * 0.0 };
    let angle = std::f64::consts::PI * 2.0 + std::f64::consts::E - core::f64::consts::TAU
        + std::f64::consts::SQRT_2 * std::f64::consts::FRAC_1_SQRT_2 + std::f64::consts::LN_2 + std::f64::consts::LN_10
        + std::f64::consts::FRAC_PI_2 + std::f64::consts::FRAC_PI_4 + std::f64::consts::FRAC_1_PI
        + std::f64::consts::LOG2_E + std::f64::consts::LOG10_E;
    let ints = (i32::MAX - n) as i64 + i64::MIN / 2 + u8::MAX as i64 + i8::MIN as i64
        + u32::BITS as i64 + u64::BITS as i64 + i16::MAX as i64 + u64::MIN as i64;
    (nan_free + std::f32::consts::PI, angle, ints)
}

/// Imported float constants (`use std::f32::consts::..`) and file `const` items.
#[elementwise]
pub fn imported_consts(x: f32, n: i64) -> (f32, f64, i64) {
    let a = if ENABLED { x * PI32 + FRAC_PI_2 } else { x };
    let b = SQRT_2 * HALF + LN_2;
    (a, b, n.min(LIMIT))
}
