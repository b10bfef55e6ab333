//! A bf16 GEMM on Hopper's warpgroup tensor cores, written in Rust: the `#[rawkernel]` of
//! examples/kernels_sm90a/gemm_wgmma.rs (`wgmma_m64n256k16` fed by `tma_load_2d` through a ring
//! of mbarrier-guarded stages, warp-specialised and persistent), checked against an f64 host
//! product on sampled entries and timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example gemm_wgmma -- [M N K]` (default 8192 8192
//! 8192; M a multiple of 128, N of 256, K of 64). Needs a compute capability 9.0 GPU (H100, H200):
//! the kernel is built for sm_90a only. `cuprum-bench` prints the same kernel next to cuBLAS's
//! bf16 GEMM measured in the same run.

#[path = "kernels_sm90a/gemm_wgmma.rs"]
mod kernels;

use cuprum::prelude::bf16;
use cuprum::runtime::{Array, Device, Error, Event, LaunchConfig, Result, Stream, Swizzle, TensorMap};
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
        _ => return println!("no CUDA GPU found: the wgmma GEMM example needs one of compute capability 9.0 (H100, H200)"),
    }
    if let Err(e) = run(m, n, k) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The launch of `gemm_wgmma` for C = A B (A: m x k, B: k x n, row-major): the tensor maps of A
/// (boxes of 128 rows x 64) and B (64 x 64), both with the 128-byte swizzle the kernel's
/// `wgmma` reads, and a persistent grid of one block per multiprocessor.
pub fn launch(a: &Array<bf16>, b: &Array<bf16>, c: &mut Array<f32>, (m, n, k): (usize, usize, usize), sms: u32) -> Result<()> {
    // The kernel stores C unchecked and computes nothing if it is short: check the shapes here.
    if a.shape() != [m, k].as_slice() || b.shape() != [k, n].as_slice() || c.len() != m * n {
        return Err(Error::Unsupported {
            what: format!("gemm_wgmma {m}x{n}x{k} needs A of shape [{m}, {k}], B of [{k}, {n}] and C of {} elements; got {:?}, {:?} and {}", m * n, a.shape(), b.shape(), c.len()),
        });
    }
    let ma = TensorMap::new(a, [kernels::BM, kernels::BK], Swizzle::B128)?;
    let mb = TensorMap::new(b, [kernels::BK, 64], Swizzle::B128)?;
    let tiles = (m / kernels::BM as usize * (n / kernels::BN as usize)) as u32;
    let cfg = LaunchConfig::new(tiles.min(sms), kernels::THREADS).shared_mem(kernels::SHARED_BYTES);
    kernels::gemm_wgmma::launch(&cfg, m as u32, n as u32, k as u32, &ma, &mb, c)
}

fn run(m: usize, n: usize, k: usize) -> Result<()> {
    if m % 128 != 0 || n % 256 != 0 || k % 64 != 0 || m == 0 || n == 0 || k == 0 {
        return Err(Error::Unsupported {
            what: format!("{m}x{n}x{k}: the kernel tiles C by 128 x 256 and K by 64; pick M a multiple of 128, N of 256 and K of 64"),
        });
    }
    let device = Device::get(0)?;
    let cc = device.compute_capability();
    if cc != (9, 0) {
        return Err(Error::Unsupported {
            what: format!("wgmma and TMA need compute capability 9.0 (the kernel is built for sm_90a); this GPU is {}.{}", cc.0, cc.1),
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
    let da = Array::from_slice(&a)?.reshape(&[m, k])?;
    let db = Array::from_slice(&b)?.reshape(&[k, n])?;
    let mut dc = Array::from_slice(&vec![f32::NAN; m * n])?;
    let sms = device.multiprocessor_count() as u32;
    launch(&da, &db, &mut dc, (m, n, k), sms)?;
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
    println!("gemm_wgmma {m}x{n}x{k}: worst error on 2000 sampled entries {worst:.1e} (relative to the sum of |terms|)");
    if !(worst <= 1e-5) {
        return Err(Error::Unsupported { what: "the wgmma GEMM result differs from the host reference".into() });
    }
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        launch(&da, &db, &mut dc, (m, n, k), sms)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    println!("gemm_wgmma {m}x{n}x{k}: {t:.3} ms, {tflops:.1} TFLOP/s");
    Ok(())
}
