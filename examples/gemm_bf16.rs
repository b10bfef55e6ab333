//! A bf16 GEMM on tensor cores, written in Rust: the `#[rawkernel]` of examples/kernels/gemm_bf16.rs
//! (`mma_m16n8k16` fed by `cp_async` and `ldmatrix`), checked against an f64 host product on
//! sampled entries and timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example gemm_bf16 -- [M N K]` (default 8192 8192 8192;
//! M and N multiples of 128, K a multiple of 32). Prints TFLOP/s; `cuprum-bench` prints the same
//! kernel next to cuBLAS's bf16 GEMM measured in the same run.

#[path = "kernels/gemm_bf16.rs"]
mod kernels;

use cuprum::prelude::bf16;
use cuprum::runtime::{Array, Device, Error, Event, LaunchConfig, Result, Stream};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (m, n, k) = match args[..] {
        [m, n, k] => (m, n, k),
        _ => (8192, 8192, 8192),
    };
    match Device::count() {
        Ok(c) if c > 0 => {}
        _ => return println!("no CUDA GPU found: the bf16 GEMM example needs one (compute capability 8.0 or newer)"),
    }
    if let Err(e) = run(m, n, k) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(m: usize, n: usize, k: usize) -> Result<()> {
    if m % 128 != 0 || n % 128 != 0 || k % 32 != 0 || m == 0 || n == 0 || k == 0 {
        return Err(Error::Unsupported {
            what: format!("{m}x{n}x{k}: the kernel tiles C by 128 x 128 and K by 32; pick M and N multiples of 128 and K a multiple of 32"),
        });
    }
    let cc = Device::get(0)?.compute_capability();
    if cc < (8, 0) {
        return Err(Error::Unsupported {
            what: format!("tensor-core bf16 needs compute capability 8.0 or newer; this GPU is {}.{}", cc.0, cc.1),
        });
    }
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => v.trim().parse().unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?} is not a decimal u64: {e}")),
        Err(_) => rand::random(),
    };
    println!("seed = {seed} (set CUPRUM_TEST_SEED={seed} to reproduce)");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rnd = || bf16::from_f32(rng.random_range(-1.0f32..1.0));
    let a: Vec<bf16> = (0..m * k).map(|_| rnd()).collect();
    let b: Vec<bf16> = (0..k * n).map(|_| rnd()).collect();
    let (da, db) = (Array::from_slice(&a)?, Array::from_slice(&b)?);
    let mut dc = Array::from_slice(&vec![f32::NAN; m * n])?;
    let cfg = LaunchConfig::new(((n / 128) as u32, (m / 128) as u32), 128u32);
    let (mu, nu, ku) = (m as u32, n as u32, k as u32);
    kernels::gemm_bf16::launch(&cfg, mu, nu, ku, &da, &db, &mut dc)?;
    let c = dc.to_vec()?;
    // Sampled entries against an f64 host reference, relative to the sum of |terms| (the products
    // are exact in f32; only the f32 sums round).
    let mut worst = 0.0f64;
    for s in 0..2000usize {
        let (i, j) = ((s * 7919) % m, (s * 104_729) % n);
        let terms = (0..k).map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64());
        let (want, scale) = terms.fold((0.0, 1.0), |(w, s), t| (w + t, s + t.abs()));
        worst = worst.max((c[i * n + j] as f64 - want).abs() / scale);
    }
    println!("gemm_bf16 {m}x{n}x{k}: worst error on 2000 sampled entries {worst:.1e} (relative to the sum of |terms|)");
    if !(worst <= 1e-5) {
        return Err(Error::Unsupported { what: "the bf16 GEMM result differs from the host reference".into() });
    }
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        kernels::gemm_bf16::launch(&cfg, mu, nu, ku, &da, &db, &mut dc)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    println!("gemm_bf16 {m}x{n}x{k}: {t:.3} ms, {tflops:.1} TFLOP/s");
    Ok(())
}
