//! The host side of the wgmma GEMM: the checked launch of the `#[rawkernel]` of
//! `kernels_sm90a/gemm_wgmma.rs` ([`launch`]) and its tuned launch geometry ([`GRID`],
//! docs/tuning.md). `examples/gemm_wgmma.rs` (the example, whose `--tune` writes
//! `examples/tuning/sm_90.toml`) and `benches/src/gemm_bf16.rs` (the bench rows) include this
//! file; each package's build script embeds `examples/tuning/`.
//!
//! The kernel is persistent: each block takes tiles of C in turn (tile `blockIdx.x`, then every
//! `gridDim.x`-th), so the grid decides how the tiles spread over the SMs. The candidates:
//! `sms`, one block per SM (the default: the example's launch before tuning), and `even`, the
//! fewest blocks that take the same number of tiles each (no block takes one more tile than the
//! others, and the SMs left idle leave the L2 and the memory system to the others). Keyed by the
//! number of tiles: fewer than four per SM, or more.

#[path = "kernels_sm90a/gemm_wgmma.rs"]
pub mod kernels;

use cuprum::prelude::bf16;
use cuprum::runtime::tuning::{Site, Table, Trial, Tunable};
use cuprum::runtime::{Array, Device, Error, LaunchConfig, Result, Swizzle, TensorMap};

/// The package's embedded tuning files (`examples/tuning/`).
pub static TABLE: Table = cuprum::runtime::tuning_table!();

/// The tuned grid of the persistent kernel.
pub static GRID: Site = Site::new("gemm_wgmma_grid", &["sms", "even"], &KEYS, "sms", &TABLE);

/// The keys: fewer tiles than four per SM, or more.
const KEYS: [&str; 2] = ["under_4_waves", "from_4_waves"];

/// The problem the tuner times for each key (M = N = K): 4096 (512 tiles, 3.9 per SM of an
/// H200) and 8192 (2048 tiles).
pub const KEY_SIZES: [usize; 2] = [4096, 8192];

/// The key of a launch of `tiles` tiles on `sms` SMs.
pub fn key_of(tiles: u32, sms: u32) -> usize {
    usize::from(tiles >= 4 * sms.max(1))
}

/// The grid of candidate `candidate` for `tiles` tiles on `sms` SMs.
pub fn grid_of(candidate: usize, tiles: u32, sms: u32) -> u32 {
    let sms = sms.max(1);
    match candidate {
        // `even`: as many rounds as with one block per SM, each block taking the same number.
        1 => tiles.div_ceil(tiles.div_ceil(sms)),
        _ => tiles.min(sms),
    }
}

/// The grid the program launches for `tiles` tiles on `device`: the tuned choice (docs/tuning.md).
pub fn grid(device: &Device, tiles: u32) -> u32 {
    let sms = device.multiprocessor_count();
    grid_of(GRID.choose(device.compute_capability(), key_of(tiles, sms)), tiles, sms)
}

/// The launch of `gemm_wgmma` for C = A B (A: m x k, B: k x n, row-major) on the arrays' device:
/// the tensor maps of A (boxes of 128 rows x 64) and B (64 x 64), both with the 128-byte swizzle
/// the kernel's `wgmma` reads, and the tuned persistent grid ([`grid`]).
pub fn launch(a: &Array<bf16>, b: &Array<bf16>, c: &mut Array<f32>, (m, n, k): (usize, usize, usize)) -> Result<()> {
    // The kernel stores C unchecked and computes nothing if it is short: check the shapes here.
    if a.shape() != [m, k].as_slice() || b.shape() != [k, n].as_slice() || c.len() != m * n {
        return Err(Error::Unsupported {
            what: format!("gemm_wgmma {m}x{n}x{k} needs A of shape [{m}, {k}], B of [{k}, {n}] and C of {} elements; got {:?}, {:?} and {}", m * n, a.shape(), b.shape(), c.len()),
        });
    }
    let ma = TensorMap::new(a, [kernels::BM, kernels::BK], Swizzle::B128)?;
    let mb = TensorMap::new(b, [kernels::BK, 64], Swizzle::B128)?;
    let tiles = (m / kernels::BM as usize * (n / kernels::BN as usize)) as u32;
    let cfg = LaunchConfig::new(grid(a.device(), tiles), kernels::THREADS).shared_mem(kernels::SHARED_BYTES);
    kernels::gemm_wgmma::launch(&cfg, m as u32, n as u32, k as u32, &ma, &mb, c)
}

/// The tuner's problem for key `key`: a GEMM of `KEY_SIZES[key]`^3 of values in [-1, 1).
fn prepare(device: &Device, key: usize) -> Result<Trial> {
    let n = KEY_SIZES[key];
    let _on = device.use_scoped()?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        bf16::from_f32(((state >> 40) as f32) / (1u64 << 23) as f32 - 1.0)
    };
    let a = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<bf16>>())?.reshape([n, n])?;
    let b = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<bf16>>())?.reshape([n, n])?;
    let mut c = Array::<f32>::zeros(n * n)?;
    Ok(Box::new(move || launch(&a, &b, &mut c, (n, n, n))))
}

/// The site with its problem, for the tuner (`gemm_wgmma --tune`, the bench's tuning rows).
pub static TUNABLE: Tunable = Tunable { site: &GRID, package: env!("CARGO_PKG_NAME"), prepare };
