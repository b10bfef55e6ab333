//! The built-in compaction kernels behind `nonzero`, `flatnonzero`, `argwhere`
//! (runtime/src/nonzero.rs) and `unique_all` (runtime/src/unique.rs), written with cuprum's own
//! macros (`crate = crate`) and precompiled by the runtime's build.rs (two instances: neither is
//! generic).
//!
//! The caller marks the positions to keep with 0 or 1 and scans the marks with the runtime's
//! `cumsum` (inclusive); a marked position `i` is then the one where the scan steps up, and its
//! rank among the marked ones is the scan's value before it. `marked_coords` writes each marked
//! position's coordinates in a C-order shape at that rank (one pass, no atomics, in order);
//! `scatter_ranks` sends every position's rank back through a permutation (`unique`'s inverse).

use crate::lang::prelude::*;
use cuprum_macros::rawkernel;

/// For each position `i < n` where the inclusive scan `c` of 0/1 marks steps up (`c[i] != c[i -
/// 1]`, or `c[0] != 0`), the coordinates of `i` in the C-order shape `shape` (`ndim` extents,
/// `ndim >= 1`), coordinate `d` to `out[d * dim_stride + rank * rank_stride]` with `rank = c[i] -
/// 1`. Any grid (a grid-stride loop).
#[rawkernel(crate = crate)]
pub fn marked_coords(c: &[i64], shape: &[i64], out: &mut [i64], n: u64, ndim: u32, dim_stride: i64, rank_stride: i64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < n {
        let k = i as usize;
        let before = if k == 0 { 0 } else { c[k - 1] };
        if c[k] != before {
            let mut rest = i as i64;
            let mut d = ndim as i64 - 1;
            while d >= 0 {
                let extent = shape[d as usize];
                out[(d * dim_stride + before * rank_stride) as usize] = rest % extent;
                rest /= extent;
                d -= 1;
            }
        }
        i += step;
    }
}

/// `out[p[i]] = c[i] - 1` for `i < n`: with `c` the inclusive scan of 0/1 marks, the rank of the
/// last marked position at or before `i` (for `unique`, the run of equal sorted keys that `i`
/// belongs to), sent to the place `p[i]` that `i` had before the permutation `p`. Any grid (a
/// grid-stride loop).
#[rawkernel(crate = crate)]
pub fn scatter_ranks(c: &[i64], p: &[i64], out: &mut [i64], n: u64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < n {
        let k = i as usize;
        out[p[k] as usize] = c[k] - 1;
        i += step;
    }
}
