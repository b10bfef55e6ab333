//! The error-function family of the kernel language (docs/kernel-language.md, "Error
//! functions"): [`erf`], [`erfc`], [`erfinv`], [`erfcinv`], [`normcdf`], [`normcdfinv`], free
//! functions of any [`Float`] type, as CUDA's math library has them.
//!
//! Free functions rather than methods: the standard library has an unstable `f32::erf` /
//! `f64::erf` (feature `float_erf`), so a prelude trait method of that name would trip rustc's
//! `unstable_name_collisions` lint in every kernel file that calls it on a concrete float, and
//! would change meaning once std stabilises its own. `erf(x)` reads as in C and CuPy.
//!
//! On the GPU they are CUDA's `erff`/`erf`, `erfcf`/`erfc`, `erfinvf`/`erfinv`,
//! `erfcinvf`/`erfcinv`, `normcdff`/`normcdf`, `normcdfinvf`/`normcdfinv` (`cuprum/math.h`); `f16`
//! and `bf16` compute in `f32` and round back, as the other float functions do. On the host (and
//! the CPU device) every type computes in `f64` and rounds once: `erf` and `erfc` are the `libm`
//! crate's, the inverses are solved on them (`inverse`: libm has none), each within a few ulps of
//! `f64`, so the host's `f32` results are within an ulp of the exact values and serve as the
//! references of the device's.

mod inverse;

use std::f64::consts::{FRAC_1_SQRT_2, FRAC_2_SQRT_PI, SQRT_2};

use super::traits::Float;

/// The error function `2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt`: CUDA `erff` / `erf`.
/// Odd, in `[-1, 1]`; `erf(±inf) = ±1`, NaN for NaN.
pub fn erf<T: Float>(x: T) -> T {
    T::from_f64(erf_f64(x.to_f64()))
}

/// The complementary error function `1 - erf(x)`, accurate where `erf(x)` is close to 1 (it
/// keeps its relative precision down to `erfc(26.5) = 1e-307`): CUDA `erfcf` / `erfc`. In
/// `[0, 2]`; `erfc(-inf) = 2`, `erfc(inf) = 0`.
pub fn erfc<T: Float>(x: T) -> T {
    T::from_f64(erfc_f64(x.to_f64()))
}

/// The inverse error function: the `y` with `erf(y) = x`, for `x` in `[-1, 1]`: CUDA `erfinvf` /
/// `erfinv`. `erfinv(±1) = ±inf`; NaN outside `[-1, 1]` and for NaN.
pub fn erfinv<T: Float>(x: T) -> T {
    T::from_f64(erfinv_f64(x.to_f64()))
}

/// The inverse complementary error function: the `y` with `erfc(y) = x`, for `x` in `[0, 2]`,
/// accurate for `x` close to 0 (where `erfinv(1 - x)` would lose it): CUDA `erfcinvf` /
/// `erfcinv`. `erfcinv(0) = inf`, `erfcinv(2) = -inf`; NaN outside `[0, 2]` and for NaN.
pub fn erfcinv<T: Float>(x: T) -> T {
    T::from_f64(erfcinv_f64(x.to_f64()))
}

/// The standard normal distribution function `erfc(-x / sqrt(2)) / 2`: CUDA `normcdff` /
/// `normcdf`. In `[0, 1]`, accurate for large negative `x` (the lower tail).
pub fn normcdf<T: Float>(x: T) -> T {
    T::from_f64(normcdf_f64(x.to_f64()))
}

/// The inverse of the standard normal distribution function, `-sqrt(2) * erfcinv(2 p)`, for `p`
/// in `[0, 1]`: CUDA `normcdfinvf` / `normcdfinv`. `normcdfinv(0) = -inf`, `normcdfinv(1) = inf`;
/// NaN outside `[0, 1]` and for NaN.
pub fn normcdfinv<T: Float>(p: T) -> T {
    T::from_f64(normcdfinv_f64(p.to_f64()))
}

fn erf_f64(x: f64) -> f64 {
    libm::erf(x)
}

fn erfc_f64(x: f64) -> f64 {
    libm::erfc(x)
}

fn erfinv_f64(x: f64) -> f64 {
    inverse::erfinv(x)
}

fn erfcinv_f64(x: f64) -> f64 {
    inverse::erfcinv(x)
}

/// `1/sqrt(2) - FRAC_1_SQRT_2`: the part of `1/sqrt(2)` that `f64` does not hold.
const FRAC_1_SQRT_2_LO: f64 = -4.833646656726457e-17;

/// `erfc(z) / 2` with `z = -x / sqrt(2)`: the rounding error `dz` of `z` is carried into the
/// result by the first Taylor term, `erfc(z + dz) = erfc(z) - 2/sqrt(pi) exp(-z^2) dz` (in the
/// lower tail a relative error of `z` is one of about `2 z^2` in the result).
fn normcdf_f64(x: f64) -> f64 {
    let z = -x * FRAC_1_SQRT_2;
    if !z.is_finite() {
        return 0.5 * libm::erfc(z);
    }
    let dz = (-x).mul_add(FRAC_1_SQRT_2, -z) + -x * FRAC_1_SQRT_2_LO;
    0.5 * (libm::erfc(z) - FRAC_2_SQRT_PI * (-z * z).exp() * dz)
}

fn normcdfinv_f64(p: f64) -> f64 {
    -SQRT_2 * inverse::erfcinv(2.0 * p)
}

#[cfg(test)]
mod tests;
