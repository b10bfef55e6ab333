//! SGEMM as a `#[rawkernel]`: C = alpha * A * B + beta * C on Fortran-ordered (column-major)
//! matrices, A m x k, B k x n, C m x n (CuPy's SGEMM example, with a larger tile).
//!
//! A block of 256 threads computes a 128 x 128 tile of C, stepping through k sixteen at a time.
//! Each step stages the 128 x 16 slice of A and the 16 x 128 slice of B in shared memory, both
//! k-major (`sa[kk][row]`, `sb[kk][col]`: A is copied as it lies, B transposed), and each thread
//! accumulates an 8 x 8 register tile: rows `4 tr + {0..4}` and `64 + 4 tr + {0..4}`, columns
//! likewise with `tc`. It reads its fragments as runs of four consecutive floats at indices
//! `base + 4 x + const` (nvcc merges each run into one 128-bit shared load, LDS.128); a warp covers
//! 8 values of `tr` and 4 of `tc`, so each of its fragment loads stays inside one 128-byte row.
//!
//! Per `kk` a thread issues 4 LDS.128 for 64 FMAs; with the loop's 7 other instructions the inner
//! loop is 75 instructions, 85% FMAs, and a whole step (16 of them, plus 16 global loads, 16
//! shared stores, their address arithmetic and the barrier: about 120) is 78% FMAs, the bound on
//! the fraction of the FP32 peak this kernel can reach (2 m n k flops, one FMA = 2). The shared
//! tiles are double-buffered, and the next step's global loads are issued into registers before
//! the current step's FMAs and stored after them: one barrier per step, the global latency hidden
//! behind 1024 FMAs per thread. nvcc gives it 118 registers: 2 blocks (16 warps) per SM.
//!
//! Measured on an H200 (4096^3, `examples/sgemm.rs`): 42.0 TFLOP/s against cuBLAS's 50.7 (FP32,
//! no TF32) in the same run, 0.83 (63% of the FP32 FMA peak at 1.98 GHz, 66.9 TFLOP/s; the
//! `cuprum-bench` row measures both). The same kernel with a k-step of 8 ran at 39.9 (0.79): twice
//! the per-step work (address arithmetic, stores, barrier) for the same FMAs. What did not help:
//! unrolling the `kk` loop (nvcc keeps it rolled; unrolled by hand it needs 134 to 144 registers,
//! one block per SM: 31-32 TFLOP/s), double-buffering the fragments in registers (39.4 with a
//! k-step of 8), and staging loads of 4 consecutive elements per thread (fewer instructions, but
//! 4 times the L1 requests: 34.5).

use cuprum::prelude::*;

/// Rows and columns of C per block, and the k-step.
const BM: u32 = 128;
const BN: u32 = 128;
const BK: u32 = 16;
/// Threads per block (a 16 x 16 grid of 8 x 8 register tiles).
const THREADS: u32 = 256;
/// Global loads per thread per step, for each of A and B: (BM * BK) / THREADS.
const LOADS: usize = 8;
/// Row pitch of `sb`: 4 floats of padding spread its transposing stores over the banks (2-way
/// conflicts at most) and keep each row 16-byte aligned for the 128-bit loads.
const SB_LD: u32 = BN + 4;

/// `acc + fa fb^T`: an 8 x 8 outer product.
#[device]
fn rank1(mut acc: [f32; 64], fa: [f32; 8], fb: [f32; 8]) -> [f32; 64] {
    for i in 0..8usize {
        for j in 0..8usize {
            acc[i * 8 + j] = fa[i].mul_add(fb[j], acc[i * 8 + j]);
        }
    }
    acc
}

#[rawkernel]
#[allow(clippy::too_many_arguments)] // the BLAS argument list
pub fn sgemm(m: u32, n: u32, k: u32, alpha: f32, a: &[f32], b: &[f32], beta: f32, c: &mut [f32]) {
    // Two buffers each: sa[buf * 2048 + kk * 128 + row], sb[buf * 2112 + kk * 132 + col].
    let sa = shared_array::<f32, 4096>();
    let sb = shared_array::<f32, 4224>();
    let t = thread_idx().x;
    // The block is 256 threads wide. Saying so lets the compiler prove every shared-memory and
    // register-tile index below in range, so they carry no run-time index check
    // (docs/semantics.md, row 18).
    if t >= THREADS {
        return;
    }
    // The operands hold m x k, k x n and m x n elements: checked once here, so that the global
    // loads and the epilogue below can skip their per-access checks.
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    if a.len() < mu * ku || b.len() < ku * nu || c.len() < mu * nu {
        return;
    }
    let row0 = block_idx().x * BM;
    let col0 = block_idx().y * BN;
    // Whole tile inside C: its steps with k0 + BK <= k load without per-element conditions.
    let interior = row0 + BM <= m && col0 + BN <= n;

    // Staging: thread t loads A's row `ar` at k `ak + 2 l` (a warp reads 128 consecutive bytes of
    // a column) and B's k `bk` of column `bc + 16 l` (a warp reads 64 bytes of each of 2 columns),
    // for l in 0..8. `a_idx` and `b_idx` are the element indices of the l = 0 loads of the step.
    let (ar, ak) = (t % BM, t / BM);
    let (bk, bc) = (t % BK, t / BK);
    let a_row_ok = row0 + ar < m;
    let a_stride = 2 * mu;
    let b_stride = 16 * ku;
    let mut a_idx = (row0 + ar) as usize + ak as usize * mu;
    let mut b_idx = bk as usize + (col0 + bc) as usize * ku;

    // The thread's 8 x 8 tile: a warp covers 8 values of `tr` and 4 of `tc`.
    let (warp, lane) = (t / 32, t % 32);
    let tr = (warp % 2) * 8 + lane % 8;
    let tc = (warp / 2) * 4 + lane / 8;

    let mut acc = [0.0f32; 64];
    let mut pa = [0.0f32; LOADS];
    let mut pb = [0.0f32; LOADS];
    let steps = k / BK + (k % BK).min(1);
    // Iteration s loads step s into registers, computes step s - 1 from shared memory, then stores
    // step s into the buffer step s - 1 did not use. The buffer written at s was last read at
    // s - 2, before the barrier of iteration s - 1.
    let mut s = 0u32;
    while s <= steps {
        if s < steps {
            let k0 = s * BK;
            if interior && k0 + BK <= k {
                for l in 0..LOADS {
                    // SAFETY: the tile is inside C and k0 + BK <= k, so row0 + ar < m and
                    // k0 + ak + 2 l < k: the A index (row0 + ar) + (k0 + ak + 2 l) m is below
                    // m k <= a.len() (checked above); likewise k0 + bk < k and col0 + bc + 16 l
                    // < n put the B index below k n <= b.len(). Computed in usize: no overflow.
                    unsafe {
                        pa[l] = *a.get_unchecked(a_idx + l * a_stride);
                        pb[l] = *b.get_unchecked(b_idx + l * b_stride);
                    }
                }
            } else {
                for l in 0..LOADS {
                    pa[l] = if a_row_ok && k0 + ak + 2 * (l as u32) < k {
                        // SAFETY: row0 + ar < m and k0 + ak + 2 l < k, as above.
                        unsafe { *a.get_unchecked(a_idx + l * a_stride) }
                    } else {
                        0.0
                    };
                    pb[l] = if k0 + bk < k && col0 + bc + 16 * (l as u32) < n {
                        // SAFETY: k0 + bk < k and col0 + bc + 16 l < n, as above.
                        unsafe { *b.get_unchecked(b_idx + l * b_stride) }
                    } else {
                        0.0
                    };
                }
            }
            a_idx += BK as usize * mu;
            b_idx += BK as usize;
        }
        if s > 0 {
            let ia = (((s + 1) & 1) * (BK * BM) + tr * 4) as usize;
            let ib = (((s + 1) & 1) * (BK * SB_LD) + tc * 4) as usize;
            for kk in 0..BK as usize {
                let (ka, kb) = (ia + kk * BM as usize, ib + kk * SB_LD as usize);
                let mut fa = [0.0f32; 8];
                let mut fb = [0.0f32; 8];
                for i in 0..4usize {
                    fa[i] = sa[ka + i];
                    fa[i + 4] = sa[ka + 64 + i];
                    fb[i] = sb[kb + i];
                    fb[i + 4] = sb[kb + 64 + i];
                }
                acc = rank1(acc, fa, fb);
            }
        }
        if s < steps {
            let ia = ((s & 1) * (BK * BM) + ak * BM + ar) as usize;
            let ib = ((s & 1) * (BK * SB_LD) + bk * SB_LD + bc) as usize;
            for l in 0..LOADS {
                sa[ia + l * (2 * BM) as usize] = pa[l];
                sb[ib + l * 16] = pb[l];
            }
        }
        sync_threads();
        s += 1;
    }

    for i in 0..8u32 {
        let gr = row0 + tr * 4 + i % 4 + (i / 4) * 64;
        for j in 0..8u32 {
            let gc = col0 + tc * 4 + j % 4 + (j / 4) * 64;
            if gr < m && gc < n {
                let q = gr as usize + gc as usize * mu;
                let v = acc[(i * 8 + j) as usize];
                // SAFETY: gr < m and gc < n, so q < m * n <= c.len() (checked above).
                unsafe {
                    let old = *c.get_unchecked(q);
                    *c.get_unchecked_mut(q) = alpha * v + beta * old;
                }
            }
        }
    }
}
