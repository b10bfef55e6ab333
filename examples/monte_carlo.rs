//! A port of CuPy's Monte Carlo option pricing example (`examples/finance/monte_carlo.py`, with
//! its defaults: 1000 European call options, 100,000 threads an option, 1000 paths a thread, so
//! 10^8 paths an option, f64). One `#[elementwise]` kernel over the (options, threads) grid runs a
//! thread's paths with random numbers generated inside the kernel and writes the mean discounted
//! payoff; the price of an option is the mean along the threads (`mean` along axis 1), as in CuPy.
//! The generator is CuPy's xorshift128+, but each thread's state is hashed from its loop index
//! (splitmix64's finaliser): CuPy's `init_state(i + 1, 0x5c721fd808f616b6 + seed)` gives every
//! thread the same first two draws. The normal deviates are `-sqrt(2) erfcinv(2 u)` of a uniform
//! `u`, as CuPy's (`erfcinv` is the kernel language's, CUDA's on the GPU; CuPy folds `u` into
//! `(1/2, 1]` first, for the same distribution).
//!
//! Checked twice: the first 4 and the last 4 threads' values of every option against the same Rust
//! function run on the host (an error of at most 1e-9 of the value, or of 1e-3 for smaller values:
//! the device's `exp`, `sqrt` and `erfcinv` may differ from the host's in the last bits; the random
//! numbers are the same integers), and each price against the closed-form Black-Scholes price (the
//! Black-Scholes port's kernel, as CuPy's example does): within 6 standard errors (the model's
//! standard deviation of a path's payoff, over the square root of the paths) plus 2e-5 (the
//! polynomial `cnd`'s error, at most 7.5e-8 of `s + x`), and a root mean square of at most 1.5
//! standard errors over the options (a bias; from 100 options). Options that fewer than 1000 paths
//! are expected to exercise are left out of that check (their estimates are a few rare payoffs,
//! far from normal): with the defaults, those whose probability of ending in the money is below
//! 10^-5.
//!
//! Time for the prices (the kernel and the mean, with a synchronize, median of 5), the same
//! inputs, one run each: H100 at d5bc8f5 (normals by `erfcinv`, as CuPy's): cuprum
//! 813.9 ms, CuPy (14.2) 783.9 ms, 0.96 of CuPy's speed. Earlier, on an H200 at 762f2a0, when the
//! normals came from Acklam's rational approximation of the inverse normal distribution function
//! (a division, and `ln`/`sqrt` in the tails): cuprum 1048.5 ms, CuPy 783.7 ms. Both are far from
//! the count below (0.3 s): not profiled. The count undercounts f64
//! `exp` and the 64-bit xorshift (each 64-bit shift or xor is two or more 32-bit instructions).
//! The work is f64 arithmetic: about 50 f64 instructions a path, by our count of the source at
//! 762f2a0 (the uniform number 3; Acklam's function 10 fused multiply-adds, a division and 6
//! more; `exp` about 17; the payoff 6; `ln` and `sqrt` in the 4.85% of draws in the tails), beside
//! the xorshift's 64-bit integer shifts and xors; so 5*10^12 for the 10^11 paths, 0.3 s at an
//! H100 SXM's FP64 rate (132 SMs x 64 lanes x 1.98 GHz = 1.7*10^13 a second). The 800 MB of threads' values are written
//! once and read once by the mean.
//!
//! `cargo run --release -p cuprum-examples --example monte_carlo [-- OPTIONS [THREADS [PATHS]]]`
//! (options; threads an option; paths a thread; default CuPy's 1000 100000 1000). Without a GPU it
//! runs on the CPU device (try `-- 100 64 100`). `MONTE_CARLO_DUMP=/tmp/mc.bin` writes the inputs
//! for `scripts/cupy_monte_carlo.py`, which times CuPy's kernel and mean on them.

#[path = "kernels/black_scholes.rs"]
mod black_scholes;
#[path = "kernels/monte_carlo.rs"]
mod kernels;

use std::time::Instant;

use cuprum::prelude::*;
use cuprum::runtime::{Array, Device, Error, Result};

fn main() {
    let arg = |k: usize, default: usize| std::env::args().nth(k).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (n_options, n_threads, n_samples) = (arg(1, 1000), arg(2, 100_000), arg(3, 1000));
    let device = match Device::count() {
        Ok(c) if c > 0 => Device::get(0),
        _ => {
            println!("no CUDA GPU: running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d, n_options, n_threads, n_samples)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Uniform numbers in `[lo, hi)` (a 64-bit LCG: a fixed, reproducible data set).
fn uniform(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// The standard deviation of one path's discounted payoff under the Black-Scholes model:
/// `E[max(S_T - x, 0)^2]` from `E[S_T^k; S_T > x] = s^k exp(k m + k^2 w^2 / 2) N(d + k w)`, with
/// `ln S_T ~ N(ln s + m, w^2)`, `m = (r - v^2 / 2) t`, `w = v sqrt(t)`, `d = (ln(s / x) + m) / w`.
/// Also the probability that the path ends in the money, `N(d)`.
fn payoff_sd(s: f64, x: f64, t: f64, r: f64, v: f64) -> (f64, f64) {
    let (m, w) = ((r - v * v / 2.0) * t, v * t.sqrt());
    let d = ((s / x).ln() + m) / w;
    let moment = |k: f64| s.powf(k) * (k * m + k * k * w * w / 2.0).exp() * black_scholes::cnd(d + k * w);
    let mean = moment(1.0) - x * moment(0.0);
    let square = moment(2.0) - 2.0 * x * moment(1.0) + x * x * moment(0.0);
    ((-r * t).exp() * (square - mean * mean).max(0.0).sqrt(), moment(0.0))
}

fn failed(what: String) -> Error {
    Error::Unsupported { what: format!("Monte Carlo: {what}") }
}

fn run(device: &Device, n: usize, n_threads: usize, n_samples: usize) -> Result<()> {
    let _current = device.use_scoped()?;
    if n == 0 || n_threads == 0 || n_samples == 0 || n_samples > u32::MAX as usize {
        return Err(failed(format!("need options, threads and paths > 0, paths < 2^32 (got {n} {n_threads} {n_samples})")));
    }
    // CuPy's example's ranges: stock price 5-30, strike 1-100, expiry 0.25-10 years; rate 2%,
    // volatility 30%; seed 0.
    let (s, x, t) = (uniform(n, 1, 5.0, 30.0), uniform(n, 2, 1.0, 100.0), uniform(n, 3, 0.25, 10.0));
    let (r, v, seed) = (0.02, 0.3, 0u64);
    if let Some(path) = std::env::var_os("MONTE_CARLO_DUMP") {
        // For `scripts/cupy_monte_carlo.py`: threads and paths (u64), then s, x, t (f64), little-endian.
        let mut bytes: Vec<u8> = [n_threads as u64, n_samples as u64].iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.extend(s.iter().chain(&x).chain(&t).flat_map(|v| v.to_le_bytes()));
        std::fs::write(&path, bytes).map_err(|e| Error::Unsupported { what: format!("MONTE_CARLO_DUMP: {e}") })?;
    }
    // (options, 1) columns: they broadcast against the (options, threads) values, as CuPy's
    // `stock_price[:, None]`.
    let column = |v: &[f64]| Array::from_shape_vec([n, 1], v.to_vec());
    let (ds, dx, dt) = (column(&s)?, column(&x)?, column(&t)?);
    let paths = n_samples as u32;
    // CuPy's `compute_option_prices`: the threads' values (allocated each call, as in CuPy), their
    // mean along axis 1.
    let prices = || -> Result<(Array<f64>, Array<f64>)> {
        let mut values = Array::<f64>::empty([n, n_threads])?;
        kernels::monte_carlo::call_into(&ds, &dx, &dt, r, v, paths, seed, &mut values)?;
        let price = values.mean().axis(1).run()?;
        Ok((values, price))
    };
    let (values, price) = prices()?;
    let price = price.to_vec()?;

    // The first and last 4 threads of every option against the host.
    let k = n_threads.min(8).div_ceil(2);
    let mut worst = 0f64;
    for cols in [0..k as isize, (n_threads - k) as isize..n_threads as isize] {
        let first = cols.start as usize;
        let got = values.slice(1, cols)?.to_vec()?;
        for (e, g) in got.iter().enumerate() {
            let (o, j) = (e / k, first + e % k);
            let want =
                with_elementwise_index(o * n_threads + j, n * n_threads, || kernels::monte_carlo(s[o], x[o], t[o], r, v, paths, seed));
            let err = (g - want).abs() / want.abs().max(1e-3);
            if err.is_nan() || err > 1e-9 {
                return Err(failed(format!("option {o}, thread {j}: {g}, the host's {want} (relative error {err:.1e})")));
            }
            worst = worst.max(err);
        }
    }

    // Against the closed form: within 6 standard errors (the model's), plus the polynomial cnd's
    // error. The options that fewer than 1000 paths are expected to exercise are left out: their
    // estimates are sums of a few rare payoffs, too far from normal for the bound.
    let (exact, _) = black_scholes::black_scholes::call(&ds.reshape([n])?, &dx.reshape([n])?, &dt.reshape([n])?, r, v)?;
    let exact = exact.to_vec()?;
    let n_paths = (n_threads * n_samples) as f64;
    let (mut worst_z, mut sum_z2, mut tested) = (0f64, 0f64, 0usize);
    for o in 0..n {
        let (sd, exercised) = payoff_sd(s[o], x[o], t[o], r, v);
        if exercised * n_paths < 1000.0 {
            continue;
        }
        let (d, se) = (price[o] - exact[o], sd / n_paths.sqrt());
        let z = d.abs() / se;
        if d.is_nan() || d.abs() > 6.0 * se + 2e-5 {
            return Err(failed(format!(
                "option {o} (s {:.3}, x {:.3}, t {:.3}): {}, Black-Scholes {} ({z:.1} standard errors of {se:.2e})",
                s[o], x[o], t[o], price[o], exact[o]
            )));
        }
        worst_z = worst_z.max(z);
        sum_z2 += z * z;
        tested += 1;
    }
    let rms_z = (sum_z2 / tested.max(1) as f64).sqrt();
    if tested >= 100 && rms_z > 1.5 {
        return Err(failed(format!("the prices are {rms_z:.2} standard errors off (root mean square over {tested} options): biased")));
    }

    device.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        prices()?;
        device.synchronize()?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "Monte Carlo on {n} options, {} paths each (f64): call[0] = {:.6e} (Black-Scholes {:.6e}); worst relative error {worst:.1e} against the host ({} threads)",
        n_threads * n_samples,
        price[0],
        exact[0],
        2 * k * n
    );
    println!("against Black-Scholes ({tested} options): largest error {worst_z:.2} standard errors, root mean square {rms_z:.2}");
    println!("prices: {:.2} ms (median of 5, with the synchronize; {} device)", times[2], if device.is_cpu() { "CPU" } else { "GPU" });
    Ok(())
}
