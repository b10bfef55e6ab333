//! A bf16 GEMM on Hopper's warpgroup tensor cores as a `#[rawkernel]`: C (f32) = A * B, all
//! row-major, A of M x K and B of K x N in `bf16`, f32 accumulation (`wgmma_m64n256k16`), both
//! operands brought to shared memory by the tensor memory accelerator (`tma_load_2d`).
//!
//! Warp-specialised and persistent: a block of three warpgroups (384 threads) takes tiles of C of
//! 128 x 256 in turn (tile `blockIdx.x`, then every `gridDim.x`-th; GROUP rows of tiles at a time,
//! so the tiles running together share their panels of A and B in L2). Warpgroup 0 is the
//! producer: one thread issues the copies of each 64-wide k-step into a ring of STAGES stages,
//! each stage's copies completing on its `full` barrier, and waits on the stage's `empty` barrier
//! before reusing it. Warpgroups 1 and 2 are the consumers, each multiplying its 64 rows of the
//! tile: they wait for a stage to be full, issue its four `wgmma` k-steps as one group, and
//! release the previous stage once its group has finished (`wgmma_wait::<1>`), so one group is
//! always in flight. The producer gives its registers to the consumers (`warpgroup_reg_*`),
//! whose 128 accumulators a thread need them.
//!
//! Shared memory: dynamic (1024-byte aligned), the A stages (128 x 64, one TMA box of 128 rows),
//! then the B stages (64 x 256: four boxes of 64 x 64), all with the 128-byte swizzle that
//! `wgmma` reads; static, the barriers (`u64`). The launch needs M a multiple of 128, N of 256 and
//! K of 64 (examples/gemm_wgmma.rs checks), `SHARED_BYTES` of dynamic shared memory and 384
//! threads (`max_threads = 384`: compiled for them, so that the registers split as
//! `warpgroup_reg_*` says); it needs sm_90a (cuprum-build compiles this file for `arch=compute_90a,code=sm_90a`).

use cuprum::prelude::*;

/// The block's tile of C, its k-step, the pipeline's depth, and the rows of tiles taken together.
pub const BM: u32 = 128;
pub const BN: u32 = 256;
pub const BK: u32 = 64;
const STAGES: u32 = 4;
const GROUP: u32 = 8;
/// Elements of one stage of A (BM x BK) and of B (BK x BN).
const A_STAGE: u32 = 8192;
const B_STAGE: u32 = 16384;
/// Elements of the stages (dynamic shared memory).
const TILES: u32 = 98304;
/// The barriers (a static shared array of `u64`): `full` then `empty`, one per stage.
const FULL: u32 = 0;
const EMPTY: u32 = 4;
/// The dynamic shared memory a launch needs: the stages.
pub const SHARED_BYTES: u32 = 2 * TILES;
/// Threads per block: the producer warpgroup and two consumers.
pub const THREADS: u32 = 384;

#[rawkernel(max_threads = 384)]
pub fn gemm_wgmma(m: u32, n: u32, k: u32, a: &TensorMap<bf16>, b: &TensorMap<bf16>, c: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    // A static array, whose length the checks of the barrier operations know at compile time (with
    // the dynamic one's, read at run time, they cost the loop 10-15% on an H100).
    let bars = shared_array::<u64, 8>();
    let tid = thread_idx().x;
    let wg = tid / 128;
    let (ktiles, tiles_m, tiles_n) = (k / BK, m / BM, n / BN);
    let total = tiles_m * tiles_n;
    if ktiles == 0 || tiles_m == 0 || tiles_n == 0 || block_dim().x != THREADS {
        return;
    }
    // C must hold m x n elements (the launch wrappers of examples/gemm_wgmma.rs and the bench
    // check it first, with a clear error): with fewer the kernel computes nothing. The stores
    // of the tiles below are then unchecked. No checked access may be in this kernel at all: the
    // call of the violation report it compiles to leaves ptxas short of the consumers' 232
    // registers (C7600).
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
                    mbarrier_arrive_expect_tx(bars, FULL + st, (A_STAGE + B_STAGE) * 2);
                    tma_load_2d(s, st * A_STAGE, a, (kt * BK) as i32, (tm * BM) as i32, bars, FULL + st);
                    let bb = STAGES * A_STAGE + st * B_STAGE;
                    for j in 0..BN / 64 {
                        tma_load_2d(s, bb + j * 4096, b, (tn * BN + j * 64) as i32, (kt * BK) as i32, bars, FULL + st);
                    }
                    it += 1;
                }
                t += grid_dim().x;
            }
        }
    } else {
        warpgroup_reg_alloc::<232>();
        let w = wg - 1;
        let (l, q) = (tid % 32, (tid % 128) / 32);
        let mut it = 0u32;
        let mut t = block_idx().x;
        while t < total {
            let (tm, tn) = tile_of(t, tiles_m, tiles_n);
            let mut acc = [0.0f32; 128];
            for kt in 0..ktiles {
                let st = it % STAGES;
                mbarrier_wait(bars, FULL + st, (it / STAGES) % 2);
                let ab = st * A_STAGE + w * 4096;
                let bb = STAGES * A_STAGE + st * B_STAGE;
                wgmma_fence();
                for kk in (0..4u32).unroll() {
                    // SAFETY: A's tile is 4096 elements from `ab` (a multiple of 4096), its
                    // columns start at kk * 16; B's four tiles are 16384 elements from `bb` (a
                    // multiple of 4096), its rows start at kk * 16 (x 64); both end by TILES,
                    // which `s` holds (checked on entry), and dynamic shared memory is 1024-byte
                    // aligned. The checked form costs 10-15% here (examples/gemm_wgmma.rs).
                    unsafe { wgmma_m64n256k16_unchecked(&mut acc, s, ab + kk * 16, s, bb + kk * 1024) };
                }
                wgmma_commit();
                // The previous stage's group has finished: release that stage.
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
                    *c.get_unchecked_mut(i0) = acc[x];
                    *c.get_unchecked_mut(i0 + 1) = acc[x + 1];
                    *c.get_unchecked_mut(i1) = acc[x + 2];
                    *c.get_unchecked_mut(i1 + 1) = acc[x + 3];
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
