//! An FP8 GEMM on Hopper's warpgroup tensor cores as a `#[rawkernel]`, with per-tensor scales:
//! C (bf16) = scale_a * scale_b * A * B, A of M x K and B of K x N in `f8e4m3` with B given
//! transposed (B^T: N x K, row-major), f32 accumulation (`wgmma_m64n256k32`), both operands brought
//! to shared memory by the tensor memory accelerator (`tma_load_2d`). The layout is cuBLASLt's
//! and `torch._scaled_mm`'s for FP8 ("TN": both operands K-major), which FP8 `wgmma` requires: it
//! reads neither operand transposed.
//!
//! The structure is examples/kernels_sm90a/gemm_wgmma.rs's (warp-specialised, persistent, tiles of
//! C of 128 x 256 taken GROUP rows of tiles at a time): warpgroup 0 produces, one thread copying
//! each 128-wide k-step (128 bytes per row: one swizzle row) of A (a box of 128 rows) and of B^T
//! (one box of 256 rows) into a ring of STAGES stages; warpgroups 1 and 2 consume, each issuing
//! the stage's four `wgmma_m64n256k32` k-steps for its 64 rows as one group, releasing the
//! previous stage once that group has finished. The epilogue scales the f32 accumulators and
//! stores bf16 (half the bytes of f32).
//!
//! Shared memory: dynamic (1024-byte aligned), the A stages (128 x 128 bytes) then the B stages
//! (256 x 128 bytes), 128-byte swizzle; static, the barriers. The launch needs M a multiple of
//! 128, N of 256 and K of 128 (examples/gemm_fp8.rs checks), `SHARED_BYTES` of dynamic shared
//! memory and 384 threads; sm_90a only.

// Kernels test divisibility with `%`: the kernel language has no `is_multiple_of`.
#![allow(clippy::manual_is_multiple_of)]

use cuprum::prelude::*;

/// The block's tile of C, its k-step, the pipeline's depth, and the rows of tiles taken together.
pub const BM: u32 = 128;
pub const BN: u32 = 256;
pub const BK: u32 = 128;
const STAGES: u32 = 4;
const GROUP: u32 = 8;
/// Elements (bytes) of one stage of A (BM x BK) and of B^T (BN x BK).
const A_STAGE: u32 = 16384;
const B_STAGE: u32 = 32768;
/// Elements of the stages (dynamic shared memory): STAGES x (A_STAGE + B_STAGE).
const TILES: u32 = 196608;
/// The barriers: `full` then `empty`, one per stage.
const FULL: u32 = 0;
const EMPTY: u32 = 4;
/// The dynamic shared memory a launch needs: the stages (one byte an element).
pub const SHARED_BYTES: u32 = TILES;
/// Threads per block: the producer warpgroup and two consumers.
pub const THREADS: u32 = 384;

#[rawkernel(max_threads = 384)]
#[allow(clippy::too_many_arguments)] // cuBLASLt's: shapes, operands, the two scales, C
pub fn gemm_fp8(m: u32, n: u32, k: u32, a: &TensorMap<f8e4m3>, bt: &TensorMap<f8e4m3>, scale_a: f32, scale_b: f32, c: &mut [bf16]) {
    let s = dynamic_shared::<f8e4m3>();
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let wg = tid / 128;
    let (ktiles, tiles_m, tiles_n) = (k / BK, m / BM, n / BN);
    let total = tiles_m * tiles_n;
    if ktiles == 0 || tiles_m == 0 || tiles_n == 0 || block_dim().x != THREADS {
        return;
    }
    // C must hold m x n elements (examples/gemm_fp8.rs checks first, with a clear error): with
    // fewer the kernel computes nothing, and the stores below are unchecked (as gemm_wgmma's, no
    // checked access in this kernel: its report call leaves ptxas short of registers).
    if c.len() < m as usize * n as usize || s.len() < TILES as usize {
        return;
    }
    if tid == 0 {
        for i in 0..STAGES {
            mbarrier_init(bars, FULL + i, 1);
            mbarrier_init(bars, EMPTY + i, 2);
        }
    }
    sync_threads();
    if wg == 0 {
        warpgroup_reg_dealloc::<40>();
        if tid == 0 {
            let mut it = 0u32;
            let mut t = block_idx().x;
            while t < total {
                let (tm, tn) = tile_of(t, tiles_m, tiles_n);
                for kt in 0..ktiles {
                    let st = it % STAGES;
                    if it >= STAGES {
                        mbarrier_wait(bars, EMPTY + st, (it / STAGES - 1) % 2);
                    }
                    mbarrier_arrive_expect_tx(bars, FULL + st, A_STAGE + B_STAGE);
                    tma_load_2d(s, st * A_STAGE, a, (kt * BK) as i32, (tm * BM) as i32, bars, FULL + st);
                    tma_load_2d(
                        s,
                        STAGES * A_STAGE + st * B_STAGE,
                        bt,
                        (kt * BK) as i32,
                        (tn * BN) as i32,
                        bars,
                        FULL + st,
                    );
                    it += 1;
                }
                t += grid_dim().x;
            }
        }
    } else {
        warpgroup_reg_alloc::<232>();
        let w = wg - 1;
        let (l, q) = (tid % 32, (tid % 128) / 32);
        let alpha = scale_a * scale_b;
        let mut it = 0u32;
        let mut t = block_idx().x;
        while t < total {
            let (tm, tn) = tile_of(t, tiles_m, tiles_n);
            let mut acc = [0.0f32; 128];
            for kt in 0..ktiles {
                let st = it % STAGES;
                mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
                let ab = st * A_STAGE + w * 8192;
                let bb = STAGES * A_STAGE + st * B_STAGE;
                wgmma_fence();
                for kk in (0..4u32).unroll() {
                    // SAFETY: A's tile is 8192 elements from `ab` (a multiple of 8192), B^T's four
                    // tiles 32768 from `bb` (a multiple of 8192); both operands' columns start at
                    // kk * 32; all end by TILES, which `s` holds (checked on entry), and dynamic
                    // shared memory is 1024-byte aligned.
                    unsafe { wgmma_m64n256k32_unchecked(&mut acc, s, ab + kk * 32, s, bb + kk * 32) };
                }
                wgmma_commit();
                wgmma_wait::<1>(&mut acc);
                if kt > 0 && tid % 128 == 0 {
                    mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
                }
                it += 1;
            }
            wgmma_wait::<0>(&mut acc);
            if tid % 128 == 0 {
                mbarrier_arrive(bars, EMPTY + (it - 1) % STAGES);
            }
            // Lane l of warp q: rows 16q + l / 4 and 8 more, columns 8j + 2 (l % 4) and the next.
            let nn = n as usize;
            let base = (tm * BM + w * 64 + q * 16 + l / 4) as usize * nn + (tn * BN + 2 * (l % 4)) as usize;
            for j in (0..32u32).unroll() {
                let (i0, x) = (base + (8 * j) as usize, (4 * j) as usize);
                let i1 = i0 + 8 * nn;
                // SAFETY: i0, i1 and the elements after them lie in this tile of the m x n C, all
                // of whose elements are in range (checked on entry).
                unsafe {
                    *c.get_unchecked_mut(i0) = bf16::from_f32(acc[x] * alpha);
                    *c.get_unchecked_mut(i0 + 1) = bf16::from_f32(acc[x + 1] * alpha);
                    *c.get_unchecked_mut(i1) = bf16::from_f32(acc[x + 2] * alpha);
                    *c.get_unchecked_mut(i1 + 1) = bf16::from_f32(acc[x + 3] * alpha);
                }
            }
            t += grid_dim().x;
        }
    }
}

/// The (row, column) of tile `t`: down GROUP rows of tiles, then across, group after group.
#[device]
fn tile_of(t: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    let per = GROUP * tiles_n;
    let g = t / per;
    let r = t % per;
    let rows = (tiles_m - g * GROUP).min(GROUP);
    (g * GROUP + r % rows, r / rows)
}
