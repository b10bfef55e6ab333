//! CuPy's SGEMM example in Rust: a MAGMA-style tiled `#[rawkernel]` (examples/kernels/sgemm.rs),
//! checked against a host reference in f64 on sampled entries, timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example sgemm -- [M N K]` (default 4096 4096 4096).
//! Prints TFLOP/s (2 M N K flops per call). `cuprum-bench` times the same kernel at 4096^3 next to
//! cuBLAS's SGEMM in the same run (benches/src/sgemm.rs; docs/kernel-language.md).

#[path = "kernels/sgemm.rs"]
mod kernels;

use cuprum::runtime::{Array, Device, Error, Event, LaunchConfig, Result, Stream};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (m, n, k) = match args[..] {
        [m, n, k] => (m, n, k),
        _ => (4096, 4096, 4096),
    };
    match Device::count() {
        Ok(c) if c > 0 => {}
        _ => return println!("no CUDA GPU found: the SGEMM example needs one"),
    }
    if let Err(e) = run(m, n, k) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(m: usize, n: usize, k: usize) -> Result<()> {
    // Fortran order (column-major), as CuPy's example enforces with `asfortranarray`. Uniform
    // inputs in [-0.5, 0.5), from a printed seed (`CUPRUM_TEST_SEED=N` replays one).
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?} is not a decimal u64: {e}")),
        Err(_) => rand::random(),
    };
    println!("seed = {seed} (set CUPRUM_TEST_SEED={seed} to reproduce)");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut rnd = || rng.random_range(-0.5f32..0.5);
    let a: Vec<f32> = (0..m * k).map(|_| rnd()).collect();
    let b: Vec<f32> = (0..k * n).map(|_| rnd()).collect();
    let c0: Vec<f32> = (0..m * n).map(|_| rnd()).collect();
    let (alpha, beta) = (1.5f32, -0.5f32);
    let (da, db) = (Array::from_slice(&a)?, Array::from_slice(&b)?);
    let mut dc = Array::from_slice(&c0)?;
    // One block of 256 threads per 128 x 128 tile of C.
    let cfg = LaunchConfig::new((m.div_ceil(128) as u32, n.div_ceil(128) as u32), 256);
    let (mu, nu, ku) = (m as u32, n as u32, k as u32);
    kernels::sgemm::launch(&cfg, mu, nu, ku, alpha, &da, &db, beta, &mut dc)?;
    let c = dc.to_vec()?;
    // Check sampled entries against an f64 host reference.
    let mut worst = 0.0f64;
    for s in 0..2000usize {
        let (i, j) = ((s * 7919) % m, (s * 104_729) % n);
        let dot: f64 = (0..k)
            .map(|p| a[i + p * m] as f64 * b[p + j * k] as f64)
            .sum();
        let want = alpha as f64 * dot + beta as f64 * c0[i + j * m] as f64;
        let scale: f64 = (0..k)
            .map(|p| (a[i + p * m] as f64 * b[p + j * k] as f64).abs())
            .sum::<f64>()
            + 1.0;
        worst = worst.max((c[i + j * m] as f64 - want).abs() / scale);
    }
    println!(
        "sgemm {m}x{n}x{k}: worst error on 2000 sampled entries {worst:.1e} (relative to the sum of |terms|)"
    );
    if worst > 1e-5 {
        return Err(Error::Unsupported {
            what: "SGEMM result differs from the host reference".into(),
        });
    }
    // Timing: 2 warm-up launches, then the median of 10.
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        kernels::sgemm::launch(&cfg, mu, nu, ku, alpha, &da, &db, beta, &mut dc)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    println!("sgemm {m}x{n}x{k}: {t:.3} ms, {tflops:.2} TFLOP/s");
    Ok(())
}
