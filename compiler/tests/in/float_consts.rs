use cuprum::prelude::*;

/// Associated constants of the concrete types: `f32::INFINITY`, `f64::consts::PI`, `i32::MAX`,
/// `u32::BITS`, through the full `std::f64::consts` path too.
#[elementwise]
pub fn constants(x: f32, n: i32) -> (f32, f64, i64) {
    let big = if x.is_finite() { x } else { f32::MAX };
    let clipped = big.max(f32::NEG_INFINITY).min(f32::INFINITY) + f32::EPSILON - f32::MIN_POSITIVE;
    let nan_free = if clipped.is_nan() { f32::NAN.max(0.0) } else { clipped + f32::MIN.abs() * 0.0 };
    let angle = f64::consts::PI * 2.0 + std::f64::consts::E - core::f64::consts::TAU
        + f64::consts::SQRT_2 * f64::consts::FRAC_1_SQRT_2 + f64::consts::LN_2 + f64::consts::LN_10
        + f64::consts::FRAC_PI_2 + f64::consts::FRAC_PI_4 + f64::consts::FRAC_1_PI
        + f64::consts::LOG2_E + f64::consts::LOG10_E;
    let ints = (i32::MAX - n) as i64 + i64::MIN / 2 + u8::MAX as i64 + i8::MIN as i64
        + u32::BITS as i64 + u64::BITS as i64 + i16::MAX as i64 + u64::MIN as i64;
    (nan_free + std::f32::consts::PI, angle, ints)
}
