//! SGEMM as a `#[rawkernel]`: a port of CuPy's SGEMM example (after MAGMA), C = alpha * A * B +
//! beta * C on Fortran-ordered (column-major) matrices.
//!
//! A block of 16 x 16 threads computes a 64 x 64 tile of C. Each step stages a 64 x 16 tile of A
//! and a 16 x 64 tile of B in shared memory; each thread then accumulates a 4 x 4 register tile
//! (rows `tx + 16 i`, columns `ty + 16 j` of the block's tile, so that a warp's shared-memory
//! reads are consecutive or broadcast).

use cuprum::prelude::*;

/// Tile of C per block (rows and columns), the k-step, and the threads per block edge.
const BLK: u32 = 64;
const BLK_K: u32 = 16;
const DIM: u32 = 16;

#[rawkernel]
pub fn sgemm(m: u32, n: u32, k: u32, alpha: f32, a: &[f32], b: &[f32], beta: f32, c: &mut [f32]) {
    // sA[kk * 64 + row], sB[col * 17 + kk] (padded: conflict-free stores).
    let sa = shared_array::<f32, 1024>();
    let sb = shared_array::<f32, 1088>();
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    // The block is DIM x DIM threads. Saying so lets the compiler prove every shared-memory and
    // register-tile index below in range, so they carry no run-time index check
    // (docs/semantics.md, row 18); the global loads and stores keep theirs.
    if tx >= DIM || ty >= DIM {
        return;
    }
    // The operands hold m x k, k x n and m x n elements: checked once here, so that the tile loads
    // below can skip their per-load checks (a checked load in this loop costs 30% of the kernel's
    // speed on an H100: 17.3 against 24.3 TFLOP/s at 4096^3).
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    if a.len() < mu * ku || b.len() < ku * nu || c.len() < mu * nu {
        return;
    }
    let tid = ty * DIM + tx;
    let row0 = block_idx().x * BLK;
    let col0 = block_idx().y * BLK;
    let mut acc = [0.0f32; 16];
    let mut k0 = 0u32;
    while k0 < k {
        for l in 0..4u32 {
            let idx = tid + 256 * l;
            let (r, kk) = (idx % BLK, idx / BLK);
            let (gr, gk) = (row0 + r, k0 + kk);
            sa[(kk * BLK + r) as usize] = if gr < m && gk < k {
                // SAFETY: gr < m and gk < k, so gr + gk * m < m * k <= a.len() (checked above;
                // when m * k passes u32, the u32 sum is still below 2^32 <= m * k).
                unsafe { *a.get_unchecked((gr + gk * m) as usize) }
            } else {
                0.0
            };
            let (kb, cb) = (idx % BLK_K, idx / BLK_K);
            let (gk, gc) = (k0 + kb, col0 + cb);
            sb[(cb * (BLK_K + 1) + kb) as usize] = if gk < k && gc < n {
                // SAFETY: gk < k and gc < n, so gk + gc * k < k * n <= b.len() (as above).
                unsafe { *b.get_unchecked((gk + gc * k) as usize) }
            } else {
                0.0
            };
        }
        sync_threads();
        for kk in 0..BLK_K {
            let mut ra = [0.0f32; 4];
            let mut rb = [0.0f32; 4];
            for i in 0..4u32 {
                ra[i as usize] = sa[(kk * BLK + tx + DIM * i) as usize];
                rb[i as usize] = sb[((ty + DIM * i) * (BLK_K + 1) + kk) as usize];
            }
            for i in 0..4usize {
                for j in 0..4usize {
                    acc[i * 4 + j] = ra[i].mul_add(rb[j], acc[i * 4 + j]);
                }
            }
        }
        sync_threads();
        k0 += BLK_K;
    }
    for i in 0..4u32 {
        for j in 0..4u32 {
            let (gr, gc) = (row0 + tx + DIM * i, col0 + ty + DIM * j);
            if gr < m && gc < n {
                let q = (gr + gc * m) as usize;
                c[q] = alpha * acc[(i * 4 + j) as usize] + beta * c[q];
            }
        }
    }
}
