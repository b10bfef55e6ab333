//! The built-in binary search behind `searchsorted` (runtime/src/search.rs), written with
//! cuprum's own macros (`crate = crate`) and precompiled by the runtime's build.rs (f32, f64 and
//! i64; other dtypes compile with NVRTC at first use). NaN sorts after every number, as in
//! NumPy's sort, so "x before y" is `x < y`, or `y` NaN and `x` not.

use crate::lang::prelude::*;
use cuprum_macros::rawkernel;

/// For each `v[i]`, the first index `k` of the sorted `a` with `v[i] <= a[k]` (NumPy's
/// side='left'), or with `v[i] < a[k]` when `right` is not 0 (side='right'), into `out[i]`.
/// A grid-stride loop over `v`.
#[rawkernel(crate = crate, instances = [f32, f64, i64])]
pub fn search_sorted<T: Real>(a: &[T], v: &[T], out: &mut [i64], right: u32) {
    let mut i = grid_1d() as usize;
    let stride = grid_size_1d() as usize;
    while i < v.len() {
        let x = v[i];
        let mut lo = 0usize;
        let mut hi = a.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let y = a[mid];
            // Go right while a[mid] comes before x (left) or not after it (right).
            let go_right = if right != 0 { !(x < y || (y != y && x == x)) } else { y < x || (x != x && y == y) };
            if go_right {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        out[i] = lo as i64;
        i += stride;
    }
}
