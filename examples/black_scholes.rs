//! A port of CuPy's Black-Scholes example (`examples/finance/black_scholes.py`): the prices of
//! 10^7 European call and put options (f64) by one `#[elementwise]` kernel with two outputs,
//! checked against the same Rust function run on the host.
//!
//! Time of the kernel (with a synchronize, median of 10), H100, one run, the same inputs:
//! cuprum 0.176-0.179 ms, CuPy (14.2) 0.178-0.183 ms (two runs). The inputs and outputs are 400 MB: 0.13 ms at the
//! copy ceiling, 0.73 of it with this much f64 arithmetic per element (`exp`, `ln`, `sqrt`, two
//! `cnd`s). This example found a cost of the elementwise loop: with 4 items of 2 elements per
//! thread, the kernel's 7 operands held 158 registers (one block of 256 threads per SM, Nsight
//! Compute) and it took 0.29 ms; kernels with more than 4 operands now take fewer items per step
//! (`unroll_for` in `abi/include/cuprum/elementwise.h`: 64 registers here, 0.42 achieved
//! occupancy). `scripts/black_scholes_shapes.py` times the loop shapes in plain CUDA C.
//!
//! `cargo run --release -p cuprum-examples --example black_scholes [-- N]` (N options; default
//! 10^7). Without a GPU it runs on the CPU device. `BLACK_SCHOLES_DUMP=/tmp/bs.bin` writes the
//! inputs for `scripts/cupy_black_scholes.py`, which times CuPy's kernel on them.

#[path = "kernels/black_scholes.rs"]
mod kernels;

use std::time::Instant;

use cuprum::runtime::{Array, Device, Error, Result};

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let device = match Device::count() {
        Ok(c) if c > 0 => Device::get(0),
        _ => {
            println!("no CUDA GPU: running on the CPU device");
            Ok(Device::cpu())
        }
    };
    if let Err(e) = device.and_then(|d| run(&d, n)) {
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

fn run(device: &Device, n: usize) -> Result<()> {
    let _current = device.use_scoped()?;
    // CuPy's example's ranges: stock price 5-30, strike 1-100, expiry 0.25-10 years; rate 2%,
    // volatility 30%.
    let (s, x, t) = (uniform(n, 1, 5.0, 30.0), uniform(n, 2, 1.0, 100.0), uniform(n, 3, 0.25, 10.0));
    let (r, v) = (0.02, 0.3);
    if let Some(path) = std::env::var_os("BLACK_SCHOLES_DUMP") {
        let bytes: Vec<u8> = s.iter().chain(&x).chain(&t).flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&path, bytes).map_err(|e| Error::Unsupported { what: format!("BLACK_SCHOLES_DUMP: {e}") })?;
    }
    let (ds, dx, dt) = (Array::from_slice(&s)?, Array::from_slice(&x)?, Array::from_slice(&t)?);
    let (mut call, mut put) = (Array::from_vec(vec![f64::NAN; n])?, Array::from_vec(vec![f64::NAN; n])?);
    kernels::black_scholes::call_into(&ds, &dx, &dt, r, v, &mut call, &mut put)?;
    let (c, p) = (call.to_vec()?, put.to_vec()?);
    let mut worst = 0f64;
    for i in 0..n {
        let (wc, wp) = kernels::black_scholes(s[i], x[i], t[i], r, v);
        // The device's exp/log/sqrt may differ from the host's in the last bits.
        let err = ((c[i] - wc).abs() / wc.abs().max(1e-3)).max((p[i] - wp).abs() / wp.abs().max(1e-3));
        worst = worst.max(err);
    }
    if worst > 1e-9 {
        return Err(Error::Unsupported { what: format!("Black-Scholes differs from the host reference: relative error {worst:.1e}") });
    }
    device.synchronize()?;
    let mut times = Vec::new();
    for _ in 0..10 {
        let t0 = Instant::now();
        kernels::black_scholes::call_into(&ds, &dx, &dt, r, v, &mut call, &mut put)?;
        device.synchronize()?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!("Black-Scholes on {n} options (f64): call[0] = {:.6}, put[0] = {:.6}, worst relative error {worst:.1e} against the host", c[0], p[0]);
    println!("kernel: {:.3} ms (median of 10, with the synchronize; {} device)", times[5], if device.is_cpu() { "CPU" } else { "GPU" });
    Ok(())
}
