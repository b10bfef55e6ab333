//! A bf16 GEMM on tensor cores as a `#[rawkernel]`: C (f32) = A * B, all row-major, A of M x K and
//! B of K x N in `bf16`, f32 accumulation (`mma_m16n8k16`).
//!
//! A block of 4 warps computes a 128 x 128 tile of C, each warp a 64 x 64 quarter of it (4 x 8
//! tiles of 16 x 8, 128 accumulators per lane). The k dimension advances 32 at a time through a
//! pipeline of three shared-memory stages: `cp_async` copies stage `kt + 2` while the warps
//! multiply stage `kt`. Fragments come from shared memory through `ldmatrix_x4` (A) and
//! `ldmatrix_x4_trans` (B, stored k-major), in their `unsafe` `_unchecked` forms: their rows are in range
//! by construction, and the checks cost: at 8192^3 on an H200, 400 TFLOP/s unchecked, 236 with
//! checked copies, 194 with checked copies and loads (benches/experiments/gemm_bf16). The
//! copies are `cp_async_unchecked` too: the kernel checks the three lengths once, and the
//! generated code checks that `a` and `b` start 16-byte aligned when the kernel is entered. The 16-byte chunks of each shared row are permuted
//! (XOR swizzle) so that the eight rows one `ldmatrix` phase reads fall in distinct banks.
//!
//! The launch needs M and N multiples of 128 and K a multiple of 32 (examples/gemm_bf16.rs checks).
//!
//! `gemm_bf16_wide_pf` tiles C by 128 x 256 with 8 warps (of 64 x 64 each, as here), in dynamic
//! shared memory: each block's copies feed twice the multiplies, so that a flop needs 3/4 of the
//! bytes from L2 (benches/experiments/gemm_bf16 times it; gen.sh emits its k-steps and depths).

// Kernels test divisibility with `%`: the kernel language has no `is_multiple_of`.
#![allow(clippy::manual_is_multiple_of)]

use cuprum::prelude::*;

/// The block's tile of C, its k-step, and the pipeline's depth.
const BM: u32 = 128;
const BN: u32 = 128;
const BK: u32 = 32;
const STAGES: u32 = 3;
/// Elements of one stage of A (BM x BK) and of B (BK x BN).
const STAGE: u32 = 4096;

#[rawkernel]
pub fn gemm_bf16(m: u32, n: u32, k: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let sa = shared_array::<bf16, 12288>();
    let sb = shared_array::<bf16, 12288>();
    let tid = thread_idx().x;
    // The tile shapes, and the lengths the unchecked copies below rely on (checked once here).
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    if tid >= 128 || m % BM != 0 || n % BN != 0 || k % BK != 0 || a.len() < mu * ku || b.len() < ku * nu || c.len() < mu * nu {
        return;
    }
    let lane = tid % 32;
    let (wm, wn) = (tid / 64, (tid / 32) % 2);
    let (m0, n0) = (block_idx().y * BM, block_idx().x * BN);
    let tiles = k / BK;
    let z = bf16::from_f32(0.0);
    let mut acc = [[0.0f32; 4]; 32];
    // Where this thread's four 16-byte chunks of A and of B go in a stage, and come from (plus
    // the tile's k offset): row q / 4 of A's tile, chunk q % 4 of its 32 columns; row q / 16 of
    // B's (a k), chunk q % 16 of its 128 columns. Chunks are XOR-swizzled by row.
    let mut sa_off = [0u32; 4];
    let mut sb_off = [0u32; 4];
    let mut ga = [0usize; 4];
    let mut gb = [0usize; 4];
    for i in 0..4u32 {
        let q = tid + 128 * i;
        let (ra, ca) = (q / 4, q % 4);
        sa_off[i as usize] = ra * BK + ((ca ^ ((ra / 2) % 4)) * 8);
        ga[i as usize] = (m0 + ra) as usize * k as usize + (ca * 8) as usize;
        let (rb, cb) = (q / 16, q % 16);
        sb_off[i as usize] = rb * BN + ((cb ^ (rb % 8)) * 8);
        gb[i as usize] = rb as usize * n as usize + (n0 + cb * 8) as usize;
    }
    // The rows each lane gives `ldmatrix`, per 16-wide k step `kk` and tile: A's row l % 16 of
    // chunk 2 kk + l / 16; B's k row l % 8 + 8 ((l / 8) % 2) of the chunk of columns 16 j + 8 (l / 16).
    let mut la = [0u32; 8];
    let mut lb = [0u32; 8];
    for kk in 0..2u32 {
        for i in 0..4u32 {
            let row = wm * 64 + i * 16 + lane % 16;
            let ch = kk * 2 + lane / 16;
            la[(kk * 4 + i) as usize] = row * BK + ((ch ^ ((row / 2) % 4)) * 8);
            let kr = kk * 16 + lane % 8 + 8 * ((lane / 8) % 2);
            let cb = wn * 8 + i * 2 + lane / 16;
            lb[(kk * 4 + i) as usize] = kr * BN + ((cb ^ (kr % 8)) * 8);
        }
    }

    // Prologue: stages 0 and 1 in flight.
    for s in 0..STAGES - 1 {
        if s < tiles {
            let (k0, kn) = ((s * BK) as usize, (s * BK) as usize * n as usize);
            for i in 0..4usize {
                // SAFETY: as in the loop below.
                unsafe {
                    cp_async_unchecked(sa, s * STAGE + sa_off[i], a, ga[i] + k0);
                    cp_async_unchecked(sb, s * STAGE + sb_off[i], b, gb[i] + kn);
                }
            }
        }
        cp_async_commit();
    }

    for kt in 0..tiles {
        // Stage kt has landed (at most one later group in flight), for every thread.
        cp_async_wait::<1>();
        sync_threads();
        // Refill the stage all warps finished in the previous iteration.
        let next = kt + STAGES - 1;
        if next < tiles {
            let s = next % STAGES;
            let (k0, kn) = ((next * BK) as usize, (next * BK) as usize * n as usize);
            for i in 0..4usize {
                // SAFETY: as in the loop below.
                unsafe {
                    cp_async_unchecked(sa, s * STAGE + sa_off[i], a, ga[i] + k0);
                    cp_async_unchecked(sb, s * STAGE + sb_off[i], b, gb[i] + kn);
                }
            }
        }
        cp_async_commit();

        let base = (kt % STAGES) * STAGE;
        for kk in 0..2usize {
            let mut fa = [[z; 8]; 4];
            for i in 0..4usize {
                // SAFETY: `la` holds multiples of 8 below STAGE - 8 (rows < 128 of 32 elements,
                // chunks < 4 of 8) and `base` is a stage's start, so each row is 8 elements of
                // `sa`, 16-byte aligned.
                fa[i] = unsafe { ldmatrix_x4_unchecked(sa, base + la[kk * 4 + i]) };
            }
            // Two 8-column B tiles per `ldmatrix_x4_trans`.
            let mut fb = [[z; 4]; 8];
            for j in 0..4usize {
                // SAFETY: as for A: k rows < 32 of 128 elements, chunks < 16 of 8.
                let x = unsafe { ldmatrix_x4_trans_unchecked(sb, base + lb[kk * 4 + j]) };
                fb[2 * j] = [x[0], x[1], x[2], x[3]];
                fb[2 * j + 1] = [x[4], x[5], x[6], x[7]];
            }
            for i in 0..4usize {
                for j in 0..8usize {
                    acc[i * 8 + j] = mma_m16n8k16(fa[i], fb[j], acc[i * 8 + j]);
                }
            }
        }
    }

    // Each lane holds rows g and g + 8, columns 2t and 2t + 1 of every 16 x 8 tile.
    let (g, t) = (lane / 4, 2 * (lane % 4));
    for i in 0..4u32 {
        for j in 0..8u32 {
            let d = acc[(i * 8 + j) as usize];
            let row = (m0 + wm * 64 + i * 16 + g) as usize;
            let col = (n0 + wn * 64 + j * 8 + t) as usize;
            let (nn, r8) = (n as usize, row + 8);
            c[row * nn + col] = d[0];
            c[row * nn + col + 1] = d[1];
            c[r8 * nn + col] = d[2];
            c[r8 * nn + col + 1] = d[3];
        }
    }
}

/// The wide variant's block tile of C (8 warps of 64 x 64, 2 down and 4 across), its k-step and
/// the pipeline's depth. `cp_async_wait::<1>()` in `gemm_bf16_wide_pf` is `WSTAGES - 2`: change both
/// together. With `WBK = 64` the A rows are 128 bytes and the swizzle below covers them.
pub const WBM: u32 = 128;
/// Columns of C per block of `gemm_bf16_wide_pf`.
pub const WBN: u32 = 256;
/// The k-step of `gemm_bf16_wide_pf` (32, 64 or 128; K must be a multiple).
pub const WBK: u32 = 64;
const WSTAGES: u32 = 3;
/// A's swizzle: chunk c of row r is stored at chunk c ^ ((r / WSWZ_DIV) % WSWZ_MOD), so that the
/// eight rows of an `ldmatrix` phase fall in distinct banks: (2, 4) for `WBK` 32 (rows of 64
/// bytes), (1, 8) for 64 and 128. The kernels check them against `WBK` on entry.
const WSWZ_DIV: u32 = 1;
const WSWZ_MOD: u32 = 8;
/// Elements of one stage of A (WBM x WBK) and of B (WBK x WBN).
const WA_STAGE: u32 = WBM * WBK;
const WB_STAGE: u32 = WBK * WBN;
/// The same numbers as literals, which the loops below need to be unrolled (nvcc unrolls a loop
/// whose bound is a literal, not one computed by `cuprum::div`): `WBK / 16` k-steps of 16 per
/// stage, and each thread's `WA_STAGE / 2048` and `WB_STAGE / 2048` copies of 16 bytes per stage.
/// The kernel checks them against `WBK` on entry.
const WKSTEPS: u32 = 4;
const WA_COPIES: u32 = 4;
const WB_COPIES: u32 = 8;
/// Rows of block tiles next to each other in the launch order, so that the blocks running at once
/// share their rows of A and columns of B in L2.
const WGROUP: u32 = 16;
/// Whether `gemm_bf16_wide_pf` stores C four floats at a time (`store4`, after a lane-pair
/// `shfl_xor`) instead of one (benches/experiments/gemm_bf16/gen.sh times both): on an H200 at
/// 8192^3, 485 TFLOP/s against 453 with scalar stores (session 26).
const WSTORE4: bool = true;
/// Threads per block of `gemm_bf16_wide_pf`.
pub const WIDE_THREADS: u32 = 256;
/// The dynamic shared memory a launch of `gemm_bf16_wide_pf` needs: the stages of A, then of B.
pub const WIDE_SHARED_BYTES: u32 = WSTAGES * (WA_STAGE + WB_STAGE) * 2;

/// The 128 x 256 block tile: as `gemm_bf16` with twice the warps, so that each block's copies feed
/// twice the multiplies, in dynamic shared memory (`WIDE_SHARED_BYTES`, more than the 48 KiB of
/// static shared memory), with its fragments loaded one k-step ahead, through the stage boundary
/// too (CUTLASS's sm_80 main loop): the barrier comes before the last k-step's multiplies, so that
/// the next stage's first fragments load while they run. Launch with `WIDE_THREADS` threads and a
/// grid of (N / 256, M / 128); the blocks walk C down `WGROUP` tile rows at a time. M must be a
/// multiple of 128, N of 256 and K of `WBK`. (Session 26 also kept the same tile without the
/// fragments a k-step ahead, `gemm_bf16_wide`: slower in every configuration timed, 335-390
/// TFLOP/s against 396-487 on an H200, so it was removed.)
#[rawkernel(max_threads = 256, min_blocks = 1)]
pub fn gemm_bf16_wide_pf(m: u32, n: u32, k: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let s = dynamic_shared::<bf16>();
    let tid = thread_idx().x;
    // The shapes, and the lengths the unchecked copies, loads and stores below rely on (checked
    // once here).
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    if WKSTEPS * 16 != WBK || WA_COPIES * 2048 != WA_STAGE || WB_COPIES * 2048 != WB_STAGE {
        return;
    }
    if WKSTEPS > 8 || WSWZ_MOD != (WBK / 8).min(8) || WSWZ_DIV != (64 / WBK).max(1) {
        return;
    }
    if block_dim().x != WIDE_THREADS || m % WBM != 0 || n % WBN != 0 || k % WBK != 0 {
        return;
    }
    if a.len() < mu * ku || b.len() < ku * nu || c.len() < mu * nu || s.len() < (WSTAGES * (WA_STAGE + WB_STAGE)) as usize {
        return;
    }
    let (warp, lane) = (tid / 32, tid % 32);
    let (wm, wn) = (warp / 4, warp % 4);
    // Block t of the launch order: down WGROUP rows of tiles, then across, group after group.
    let (tiles_m, tiles_n) = (m / WBM, n / WBN);
    let t = block_idx().y * tiles_n + block_idx().x;
    let (g, r) = (t / (WGROUP * tiles_n), t % (WGROUP * tiles_n));
    let rows = (tiles_m - g * WGROUP).min(WGROUP);
    let (m0, n0) = ((g * WGROUP + r % rows) * WBM, (r / rows) * WBN);
    let nt = k / WBK;
    let z = bf16::from_f32(0.0);
    let mut acc = [[0.0f32; 4]; 32];

    // The copies: this thread's 16-byte chunks of A are chunk ca of rows ra + i 2048 / WBK, those
    // of B chunk cb of k rows rb + 8 i; each 2048 elements apart in a stage, and the XOR swizzle
    // (A: by (row / WSWZ_DIV) % WSWZ_MOD; B: by row % 8) is the same for all of them.
    let (ra, ca) = (tid / (WBK / 8), tid % (WBK / 8));
    let sa0 = ra * WBK + (ca ^ ((ra / WSWZ_DIV) % WSWZ_MOD)) * 8;
    let ga0 = (m0 + ra) as usize * ku + (ca * 8) as usize;
    let (rb, cb) = (tid / 32, tid % 32);
    let sb0 = WSTAGES * WA_STAGE + rb * WBN + (cb ^ (rb % 8)) * 8;
    let gb0 = rb as usize * nu + (n0 + cb * 8) as usize;
    let (ga_step, gb_step) = ((2048 / WBK) as usize * ku, 8 * nu);
    // The rows each lane gives `ldmatrix`: A's row 64 wm + 16 i + l % 16, chunk 2 kk + l / 16,
    // stored at chunk (2 kk) ^ ach; B's k row 16 kk + l % 8 + 8 ((l / 8) % 2), chunk
    // 8 wn + 2 j + l / 16, stored at 8 wn + ((2 j) ^ bch).
    let la0 = (wm * 64 + lane % 16) * WBK;
    let ach = (lane / 16) ^ (((lane % 16) / WSWZ_DIV) % WSWZ_MOD);
    let lb0 = WSTAGES * WA_STAGE + (lane % 8 + 8 * ((lane / 8) % 2)) * WBN + wn * 64;
    let bch = (lane / 16) ^ (lane % 8);
    // The swizzled chunk offsets per k-step (A) and per pair of 8-column tiles (B), indexed by
    // the unrolled loops' counters (constant indices: registers).
    let mut acol = [0u32; 8];
    let mut bcol = [0u32; 4];
    for x in 0..8u32 {
        acol[x as usize] = ((2 * x) ^ ach) * 8;
    }
    for x in 0..4u32 {
        bcol[x as usize] = ((2 * x) ^ bch) * 8;
    }

    // Prologue: stages 0 .. WSTAGES - 1 in flight.
    for st in 0..WSTAGES - 1 {
        if st < nt {
            let (k0, kn) = ((st * WBK) as usize, (st * WBK) as usize * nu);
            for i in 0..WA_COPIES {
                // SAFETY: as in the refill of the loop below.
                unsafe { cp_async_unchecked(s, st * WA_STAGE + sa0 + i * 2048, a, ga0 + k0 + i as usize * ga_step) };
            }
            for i in 0..WB_COPIES {
                // SAFETY: as in the refill of the loop below.
                unsafe { cp_async_unchecked(s, st * WB_STAGE + sb0 + i * 2048, b, gb0 + kn + i as usize * gb_step) };
            }
        }
        cp_async_commit();
    }

    // Stage 0 has landed; k-step 0's fragments in buffer 0.
    cp_async_wait::<1>();
    sync_threads();
    let mut fa = [[[z; 8]; 4]; 2];
    let mut fb = [[[z; 4]; 8]; 2];
    for i in 0..4u32 {
        // SAFETY: as in the loop below.
        fa[0][i as usize] = unsafe { ldmatrix_x4_unchecked(s, la0 + i * 16 * WBK + acol[0]) };
    }
    for j in 0..4u32 {
        // SAFETY: as in the loop below.
        let x = unsafe { ldmatrix_x4_trans_unchecked(s, lb0 + bcol[j as usize]) };
        fb[0][(2 * j) as usize] = [x[0], x[1], x[2], x[3]];
        fb[0][(2 * j + 1) as usize] = [x[4], x[5], x[6], x[7]];
    }
    // The stage read (kt % WSTAGES) and the stage refilled ((kt - 1) % WSTAGES), without a division.
    let (mut rs, mut ws) = (0u32, WSTAGES - 1);
    for kt in 0..nt {
        let (mut abase, mut bbase) = (rs * WA_STAGE + la0, rs * WB_STAGE + lb0);
        for kk in (0..WKSTEPS).unroll() {
            let (cur, nxt) = ((kk % 2) as usize, ((kk + 1) % 2) as usize);
            if kk == WKSTEPS - 1 {
                // Stage kt + 1 has landed (at most WSTAGES - 2 later groups in flight), for every
                // thread, and every warp has loaded its last fragments of stage kt.
                cp_async_wait::<1>();
                sync_threads();
                rs = if rs == WSTAGES - 1 { 0 } else { rs + 1 };
                abase = rs * WA_STAGE + la0;
                bbase = rs * WB_STAGE + lb0;
            }
            // The fragments of the next k-step (k-step 0 of the next stage after the last), while
            // this one's multiply. After the last tile they read a stage of stale data, unused.
            let kn = (kk + 1) % WKSTEPS;
            for i in 0..4u32 {
                // SAFETY: rows < WBM of WBK elements in stage rs, chunks < WBK / 8 of 8 elements:
                // each row 8 elements of `s`, 16-byte aligned.
                fa[nxt][i as usize] = unsafe { ldmatrix_x4_unchecked(s, abase + i * 16 * WBK + acol[kn as usize]) };
            }
            for j in 0..4u32 {
                // SAFETY: as for A: k rows < WBK of WBN elements, chunks < WBN / 8.
                let x = unsafe { ldmatrix_x4_trans_unchecked(s, bbase + kn * 16 * WBN + bcol[j as usize]) };
                fb[nxt][(2 * j) as usize] = [x[0], x[1], x[2], x[3]];
                fb[nxt][(2 * j + 1) as usize] = [x[4], x[5], x[6], x[7]];
            }
            if kk == 0 {
                // Refill the stage every warp finished before the previous iteration's barrier.
                let next = kt + WSTAGES - 1;
                if next < nt {
                    let (k0, kn0) = ((next * WBK) as usize, (next * WBK) as usize * nu);
                    for i in 0..WA_COPIES {
                        // SAFETY: rows m0 + ra + i 2048 / WBK < m of A (m0 + WBM <= m, k0 + 8 ca
                        // + 8 <= k, a.len() >= m k checked above), 16-byte aligned (k and 8 ca
                        // multiples of 8, `a`'s start checked on entry); the destination is 8
                        // elements of the stage, inside `s`.
                        unsafe { cp_async_unchecked(s, ws * WA_STAGE + sa0 + i * 2048, a, ga0 + k0 + i as usize * ga_step) };
                    }
                    for i in 0..WB_COPIES {
                        // SAFETY: as for A: k rows next WBK + rb + 8 i < k, columns n0 + 8 cb + 8
                        // <= n.
                        unsafe { cp_async_unchecked(s, ws * WB_STAGE + sb0 + i * 2048, b, gb0 + kn0 + i as usize * gb_step) };
                    }
                }
                cp_async_commit();
                ws = if ws == WSTAGES - 1 { 0 } else { ws + 1 };
            }
            for i in 0..4usize {
                for j in 0..8usize {
                    acc[i * 8 + j] = mma_m16n8k16(fa[cur][i], fb[cur][j], acc[i * 8 + j]);
                }
            }
        }
    }

    // Each lane holds rows g and g + 8, columns 2t and 2t + 1 of every 16 x 8 tile.
    let (gr, tc) = (lane / 4, 2 * (lane % 4));
    if WSTORE4 {
        // Lanes 2u and 2u + 1 swap halves (shfl_xor 1): the even lane then holds columns 4 (u % 2)
        // .. + 4 of row g, the odd one the same columns of row g + 8; one `store4` each.
        let odd = lane % 2 == 1;
        let (rr, cc) = (gr + if odd { 8 } else { 0 }, 4 * ((lane % 4) / 2));
        for i in 0..4u32 {
            for j in 0..8u32 {
                let d = acc[(i * 8 + j) as usize];
                let (s0, s1) = if odd { (d[0], d[1]) } else { (d[2], d[3]) };
                let x0 = shfl_xor_sync(0xffff_ffff, s0, 1);
                let x1 = shfl_xor_sync(0xffff_ffff, s1, 1);
                let v = if odd {
                    [x0, x1, d[2], d[3]]
                } else {
                    [d[0], d[1], x0, x1]
                };
                let row = (m0 + wm * 64 + i * 16 + rr) as usize;
                let col = (n0 + wn * 64 + j * 8 + cc) as usize;
                store4(c, row * nu + col, v);
            }
        }
        return;
    }
    for i in 0..4u32 {
        for j in 0..8u32 {
            let d = acc[(i * 8 + j) as usize];
            let row = (m0 + wm * 64 + i * 16 + gr) as usize;
            let col = (n0 + wn * 64 + j * 8 + tc) as usize;
            let (i0, i1) = (row * nu + col, (row + 8) * nu + col);
            // SAFETY: row + 8 < m and col + 1 < n (the tile lies inside C), c.len() >= m n checked
            // above.
            unsafe {
                *c.get_unchecked_mut(i0) = d[0];
                *c.get_unchecked_mut(i0 + 1) = d[1];
                *c.get_unchecked_mut(i1) = d[2];
                *c.get_unchecked_mut(i1 + 1) = d[3];
            }
        }
    }
}
