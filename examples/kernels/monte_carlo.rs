//! The kernel of the Monte Carlo port (`examples/monte_carlo.rs`): CuPy's
//! `examples/finance/monte_carlo.py` writes it as an `ElementwiseKernel` with a C preamble (an
//! xorshift128+ generator, a normal deviate by `erfcinv`, the call's payoff); here they are Rust
//! functions (`erfcinv` the prelude's), which the example's host reference runs too.
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

/// A uniform number in the open interval (0, 1): the top 52 bits, centred in their step, so
/// never 0 or 1 and exact in f64 (with 53 bits, `k + 0.5` rounds for `k >= 2^52`, and the largest
/// `k` gives 1).
#[device]
pub fn sample_uniform(rng: &mut Rng) -> f64 {
    ((xorshift128plus(rng) >> 12) as f64 + 0.5) * (1.0 / 4_503_599_627_370_496.0)
}

/// A standard normal deviate: the inverse of the normal distribution function at a uniform `u`,
/// `-sqrt(2) erfcinv(2 u)`, by CUDA's `erfcinv` as in CuPy's `sample_normal` (which first folds
/// `u` into `(1/2, 1]` and takes the sign from the fold: the same distribution). `2 u` is exact,
/// so the lower tail keeps its precision; `u` never reaches 0 or 1, so neither is infinite.
#[device]
pub fn sample_normal(rng: &mut Rng) -> f64 {
    -std::f64::consts::SQRT_2 * erfcinv(2.0 * sample_uniform(rng))
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
        let p = sample_normal(&mut rng);
        call_sum += call_value(s, x, p, mu_by_t, v_by_sqrt_t);
    }
    (-r * t).exp() * call_sum / n_samples as f64
}
