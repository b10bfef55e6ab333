//! Tensor cores and asynchronous copies on the CPU device: `mma_*` and `ldmatrix_*` gather the
//! warp's fragments (or row indices) through its exchange slots (`warp::gather`) and compute the
//! lane's part with the definitions of `lang::tensor`; `cp_async` copies at once, so its commit
//! and wait have nothing to do. Shared-memory rows are checked as on a GPU (`cuprum/tensor.h`).

use super::memory::{Load, Slice, Store, misaligned, out_of_range};
use super::threads::lane_id;
use super::warp::gather;
use crate::lang::intrinsics::KernelIndex;
use crate::lang::tensor::{self as t, Bits16, MmaHalf};
use crate::lang::traits::Scalar;

/// Every lane's `v` (`size_of::<[T; K]>() <= 16`); a lane that did not take part gives zeros, and
/// outside a coroutine every lane holds the caller's `v` (the prelude's one-thread model).
pub(super) fn all_lanes<T: Scalar + Copy, const K: usize>(v: [T; K]) -> [[T; K]; 32] {
    const { assert!(size_of::<[T; K]>() <= 16) };
    let mut bytes = [0u8; 16];
    // SAFETY: `v` is a live `[T; K]` of at most 16 bytes (checked above); `Scalar` types have no
    // padding, so every byte is initialised.
    unsafe { std::ptr::copy_nonoverlapping((&v as *const [T; K]).cast::<u8>(), bytes.as_mut_ptr(), size_of::<[T; K]>()) };
    let Some(lanes) = gather(T::DTYPE, bytes) else {
        return [v; 32];
    };
    lanes.map(|b| match b {
        // SAFETY: the bytes are a `[T; K]` another lane of the same call deposited (same dtype
        // tag, same call site's `K`); any bytes of a `Scalar` are a valid value.
        Some(b) => unsafe { (b.as_ptr() as *const [T; K]).read_unaligned() },
        None => [T::default(); K],
    })
}

/// `mma_m16n8k16` (`lang::tensor`).
pub fn mma_m16n8k16<T: MmaHalf>(a: [T; 8], b: [T; 4], c: [f32; 4]) -> [f32; 4] {
    t::mma_m16n8k16_warp(&all_lanes(a), &all_lanes(b), c, lane_id())
}

/// `mma_m16n8k8_tf32` (`lang::tensor`).
pub fn mma_m16n8k8_tf32(a: [f32; 4], b: [f32; 2], c: [f32; 4]) -> [f32; 4] {
    t::mma_m16n8k8_tf32_warp(&all_lanes(a), &all_lanes(b), c, lane_id())
}

/// `mma_m16n8k32_i8` (`lang::tensor`).
pub fn mma_m16n8k32_i8(a: [i8; 16], b: [i8; 8], c: [i32; 4]) -> [i32; 4] {
    t::mma_m16n8k32_i8_warp(&all_lanes(a), &all_lanes(b), c, lane_id())
}

/// Whether `n` elements from `i` lie in `0..len` with `i` a multiple of `align`; records the
/// violation otherwise (as `cuprum::rows_ok` does on a GPU).
fn rows_ok<I: KernelIndex>(i: I, n: usize, len: usize, align: usize) -> bool {
    let u = i.to_usize();
    if u < len && u % align == 0 && n <= len - u {
        return true;
    }
    if u < len && u % align != 0 {
        misaligned(i.to_i128(), align);
    } else {
        out_of_range(if u < len { (u + n - 1) as i128 } else { i.to_i128() }, len);
    }
    false
}

fn ldmatrix<T: Bits16, I: KernelIndex, const X: usize, const OUT: usize>(s: Slice<'_, T>, i: I, trans: bool) -> [T; OUT] {
    let lane = lane_id();
    let row = if lane < 8 * X as u32 && rows_ok(i, 8, s.len(), 8) { i.to_usize() as u64 } else { 0 };
    let rows = all_lanes([row]).map(|[r]| r as usize);
    t::ldmatrix_lane::<T, X, OUT>(&rows, lane, trans, |k| s.load(k))
}

macro_rules! ldmatrix_fns {
    ($($name:ident, $x:literal, $out:literal, $trans:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "` (`lang::tensor`).")]
        pub fn $name<T: Bits16, I: KernelIndex>(s: Slice<'_, T>, i: I) -> [T; $out] {
            ldmatrix::<T, I, $x, $out>(s, i, $trans)
        }
    )*};
}

ldmatrix_fns! {
    ldmatrix_x1, 1, 2, false;
    ldmatrix_x2, 2, 4, false;
    ldmatrix_x4, 4, 8, false;
    ldmatrix_x1_trans, 1, 2, true;
    ldmatrix_x2_trans, 2, 4, true;
    ldmatrix_x4_trans, 4, 8, true;
}

/// `cp_async` (`lang::tensor`): copies at once.
pub fn cp_async<T: Scalar + Copy, I: KernelIndex, J: KernelIndex>(dst: Slice<'_, T>, di: I, src: Slice<'_, T>, si: J) {
    let n = 16 / size_of::<T>();
    if !rows_ok(di, n, dst.len(), n) || !rows_ok(si, n, src.len(), 1) {
        return;
    }
    let s0 = si.to_usize();
    if let Some(p) = src.at(s0) {
        if (p as usize) % 16 != 0 {
            misaligned(si.to_i128(), n);
            return;
        }
    }
    let d0 = di.to_usize();
    for k in 0..n {
        dst.store(d0 + k, src.load(s0 + k));
    }
}

macro_rules! unchecked_fns {
    ($($name:ident, $checked:ident, $out:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "` (`lang::tensor`): checked on the CPU device.")]
        ///
        /// # Safety
        ///
        /// None needed here: the rows are checked (the GPU's form is the one that trusts them).
        pub unsafe fn $name<T: Bits16, I: KernelIndex>(s: Slice<'_, T>, i: I) -> [T; $out] {
            $checked(s, i)
        }
    )*};
}

unchecked_fns! {
    ldmatrix_x1_unchecked, ldmatrix_x1, 2;
    ldmatrix_x2_unchecked, ldmatrix_x2, 4;
    ldmatrix_x4_unchecked, ldmatrix_x4, 8;
    ldmatrix_x1_trans_unchecked, ldmatrix_x1_trans, 2;
    ldmatrix_x2_trans_unchecked, ldmatrix_x2_trans, 4;
    ldmatrix_x4_trans_unchecked, ldmatrix_x4_trans, 8;
}

/// `cp_async_unchecked` (`lang::tensor`): checked on the CPU device.
///
/// # Safety
///
/// None needed here: the operands are checked (the GPU's form is the one that trusts them).
pub unsafe fn cp_async_unchecked<T: Scalar + Copy, I: KernelIndex, J: KernelIndex>(dst: Slice<'_, T>, di: I, src: Slice<'_, T>, si: J) {
    cp_async(dst, di, src, si)
}

/// `cp_async_commit` (`lang::tensor`): the copies are complete already.
pub fn cp_async_commit() {}

/// `cp_async_wait` (`lang::tensor`): the copies are complete already.
pub fn cp_async_wait<const PENDING: u32>() {}
