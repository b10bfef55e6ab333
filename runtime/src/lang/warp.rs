//! Warp collectives of the kernel language (docs/kernel-language.md, "Warp collectives"): a
//! warp's (or a tile's) sum, minimum and maximum, and prefix sums, as CUB's `WarpReduce` and
//! `WarpScan` give them, and the votes `warp_any` / `warp_all`.
//!
//! Every lane of the warp calls them together (as it calls the shuffles they are built on), and
//! each lane gets its result. The `_width` forms work within tiles of `width` lanes (a power of
//! two up to 32): lanes `0..width`, `width..2 * width`, ... The sums add as the kernel's `+` does
//! (integers wrap); the minimum and maximum are `Real::min` / `Real::max` (a NaN operand is
//! ignored, as Rust's `f32::min` does). The reductions combine in a butterfly, so every lane of a
//! tile gets the same bits.
//!
//! The host definitions model a warp of one lane (as every intrinsic does, `intrinsics`): a
//! reduction and an inclusive sum return `v`, an exclusive sum returns zero. On the CPU device the
//! 32 lanes run the GPU's steps (`cpu::lang`).

use super::traits::{Number, Real};

/// The sum of `v` over the warp: CUDA `cuprum::warp_reduce_sum(v)` (a butterfly of
/// `__shfl_xor_sync`). Host: `v`.
pub fn warp_reduce_sum<T: Number>(v: T) -> T {
    v
}

/// The minimum of `v` over the warp. Host: `v`.
pub fn warp_reduce_min<T: Real>(v: T) -> T {
    v
}

/// The maximum of `v` over the warp. Host: `v`.
pub fn warp_reduce_max<T: Real>(v: T) -> T {
    v
}

/// Whether `p` holds in any lane of the warp: CUDA `__any_sync(0xffffffff, p)` (`vote.sync.any`),
/// the same in every lane. Host: `p`.
pub fn warp_any(p: bool) -> bool {
    p
}

/// Whether `p` holds in every lane of the warp: CUDA `__all_sync(0xffffffff, p)`. Host: `p`.
pub fn warp_all(p: bool) -> bool {
    p
}

/// The sum of `v` over this lane and the lanes before it: CUDA `cuprum::warp_inclusive_sum(v)`
/// (Hillis-Steele steps of `__shfl_up_sync`). Host: `v`.
pub fn warp_inclusive_sum<T: Number>(v: T) -> T {
    v
}

/// The sum of `v` over the lanes before this one (zero in lane 0). Host: zero.
pub fn warp_exclusive_sum<T: Number>(v: T) -> T {
    let _ = v;
    T::zero()
}

/// [`warp_reduce_sum`] within tiles of `width` lanes. Host: `v`.
pub fn warp_reduce_sum_width<T: Number>(v: T, width: u32) -> T {
    let _ = width;
    v
}

/// [`warp_reduce_min`] within tiles of `width` lanes. Host: `v`.
pub fn warp_reduce_min_width<T: Real>(v: T, width: u32) -> T {
    let _ = width;
    v
}

/// [`warp_reduce_max`] within tiles of `width` lanes. Host: `v`.
pub fn warp_reduce_max_width<T: Real>(v: T, width: u32) -> T {
    let _ = width;
    v
}

/// [`warp_inclusive_sum`] within tiles of `width` lanes. Host: `v`.
pub fn warp_inclusive_sum_width<T: Number>(v: T, width: u32) -> T {
    let _ = width;
    v
}

/// [`warp_exclusive_sum`] within tiles of `width` lanes. Host: zero.
pub fn warp_exclusive_sum_width<T: Number>(v: T, width: u32) -> T {
    let _ = (v, width);
    T::zero()
}
