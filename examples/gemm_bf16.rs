//! A bf16 GEMM on tensor cores, written in Rust: the `#[rawkernel]`s of examples/kernels/gemm_bf16.rs
//! (`mma_m16n8k16` fed by `cp_async` and `ldmatrix`), checked against an f64 host product on
//! sampled entries and timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example gemm_bf16 -- [square|wide_pf] [M N K]`
//! (default wide_pf, 8192 8192 8192). `wide_pf`, `gemm_bf16_wide_pf`, tiles C by 128 x 256 in
//! dynamic shared memory with its fragments loaded a k-step ahead (M a multiple of 128, N of 256,
//! K of `WBK`); `square`, `gemm_bf16`, by 128 x 128 (M and N multiples of 128, K of 32).
//! Prints TFLOP/s; `cuprum-bench` prints the same kernel next to cuBLAS's bf16 GEMM measured in the
//! same run. With `CUPRUM_DEVICE=cpu` it runs on the CPU device (default 128 256 128), checks every
//! entry and times nothing.

#[path = "kernels/gemm_bf16.rs"]
mod kernels;

use cuprum::prelude::bf16;
use cuprum::runtime::{Array, Device, Error, Event, LaunchConfig, Result, Stream};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};

/// Which kernel, with its tile of C and k-step.
#[derive(Clone, Copy)]
enum Kernel {
    /// `gemm_bf16`: 128 x 128, 4 warps, static shared memory.
    Square,
    /// `gemm_bf16_wide_pf`: 128 x 256, 8 warps, dynamic shared memory, fragments a k-step ahead.
    WidePf,
}

impl Kernel {
    fn tile(self) -> (usize, usize, usize) {
        match self {
            Kernel::Square => (128, 128, 32),
            Kernel::WidePf => (kernels::WBM as usize, kernels::WBN as usize, kernels::WBK as usize),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kernel::Square => "gemm_bf16",
            Kernel::WidePf => "gemm_bf16_wide_pf",
        }
    }

    /// C = A B on the current device.
    fn launch(self, m: usize, n: usize, k: usize, a: &Array<bf16>, b: &Array<bf16>, c: &mut Array<f32>) -> Result<()> {
        let (bm, bn, _) = self.tile();
        let grid = ((n / bn) as u32, (m / bm) as u32);
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        match self {
            Kernel::Square => kernels::gemm_bf16::launch(&LaunchConfig::new(grid, 128u32), mu, nu, ku, a, b, c),
            Kernel::WidePf => {
                let cfg = LaunchConfig::new(grid, kernels::WIDE_THREADS).shared_mem(kernels::WIDE_SHARED_BYTES);
                kernels::gemm_bf16_wide_pf::launch(&cfg, mu, nu, ku, a, b, c)
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `gemm_bf16_wide_pf` by default: the fastest on an H200 (session 26: 485 TFLOP/s at 8192^3
    // against 406 for `gemm_bf16` and cuBLAS's 760-765).
    let kernel = match args.iter().find(|a| a.starts_with("wide") || a.as_str() == "square").map(String::as_str) {
        Some("square") => Kernel::Square,
        Some("wide_pf") | None => Kernel::WidePf,
        Some(other) => return eprintln!("unknown kernel {other:?}: pass square or wide_pf (or nothing for wide_pf)"),
    };
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let on_cpu = Device::current().map(|d| d.is_cpu()).unwrap_or(false);
    let (m, n, k) = match nums[..] {
        [m, n, k] => (m, n, k),
        _ if on_cpu => (128, 256, 128),
        _ => (8192, 8192, 8192),
    };
    if !on_cpu {
        match Device::count() {
            Ok(c) if c > 0 => {}
            _ => return println!("no CUDA GPU found: the bf16 GEMM example needs one (compute capability 8.0 or newer), or CUPRUM_DEVICE=cpu"),
        }
    }
    if let Err(e) = run(kernel, m, n, k, on_cpu) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(kernel: Kernel, m: usize, n: usize, k: usize, on_cpu: bool) -> Result<()> {
    let (bm, bn, bk) = kernel.tile();
    if !m.is_multiple_of(bm) || !n.is_multiple_of(bn) || !k.is_multiple_of(bk) || m == 0 || n == 0 || k == 0 {
        let name = kernel.name();
        return Err(Error::Unsupported {
            what: format!("{m}x{n}x{k}: {name} tiles C by {bm} x {bn} and K by {bk}; pick M a multiple of {bm}, N of {bn} and K of {bk}"),
        });
    }
    let cc = if on_cpu { (8, 0) } else { Device::get(0)?.compute_capability() };
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
    let name = kernel.name();
    kernel.launch(m, n, k, &da, &db, &mut dc)?;
    let c = dc.to_vec()?;
    // Sampled entries (every one on the CPU device) against an f64 host reference, relative to
    // the sum of |terms| (the products are exact in f32; only the f32 sums round).
    let mut worst = 0.0f64;
    let samples = if on_cpu { m * n } else { 2000 };
    for s in 0..samples {
        let (i, j) = if on_cpu { (s / n, s % n) } else { ((s * 7919) % m, (s * 104_729) % n) };
        let terms = (0..k).map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64());
        let (want, scale) = terms.fold((0.0, 1.0), |(w, s), t| (w + t, s + t.abs()));
        worst = worst.max((c[i * n + j] as f64 - want).abs() / scale);
    }
    println!("{name} {m}x{n}x{k}: worst error on {samples} sampled entries {worst:.1e} (relative to the sum of |terms|)");
    if !(worst <= 1e-5) {
        return Err(Error::Unsupported { what: format!("the result of {name} differs from the host reference") });
    }
    if on_cpu {
        return Ok(());
    }
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        kernel.launch(m, n, k, &da, &db, &mut dc)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    println!("{name} {m}x{n}x{k}: {t:.3} ms, {tflops:.1} TFLOP/s");
    Ok(())
}
