//! The error-function family (`erf`, `erfc`, `erfinv`, `erfcinv`, `normcdf`, `normcdfinv`) for
//! `gpu_special.rs`, precompiled by this crate's build script.

use cuprum::prelude::*;

/// Each function of its own input: six inputs, six outputs.
#[elementwise(instances = [f32, f64])]
pub fn special_all<T: Float>(a: T, b: T, c: T, d: T, e: T, f: T) -> (T, T, T, T, T, T) {
    (erf(a), erfc(b), erfinv(c), erfcinv(d), normcdf(e), normcdfinv(f))
}

/// CuPy's Monte Carlo example's normal deviate (`-sqrt(2) erfcinv(2 u)`) in a device function,
/// next to `normcdfinv`, which is the same function.
#[device]
pub fn normal_deviate(u: f64) -> f64 {
    -std::f64::consts::SQRT_2 * erfcinv(2.0 * u)
}

#[elementwise]
pub fn deviates(u: f64) -> (f64, f64) {
    (normal_deviate(u), normcdfinv(u))
}
