//! The kernel of the Black-Scholes port (`examples/black_scholes.rs`): CuPy's
//! `examples/finance/black_scholes.py` writes it as an `ElementwiseKernel` with a C preamble for
//! the cumulative normal distribution; here both are Rust functions.
#![allow(dead_code)]

use cuprum::prelude::*;

/// The cumulative normal distribution, by the polynomial approximation of CuPy's example
/// (Abramowitz and Stegun 26.2.17).
#[device]
pub fn cnd(x: f64) -> f64 {
    let (a1, a2, a3, a4, a5) = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429);
    let rsqrt2pi = 0.398_942_280_401_432_7;
    let k = 1.0 / (1.0 + 0.2316419 * x.abs());
    let c = rsqrt2pi * (-x * x / 2.0).exp() * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    if x > 0.0 { 1.0 - c } else { c }
}

/// The price of a European call and put: stock price `s`, strike `x`, years to expiry `t`,
/// risk-free rate `r`, volatility `v`.
#[elementwise]
pub fn black_scholes(s: f64, x: f64, t: f64, r: f64, v: f64) -> (f64, f64) {
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).ln() + (r + v * v / 2.0) * t) / (v * sqrt_t);
    let d2 = d1 - v * sqrt_t;
    let (cnd_d1, cnd_d2) = (cnd(d1), cnd(d2));
    let exp_rt = (-r * t).exp();
    (s * cnd_d1 - x * exp_rt * cnd_d2, x * exp_rt * (1.0 - cnd_d2) - s * (1.0 - cnd_d1))
}
