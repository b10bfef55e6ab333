//! Warp shuffles on the CPU device: each lane deposits its value in its warp's slots and
//! suspends; once every lane of the warp has suspended, the scheduler publishes the values
//! (`cpu::grid`), and each lane, resumed, reads the one of its source lane. Outside a
//! coroutine (a kernel without warp operations, or a host call) a lane sees its own value.
//! Lane arithmetic follows CUDA's `__shfl_*_sync` with `width`.

use super::context::{self, Slot, Stop};
use crate::lang::traits::Scalar;

/// Exchanges `v` with the warp; `src(lane)` is the lane to read, `None` for the lane's own `v`.
fn exchange<T: Scalar>(v: T, src: impl FnOnce(u32) -> Option<u32>) -> T {
    let Some(c) = context::current() else { return v };
    if c.yielder.get().is_null() {
        return v;
    }
    let (warp, lane) = ((c.linear.get() / 32) as usize, c.lane());
    let mut slot = Slot { dtype: Some(T::DTYPE), bytes: [0; 16] };
    let n = size_of::<T>().min(16);
    // SAFETY: `v` is a live `T` of `n <= 16` bytes (every scalar is at most 16 bytes), copied
    // into a 16-byte buffer; `Scalar` types have no padding.
    unsafe { std::ptr::copy_nonoverlapping((&v as *const T).cast::<u8>(), slot.bytes.as_mut_ptr(), n) };
    c.block().warps.borrow_mut()[warp].deposit[lane as usize] = slot;
    c.suspend(Stop::Warp);
    let Some(s) = src(lane) else { return v };
    let got = c.block().warps.borrow()[warp].published[s as usize % 32];
    if got.dtype != Some(T::DTYPE) || size_of::<T>() > 16 {
        // That lane did not shuffle a `T` (it has finished, or diverged): undefined on a GPU.
        return v;
    }
    // SAFETY: the bytes are those of a `T` (the same dtype) written by the source lane.
    unsafe { (got.bytes.as_ptr() as *const T).read_unaligned() }
}

/// Deposits `bytes` (of values of dtype `tag`) and returns every lane's deposit once the warp has
/// arrived: `None` for a lane that deposited something else (it has finished, or diverged), and
/// `None` altogether outside a coroutine (the caller is the only thread).
pub(crate) fn gather(tag: cuprum_abi::DType, bytes: [u8; 16]) -> Option<[Option<[u8; 16]>; 32]> {
    let c = context::current()?;
    if c.yielder.get().is_null() {
        return None;
    }
    let (warp, lane) = ((c.linear.get() / 32) as usize, c.lane());
    c.block().warps.borrow_mut()[warp].deposit[lane as usize] = Slot {
        dtype: Some(tag),
        bytes,
    };
    c.suspend(Stop::Warp);
    let published = &c.block().warps.borrow()[warp].published;
    Some(std::array::from_fn(|l| {
        (published[l].dtype == Some(tag)).then_some(published[l].bytes)
    }))
}

/// The first lane of `lane`'s group of `width` lanes (`width` a power of two up to 32).
fn group(lane: u32, width: u32) -> u32 {
    let w = width.clamp(1, 32);
    lane & !(w - 1)
}

/// `__shfl_sync(mask, v, src_lane, width)`.
pub fn shfl_sync_width<T: Scalar>(mask: u32, v: T, src_lane: u32, width: u32) -> T {
    let _ = mask;
    exchange(v, |lane| Some(group(lane, width) + src_lane % width.clamp(1, 32)))
}

/// `__shfl_up_sync(mask, v, delta, width)`.
pub fn shfl_up_sync_width<T: Scalar>(mask: u32, v: T, delta: u32, width: u32) -> T {
    let _ = mask;
    exchange(v, |lane| (lane - group(lane, width) >= delta).then(|| lane - delta))
}

/// `__shfl_down_sync(mask, v, delta, width)`.
pub fn shfl_down_sync_width<T: Scalar>(mask: u32, v: T, delta: u32, width: u32) -> T {
    let _ = mask;
    exchange(v, |lane| {
        let w = width.clamp(1, 32);
        (lane - group(lane, w) + delta < w).then(|| lane + delta)
    })
}

/// `__shfl_xor_sync(mask, v, lane_mask, width)`.
pub fn shfl_xor_sync_width<T: Scalar>(mask: u32, v: T, lane_mask: u32, width: u32) -> T {
    let _ = mask;
    exchange(v, |lane| {
        let t = lane ^ lane_mask;
        (t < group(lane, width) + width.clamp(1, 32)).then_some(t)
    })
}

/// `__shfl_sync(mask, v, src_lane)`.
pub fn shfl_sync<T: Scalar>(mask: u32, v: T, src_lane: u32) -> T {
    shfl_sync_width(mask, v, src_lane, 32)
}

/// `__shfl_up_sync(mask, v, delta)`.
pub fn shfl_up_sync<T: Scalar>(mask: u32, v: T, delta: u32) -> T {
    shfl_up_sync_width(mask, v, delta, 32)
}

/// `__shfl_down_sync(mask, v, delta)`.
pub fn shfl_down_sync<T: Scalar>(mask: u32, v: T, delta: u32) -> T {
    shfl_down_sync_width(mask, v, delta, 32)
}

/// `__shfl_xor_sync(mask, v, lane_mask)`.
pub fn shfl_xor_sync<T: Scalar>(mask: u32, v: T, lane_mask: u32) -> T {
    shfl_xor_sync_width(mask, v, lane_mask, 32)
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn groups_of_width_lanes() {
        assert_eq!((group(13, 8), group(13, 32), group(31, 4)), (8, 0, 28));
    }
}
