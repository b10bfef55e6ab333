//! The inverse error functions in `f64` for the host: the `libm` crate has `erf` and `erfc` but no
//! inverses, so these solve `erf(z) = x` and `erfc(z) = y` by Halley's method on libm's functions
//! from a rational first guess.
//!
//! Two regions, each solved where it keeps its precision:
//!
//! - **central**, `|x| <= 1/2` (`erfcinv` of `y` in `[1/2, 3/2]`, where `x = 1 - y` is exact):
//!   `erf(z) = x`, from the Maclaurin series of `erfinv` to `x^7` (relative error below `4e-4`);
//! - **tails**, `y = erfc(z) < 1/2` (`erfinv` of `|x| > 1/2` through the exact `y = 1 - |x|`):
//!   `ln erfc(z) = ln y`, solved on logarithms so that it holds down to the smallest subnormal `y`
//!   (`z = 27.2`), from Winitzki's approximation (relative error below `2e-3`). For `z >= 12`,
//!   `ln erfc(z)` comes from its asymptotic series, `-z^2 - ln(z sqrt(pi)) + ln(1 - 1/(2 z^2) +
//!   3/(2 z^2)^2 - ...)`, since libm's `erfc` loses its precision as it becomes subnormal.
//!
//! Halley's step triples the correct digits; the loop stops after the step that was below `1e-12`
//! of the value, so the last rounding errors are those of the residual: a few ulps.

use std::f64::consts::{FRAC_2_SQRT_PI, PI};

/// The most Halley steps; from the first guesses three suffice.
const MAX_STEPS: usize = 8;

/// Where `ln erfc(z)` comes from the asymptotic series rather than from libm's `erfc`.
const ASYMPTOTIC_FROM: f64 = 12.0;

/// `ln(sqrt(pi))`.
const LN_SQRT_PI: f64 = 0.5723649429247001;

/// `erfinv(x)`: NaN outside `[-1, 1]`, `±inf` at `±1`.
pub(super) fn erfinv(x: f64) -> f64 {
    if x.is_nan() || x.abs() > 1.0 {
        return f64::NAN;
    }
    let a = x.abs();
    if a <= 0.5 {
        return central(x);
    }
    // Exact: `a` is in `[1/2, 1]` (Sterbenz).
    tail(1.0 - a).copysign(x)
}

/// `erfcinv(y)`: NaN outside `[0, 2]`, `inf` at 0, `-inf` at 2.
pub(super) fn erfcinv(y: f64) -> f64 {
    if !(0.0..=2.0).contains(&y) {
        return f64::NAN;
    }
    if y < 0.5 {
        tail(y)
    } else if y <= 1.5 {
        // Exact for `y` in `[1/2, 2]` (Sterbenz); `erfcinv(y) = erfinv(1 - y)`.
        central(1.0 - y)
    } else {
        // `erfcinv(y) = -erfcinv(2 - y)`, `2 - y` exact.
        -tail(2.0 - y)
    }
}

/// `erfinv(x)` for `|x| <= 1/2` (keeps the sign of a zero).
fn central(x: f64) -> f64 {
    // sqrt(pi)/2 (x + pi/12 x^3 + 7 pi^2/480 x^5 + 127 pi^3/40320 x^7).
    let x2 = x * x;
    let series = 0.09766361950392057f64.mul_add(x2, 0.1439317308492198).mul_add(x2, 0.26179938779914946).mul_add(x2, 1.0);
    let mut z = 0.886226925452758 * x * series;
    for _ in 0..MAX_STEPS {
        // f(z) = erf(z) - x, f' = 2/sqrt(pi) exp(-z^2), f'' = -2 z f'.
        let d = (libm::erf(z) - x) / (FRAC_2_SQRT_PI * (-z * z).exp());
        let step = d / z.mul_add(d, 1.0);
        z -= step;
        // Also stops on a NaN step (none from these first guesses; never loop on one).
        if step.abs() <= 1e-12 * z.abs() || step.is_nan() {
            break;
        }
    }
    z
}

/// The `z > 0` with `erfc(z) = y`, for `y` in `[0, 1/2)`.
fn tail(y: f64) -> f64 {
    if y == 0.0 {
        return f64::INFINITY;
    }
    let t = y.ln();
    // Winitzki: with l = ln(1 - x^2) = ln(y (2 - y)) and a = 0.147,
    // z = sqrt(sqrt(b^2 - l/a) - b), b = 2/(pi a) + l/2.
    let l = t + (2.0 - y).ln();
    let b = 2.0 / (PI * 0.147) + 0.5 * l;
    let mut z = ((b * b - l / 0.147).sqrt() - b).sqrt();
    for _ in 0..MAX_STEPS {
        // g(z) = ln erfc(z) - ln y; g' = -h with h = 2/sqrt(pi) exp(-z^2) / erfc(z); g'' = 2 z h - h^2.
        let (g, h) = ln_erfc_minus(z, t);
        let d = -g / h;
        // Halley: d / (1 - d g'' / (2 g')).
        let step = d / d.mul_add(z - 0.5 * h, 1.0);
        z -= step;
        // Also stops on a NaN step (none from these first guesses; never loop on one).
        if step.abs() <= 1e-12 * z.abs() || step.is_nan() {
            break;
        }
    }
    z
}

/// `ln erfc(z) - t` and `h = -d/dz ln erfc(z)`, for `z` above 0.4.
fn ln_erfc_minus(z: f64, t: f64) -> (f64, f64) {
    if z < ASYMPTOTIC_FROM {
        let e = libm::erfc(z);
        return (e.ln() - t, FRAC_2_SQRT_PI * (-z * z).exp() / e);
    }
    // erfc(z) = exp(-z^2) / (z sqrt(pi)) * s, s = sum over k of (-1)^k (2k - 1)!! / (2 z^2)^k; the
    // terms fall below 1e-18 by k = 12 for z >= 12. z^2 is taken exactly (hi + lo), so the residual
    // keeps the precision of `t`.
    let w = 1.0 / (2.0 * z * z);
    let mut s = 0.0;
    for k in (1..=12).rev() {
        s = -((2 * k - 1) as f64) * w * (1.0 + s);
    }
    let s = 1.0 + s;
    let hi = z * z;
    let lo = z.mul_add(z, -hi);
    let g = ((-hi - t) - lo) - (z.ln() + LN_SQRT_PI) + s.ln();
    (g, 2.0 * z / s)
}
