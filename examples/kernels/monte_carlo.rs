//! The kernel of the Monte Carlo port (`examples/monte_carlo.rs`): CuPy's
//! `examples/finance/monte_carlo.py` writes it as an `ElementwiseKernel` with a C preamble (an
//! xorshift128+ generator, a normal deviate by `erfcinv`, the call's payoff); here they are Rust
//! functions, which the example's host reference runs too.
#![allow(dead_code)]

use cuprum::prelude::*;

/// splitmix64's increment (2^64 / golden ratio).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The state of one thread's xorshift128+ generator.
#[device]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Rng {
    pub s0: u64,
    pub s1: u64,
}

/// splitmix64's finaliser, a bijection of 64-bit words that mixes every bit into every other.
#[device]
pub fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator of the thread with loop index `i`: both words hashed from `(i, seed)`. (CuPy's
/// `init_state` takes `(i + 1, 0x5c721fd808f616b6 + seed)`, from which the first two draws are the
/// same for every thread and the next ones close for neighbouring threads.)
#[device]
pub fn seed_rng(i: u64, seed: u64) -> Rng {
    let base = (i ^ (seed << 48)).wrapping_mul(2);
    Rng { s0: mix64(base.wrapping_add(1).wrapping_mul(GOLDEN)), s1: mix64(base.wrapping_add(2).wrapping_mul(GOLDEN)) }
}

/// xorshift128+ with CuPy's shifts (23, 17, 26).
#[device]
pub fn xorshift128plus(rng: &mut Rng) -> u64 {
    let mut s1 = rng.s0;
    let s0 = rng.s1;
    rng.s0 = s0;
    s1 ^= s1 << 23;
    s1 ^= s1 >> 17;
    s1 ^= s0;
    s1 ^= s0 >> 26;
    rng.s1 = s1;
    s0.wrapping_add(s1)
}

/// A uniform number in the open interval (0, 1): the top 53 bits, centred in their step (so
/// never 0 or 1, and exact in f64).
#[device]
pub fn sample_uniform(rng: &mut Rng) -> f64 {
    ((xorshift128plus(rng) >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0)
}

/// The inverse of the standard normal distribution function (P. J. Acklam's rational
/// approximation, relative error below 1.2e-9), its polynomials by fused multiply-adds (`mul_add`:
/// the same on the host, and what nvcc would contract them to): CuPy's example gets its normal
/// deviates from CUDA's `erfcinv`, which the kernel language does not have.
#[device]
pub fn inv_cnd(p: f64) -> f64 {
    let (a1, a2, a3, a4, a5, a6) =
        (-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239);
    let (b1, b2, b3, b4, b5) = (-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1);
    let (c1, c2, c3, c4, c5, c6) =
        (-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783);
    let (d1, d2, d3, d4) = (7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416);
    let p_low = 0.02425;
    if p < p_low || p > 1.0 - p_low {
        // The tails: q = sqrt(-2 ln(min(p, 1 - p))), the sign of p - 1/2.
        let q = (-2.0 * (if p < p_low { p } else { 1.0 - p }).ln()).sqrt();
        let num = c1.mul_add(q, c2).mul_add(q, c3).mul_add(q, c4).mul_add(q, c5).mul_add(q, c6);
        let z = num / d1.mul_add(q, d2).mul_add(q, d3).mul_add(q, d4).mul_add(q, 1.0);
        if p < p_low { z } else { -z }
    } else {
        let q = p - 0.5;
        let r = q * q;
        let num = a1.mul_add(r, a2).mul_add(r, a3).mul_add(r, a4).mul_add(r, a5).mul_add(r, a6);
        num * q / b1.mul_add(r, b2).mul_add(r, b3).mul_add(r, b4).mul_add(r, b5).mul_add(r, 1.0)
    }
}

/// The payoff of the call at expiry for the normal deviate `p`: CuPy's `get_call_value`.
#[device]
pub fn call_value(s: f64, x: f64, p: f64, mu_by_t: f64, v_by_sqrt_t: f64) -> f64 {
    let value = s * (mu_by_t + v_by_sqrt_t * p).exp() - x;
    if value > 0.0 { value } else { 0.0 }
}

/// The present value of a European call (stock price `s`, strike `x`, years to expiry `t`,
/// risk-free rate `r`, volatility `v`) by `n_samples` paths of this element's generator: the mean
/// of the payoffs, discounted. CuPy's `monte_carlo_kernel`, with the loop index choosing the
/// generator.
#[elementwise]
pub fn monte_carlo(s: f64, x: f64, t: f64, r: f64, v: f64, n_samples: u32, seed: u64) -> f64 {
    let mut rng = seed_rng(index() as u64, seed);
    let v_by_sqrt_t = v * t.sqrt();
    let mu_by_t = (r - v * v / 2.0) * t;
    let mut call_sum = 0.0;
    for _ in 0..n_samples {
        let p = inv_cnd(sample_uniform(&mut rng));
        call_sum += call_value(s, x, p, mu_by_t, v_by_sqrt_t);
    }
    (-r * t).exp() * call_sum / n_samples as f64
}
