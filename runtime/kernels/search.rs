//! The built-in binary searches behind `searchsorted` (runtime/src/search.rs), written with
//! cuprum's own macros (`crate = crate`) and precompiled by the runtime's build.rs (f32, f64 and
//! i64; other dtypes compile with NVRTC at first use). NaN sorts after every number, as in
//! NumPy's sort, so `x < y` is "x before y" with NaN last.

use crate::lang::prelude::*;
use cuprum_macros::elementwise;

/// The first index `i` of the sorted `a` (`n` elements) with `v <= a[i]` (NumPy's side='left').
#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn search_left<T: Real>(v: T, a: &Raw<T>, n: i64) -> i64 {
    let mut lo = 0i64;
    let mut hi = n;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let x = a[mid];
        // x before v: x < v, or v is NaN and x is not.
        if x < v || (v != v && x == x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The first index `i` of the sorted `a` (`n` elements) with `v < a[i]` (NumPy's side='right').
#[elementwise(crate = crate, instances = [f32, f64, i64])]
pub fn search_right<T: Real>(v: T, a: &Raw<T>, n: i64) -> i64 {
    let mut lo = 0i64;
    let mut hi = n;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let x = a[mid];
        // v before x: v < x, or x is NaN and v is not.
        if v < x || (x != x && v == v) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}
