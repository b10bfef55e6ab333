//! Warp collectives on the CPU device: the steps of `cuprum/warp.h` on this module's shuffles, so
//! that each lane gets the GPU's bits (a butterfly for the reductions, Hillis-Steele steps for the
//! prefix sums).

use super::threads::lane_id;
use super::warp::{shfl_up_sync_width, shfl_xor_sync_width};
use crate::lang::traits::{Number, Real};

fn reduce<T: Number>(mut v: T, width: u32, op: impl Fn(T, T) -> T) -> T {
    let mut o = width.clamp(1, 32) / 2;
    while o > 0 {
        v = op(v, shfl_xor_sync_width(u32::MAX, v, o, width));
        o /= 2;
    }
    v
}

/// `cuprum::warp_reduce_sum(v, width)`.
pub fn warp_reduce_sum_width<T: Number>(v: T, width: u32) -> T {
    reduce(v, width, |a, b| a.__wrapping_add(b))
}

/// `cuprum::warp_reduce_min(v, width)`.
pub fn warp_reduce_min_width<T: Real>(v: T, width: u32) -> T {
    reduce(v, width, |a, b| a.min(b))
}

/// `cuprum::warp_reduce_max(v, width)`.
pub fn warp_reduce_max_width<T: Real>(v: T, width: u32) -> T {
    reduce(v, width, |a, b| a.max(b))
}

/// `cuprum::warp_inclusive_sum(v, width)`.
pub fn warp_inclusive_sum_width<T: Number>(mut v: T, width: u32) -> T {
    let w = width.clamp(1, 32);
    let lane = lane_id() & (w - 1);
    let mut o = 1;
    while o < w {
        let before = shfl_up_sync_width(u32::MAX, v, o, width);
        if lane >= o {
            v = before.__wrapping_add(v);
        }
        o *= 2;
    }
    v
}

/// `cuprum::warp_exclusive_sum(v, width)`.
pub fn warp_exclusive_sum_width<T: Number>(v: T, width: u32) -> T {
    let inclusive = warp_inclusive_sum_width(v, width);
    let before = shfl_up_sync_width(u32::MAX, inclusive, 1, width);
    if lane_id() & (width.clamp(1, 32) - 1) == 0 { T::zero() } else { before }
}

/// `cuprum::warp_any(p)`: a butterfly of the lanes' flags, as every lane needs the result.
pub fn warp_any(p: bool) -> bool {
    reduce(p as u32, 32, |a, b| a | b) != 0
}

/// `cuprum::warp_all(p)`.
pub fn warp_all(p: bool) -> bool {
    reduce(p as u32, 32, |a, b| a & b) != 0
}

/// `cuprum::warp_reduce_sum(v)`.
pub fn warp_reduce_sum<T: Number>(v: T) -> T {
    warp_reduce_sum_width(v, 32)
}

/// `cuprum::warp_reduce_min(v)`.
pub fn warp_reduce_min<T: Real>(v: T) -> T {
    warp_reduce_min_width(v, 32)
}

/// `cuprum::warp_reduce_max(v)`.
pub fn warp_reduce_max<T: Real>(v: T) -> T {
    warp_reduce_max_width(v, 32)
}

/// `cuprum::warp_inclusive_sum(v)`.
pub fn warp_inclusive_sum<T: Number>(v: T) -> T {
    warp_inclusive_sum_width(v, 32)
}

/// `cuprum::warp_exclusive_sum(v)`.
pub fn warp_exclusive_sum<T: Number>(v: T) -> T {
    warp_exclusive_sum_width(v, 32)
}
