//! A bf16 GEMM on Hopper's warpgroup tensor cores, written in Rust: the `#[rawkernel]` of
//! examples/kernels_sm90a/gemm_wgmma.rs (`wgmma_m64n256k16` fed by `tma_load_2d` through a ring
//! of mbarrier-guarded stages, warp-specialised and persistent), checked against an f64 host
//! product on sampled entries and timed with CUDA events.
//!
//! `cargo run --release -p cuprum-examples --example gemm_wgmma -- [M N K]` (default 8192 8192
//! 8192; M a multiple of 128, N of 256, K of 64). Needs a compute capability 9.0 GPU (H100, H200):
//! the kernel is built for sm_90a only. `cuprum-bench` prints the same kernel next to cuBLAS's
//! bf16 GEMM measured in the same run.
//!
//! The persistent grid is a tuned site (examples/gemm_wgmma_lib.rs, docs/tuning.md): `-- --tune`
//! times its candidates on this GPU and writes `examples/tuning/sm_XY.toml`; the next build embeds
//! it, and every launch takes the measured best without tuning.

mod gemm_wgmma_lib;

use cuprum::prelude::bf16;
use cuprum::runtime::tuning::{self, Options};
use cuprum::runtime::{Array, Device, Error, Event, Result, Stream};
use gemm_wgmma_lib::launch;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};

fn main() {
    if std::env::args().any(|a| a == "--tune") {
        return tune();
    }
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

/// `--tune`: the grid's candidates timed on GPU 0, the fastest per key written into
/// `examples/tuning/sm_XY.toml` (docs/tuning.md).
fn tune() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tuning");
    let done = Device::get(0).and_then(|device| {
        if device.compute_capability() != (9, 0) {
            return Err(Error::Unsupported { what: "the wgmma GEMM is built for sm_90a: tune it on a compute capability 9.0 GPU".into() });
        }
        tuning::tune(&device, &[&gemm_wgmma_lib::TUNABLE], &dir, &Options::default())
    });
    match done {
        Ok((path, file)) => {
            for c in file.site(gemm_wgmma_lib::GRID.name()).map_or(&[][..], |s| &s.choices[..]) {
                println!("{} {}: {}  ({})", gemm_wgmma_lib::GRID.name(), c.key, c.candidate, c.note.as_deref().unwrap_or(""));
            }
            println!("wrote {}; rebuild the examples (and the bench) to embed it", path.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
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
    launch(&da, &db, &mut dc, (m, n, k))?;
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
        launch(&da, &db, &mut dc, (m, n, k))?;
        let end = Event::record(&stream)?;
        end.synchronize()?;
        if i >= 2 {
            times.push(Event::elapsed_ms(&start, &end)? as f64);
        }
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let tflops = 2.0 * m as f64 * n as f64 * k as f64 / (t * 1e-3) / 1e12;
    let tiles = (m / 128 * (n / 256)) as u32;
    let (choice, source) = gemm_wgmma_lib::GRID.choice(cc, gemm_wgmma_lib::key_of(tiles, device.multiprocessor_count()));
    println!(
        "gemm_wgmma {m}x{n}x{k}: {t:.3} ms, {tflops:.1} TFLOP/s (grid `{}` of {} blocks, choice source: {source:?}; tuning runs in this program: {})",
        gemm_wgmma_lib::GRID.candidates()[choice],
        gemm_wgmma_lib::grid(&device, tiles),
        cuprum::runtime::stats::snapshot().tuning_trials
    );
    Ok(())
}
