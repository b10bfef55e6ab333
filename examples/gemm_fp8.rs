//! An FP8 GEMM with per-tensor scales on Hopper's warpgroup tensor cores, written in Rust: the
//! `#[rawkernel]` of examples/kernels_sm90a/gemm_fp8.rs (`wgmma_m64n256k32` on `f8e4m3` operands
//! fed by `tma_load_2d`, warp-specialised and persistent), C (bf16) = scale_a * scale_b * A * B
//! with B given transposed (B^T: N x K, as cuBLASLt's and `torch._scaled_mm`'s FP8 GEMMs take
//! it), checked against an f64 host product on sampled entries and timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example gemm_fp8 -- [M N K]` (default 8192 8192 8192;
//! M a multiple of 128, N of 256, K of 128). Needs a compute capability 9.0 GPU (H100, H200): the
//! kernel is built for sm_90a only. `cuprum-bench` prints the same kernel's row;
//! benches/fp8_torch.py measures `torch._scaled_mm` on the same shape for the comparison.

#[path = "kernels_sm90a/gemm_fp8.rs"]
mod kernels;

use cuprum::prelude::{bf16, f8e4m3};
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
        _ => return println!("no CUDA GPU found: the FP8 GEMM example needs one of compute capability 9.0 (H100, H200)"),
    }
    if let Err(e) = run(m, n, k) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The launch of `gemm_fp8` for C = scale_a scale_b A B (A: m x k, B^T: n x k, both row-major,
/// C: m x n): the tensor maps of A (boxes of 128 rows x 128) and B^T (256 x 128), both with the
/// 128-byte swizzle the kernel's `wgmma` reads, and a persistent grid of one block per
/// multiprocessor.
pub fn launch(
    a: &Array<f8e4m3>,
    bt: &Array<f8e4m3>,
    scales: (f32, f32),
    c: &mut Array<bf16>,
    (m, n, k): (usize, usize, usize),
    sms: u32,
) -> Result<()> {
    // The kernel stores C unchecked and computes nothing if it is short: check the shapes here.
    if a.shape() != [m, k].as_slice() || bt.shape() != [n, k].as_slice() || c.len() != m * n {
        return Err(Error::Unsupported {
            what: format!(
                "gemm_fp8 {m}x{n}x{k} needs A of shape [{m}, {k}], B^T of [{n}, {k}] and C of {} elements; got {:?}, {:?} and {}",
                m * n,
                a.shape(),
                bt.shape(),
                c.len()
            ),
        });
    }
    if m % kernels::BM as usize != 0 || n % kernels::BN as usize != 0 || k % kernels::BK as usize != 0 || m * n * k == 0 {
        return Err(Error::Unsupported {
            what: format!(
                "gemm_fp8 {m}x{n}x{k}: the kernel tiles C by 128 x 256 and K by 128; pick M a multiple of 128, N of 256 and K of 128"
            ),
        });
    }
    let ma = TensorMap::new(a, [kernels::BM, kernels::BK], Swizzle::B128)?;
    let mb = TensorMap::new(bt, [kernels::BN, kernels::BK], Swizzle::B128)?;
    let tiles = (m / kernels::BM as usize * (n / kernels::BN as usize)) as u32;
    let cfg = LaunchConfig::new(tiles.min(sms), kernels::THREADS).shared_mem(kernels::SHARED_BYTES);
    kernels::gemm_fp8::launch(&cfg, m as u32, n as u32, k as u32, &ma, &mb, scales.0, scales.1, c)
}

fn run(m: usize, n: usize, k: usize) -> Result<()> {
    let device = Device::get(0)?;
    let cc = device.compute_capability();
    if cc != (9, 0) {
        return Err(Error::Unsupported {
            what: format!(
                "FP8 wgmma and TMA need compute capability 9.0 (the kernel is built for sm_90a); this GPU is {}.{}",
                cc.0, cc.1
            ),
        });
    }
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?} is not a decimal u64: {e}")),
        Err(_) => rand::random(),
    };
    println!("seed = {seed} (set CUPRUM_TEST_SEED={seed} to reproduce)");
    let mut rng = StdRng::seed_from_u64(seed);
    // Values spread over e4m3's range (scaled as a quantiser would), and per-tensor scales that
    // undo it.
    let mut rnd = || f8e4m3::from_f32(rng.random_range(-448.0f32..448.0));
    let a: Vec<f8e4m3> = (0..m * k).map(|_| rnd()).collect();
    let bt: Vec<f8e4m3> = (0..n * k).map(|_| rnd()).collect();
    let scales = (1.0 / 448.0f32, 1.0 / 224.0f32);
    let da = Array::from_slice(&a)?.reshape([m, k])?;
    let db = Array::from_slice(&bt)?.reshape([n, k])?;
    let mut dc = Array::from_slice(&vec![bf16::NAN; m * n])?;
    let sms = device.multiprocessor_count();
    launch(&da, &db, scales, &mut dc, (m, n, k), sms)?;
    let c = dc.to_vec()?;
    // Sampled entries against an f64 host reference, relative to the sum of |terms| (the FP8
    // products are exact; the f32 accumulation and the bf16 store round: bf16's 2^-9 dominates).
    let alpha = scales.0 as f64 * scales.1 as f64;
    let mut worst = 0.0f64;
    for s in 0..2000usize {
        let (i, j) = ((s * 7919) % m, (s * 104_729) % n);
        let terms = (0..k).map(|p| a[i * k + p].to_f64() * bt[j * k + p].to_f64() * alpha);
        let (want, scale) = terms.fold((0.0, 1e-30), |(w, s), t| (w + t, s + t.abs()));
        worst = worst.max((c[i * n + j].to_f64() - want).abs() / scale);
    }
    println!("gemm_fp8 {m}x{n}x{k}: worst error on 2000 sampled entries {worst:.1e} (relative to the sum of |terms|)");
    // Written so that a NaN fails too.
    if worst.is_nan() || worst > 1e-2 {
        return Err(Error::Unsupported {
            what: "the FP8 GEMM result differs from the host reference".into(),
        });
    }
    let stream = Stream::current()?;
    let mut times = Vec::new();
    for i in 0..12 {
        let start = Event::record(&stream)?;
        launch(&da, &db, scales, &mut dc, (m, n, k), sms)?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    println!("gemm_fp8 {m}x{n}x{k}: {t:.3} ms, {tflops:.1} TFLOP/s (torch._scaled_mm, cuBLASLt: benches/fp8_torch.py)");
    Ok(())
}
