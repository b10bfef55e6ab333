use cuprum::prelude::*;

/// Methods called as paths (Rust's UFCS): `f32::sin(x)` is `x.sin()`, the receiver first.
#[elementwise]
pub fn ufcs_f32(x: f32, y: f32) -> f32 {
    f32::sin(x) + f32::max(x, 1.0) + f32::atan2(y, x) + f32::clamp(y, -1.0, 1.0) + f32::sqrt(2.0)
}

/// `f64`, a unary method of a method's result, `powi` and `mul_add`.
#[elementwise]
pub fn ufcs_f64(x: f64, n: i32) -> f64 {
    f64::sqrt(f64::abs(x)) + f64::powi(x, n) + f64::mul_add(x, 2.0, 1.0) + f64::hypot(3.0, x)
}

/// A generic parameter: the methods its bound gives (`Float`), also a `#[device]` function's.
#[device]
fn soft<T: Float>(x: T, y: T) -> T {
    T::ln_1p(T::exp(T::copysign(x, y)))
}

#[elementwise]
pub fn ufcs_generic<T: Float>(x: T, y: T) -> T {
    T::sin(x) + T::powf(x, y) + T::atan2(y, x) + T::mul_add(x, y, T::one()) + soft(x, y)
}

/// Integer methods, `to_f64` of `Real`, half and complex methods.
#[elementwise]
pub fn ufcs_other(u: u32, n: i32, h: f16, z: Complex<f32>) -> (f64, f32, Complex<f32>, f32) {
    let k = u32::count_ones(u) + u32::rotate_left(u, 3);
    let m = i32::wrapping_add(i32::pow(n, 2), i32::abs(n));
    (u32::to_f64(k) + i32::to_f64(m), f16::to_f32(h), Complex::<f32>::conj(z), Complex::norm(z))
}
