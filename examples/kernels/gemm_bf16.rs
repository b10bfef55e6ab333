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
