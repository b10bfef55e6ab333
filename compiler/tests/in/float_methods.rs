use cuprum::prelude::*;

/// The float methods of the prelude on a concrete type.
#[elementwise]
pub fn float_methods_f32(x: f32, y: f32) -> f32 {
    let a = x.sqrt() + x.cbrt() + x.exp() + x.exp2() + x.exp_m1() + x.ln() + x.ln_1p();
    let b = x.log2() + x.log10() + x.sin() + x.cos() + x.tan() + x.asin() + x.acos() + x.atan();
    let c = x.sinh() + x.cosh() + x.tanh() + x.asinh() + x.acosh() + x.atanh();
    let d = x.abs() + x.floor() + x.ceil() + x.round() + x.trunc() + x.fract() + x.signum();
    let e = x.recip() + x.to_degrees() + x.to_radians() + x.powi(3) + x.powf(y);
    let f = x.atan2(y) + x.hypot(y) + x.copysign(y) + x.min(y) + x.max(y);
    let g = x.mul_add(y, 1.0) + x.clamp(-1.0, 1.0);
    let flags = x.is_nan() || x.is_finite() && !x.is_infinite() || x.is_sign_negative();
    let h = if flags { 1.0 } else { 0.0 };
    a + b + c + d + e + f + g + h
}

/// The same methods through a generic `Float` bound, for f64 and f16.
#[elementwise(instances = [f64, f16])]
pub fn float_methods_generic<T: Float>(x: T, y: T) -> T {
    let a = x.sqrt() * x.exp() - x.ln().abs() + x.sin().powi(2) + x.cos().powf(y);
    let b = x.floor().max(y.ceil()).min(x.round()) + x.trunc().hypot(y);
    let c = x.mul_add(y, T::one()).tanh() + x.atan2(y) + x.signum() * x.recip();
    if x.is_nan() || y.is_infinite() { T::zero() } else { a + b + c }
}

/// Bit access: `to_bits` / `from_bits`.
#[elementwise]
pub fn flip_sign_bits(x: f64) -> (u64, f32) {
    let bits = x.to_bits() ^ 0x8000_0000_0000_0000;
    let single = f32::from_bits(((bits >> 32) as u32) & 0x7fff_ffff);
    (bits, single)
}
