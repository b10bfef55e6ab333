//! Atomics on the CPU device: a read-modify-write of one element of a [`Slice`] (global or shared
//! memory), done with a compare-and-swap loop on the element's bits when it has an atomic width
//! (then blocks may run on several host threads), else with a plain read and write (then the
//! launch runs on one host thread: `cpu::grid`). Out of range, nothing is changed, zero is
//! returned and the violation recorded, as for any access. The operations are the prelude's
//! (`crate::lang::intrinsics`), with CUDA's results.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use super::memory::{Slice, atomic_width, read, write, zero};
use crate::element::Element;
use crate::lang::intrinsics::KernelIndex;
use crate::lang::traits::{Int, Number, Real, Scalar};

/// Replaces the element at `i` by `f(old)` atomically and returns `old`.
fn rmw<T: Element + Copy, I: KernelIndex>(a: Slice<'_, T>, i: I, f: impl Fn(T) -> T) -> T {
    let Some(p) = a.at(i) else { return zero() };
    macro_rules! cas {
        ($atomic:ty, $bits:ty) => {{
            // SAFETY: `p` is an element of the slice, aligned for `T`, whose size and alignment
            // are the atomic's (`atomic_width`); every bit pattern the loop stores is a `T`'s.
            let cell = unsafe { <$atomic>::from_ptr(p as *mut $bits) };
            let mut old = cell.load(Ordering::Relaxed);
            loop {
                // SAFETY: `old` holds the bits of a `T` of the same size.
                let value: T = unsafe { std::mem::transmute_copy(&old) };
                let new = f(value);
                // SAFETY: as above, the other way.
                let bits: $bits = unsafe { std::mem::transmute_copy(&new) };
                match cell.compare_exchange_weak(old, bits, Ordering::AcqRel, Ordering::Relaxed) {
                    Ok(_) => return value,
                    Err(seen) => old = seen,
                }
            }
        }};
    }
    if atomic_width(size_of::<T>(), align_of::<T>()) {
        match size_of::<T>() {
            1 => cas!(AtomicU8, u8),
            2 => cas!(AtomicU16, u16),
            4 => cas!(AtomicU32, u32),
            _ => cas!(AtomicU64, u64),
        }
    }
    // SAFETY: an element of the slice; not of an atomic width, so the launch runs on one host
    // thread and nothing else accesses it now.
    unsafe {
        let old = read(p);
        write(p, f(old));
        old
    }
}

/// CUDA `atomicAdd(&a[i], v)`: integers wrap.
pub fn atomic_add<T: Number, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old.__wrapping_add(v))
}

/// CUDA `atomicSub(&a[i], v)`: integers wrap.
pub fn atomic_sub<T: Number, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old.__wrapping_sub(v))
}

/// CUDA `atomicExch(&a[i], v)`.
pub fn atomic_exch<T: Number, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |_| v)
}

/// CUDA `atomicMin(&a[i], v)` (a NaN is ignored, as by `Real::min`).
pub fn atomic_min<T: Real, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old.min(v))
}

/// CUDA `atomicMax(&a[i], v)`.
pub fn atomic_max<T: Real, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old.max(v))
}

/// CUDA `atomicInc(&a[i], v)`: `old >= v ? 0 : old + 1`.
pub fn atomic_inc<I: KernelIndex>(a: Slice<'_, u32>, i: I, v: u32) -> u32 {
    rmw(a, i, |old| if old >= v { 0 } else { old + 1 })
}

/// CUDA `atomicDec(&a[i], v)`: `(old == 0 || old > v) ? v : old - 1`.
pub fn atomic_dec<I: KernelIndex>(a: Slice<'_, u32>, i: I, v: u32) -> u32 {
    rmw(a, i, |old| if old == 0 || old > v { v } else { old - 1 })
}

/// A relaxed atomic load of `a[i]` (the GPU's volatile load).
pub fn atomic_load<T: Number, I: KernelIndex>(a: Slice<'_, T>, i: I) -> T {
    rmw(a, i, |old| old)
}

/// CUDA `atomicAnd(&a[i], v)`.
pub fn atomic_and<T: Int, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old & v)
}

/// CUDA `atomicOr(&a[i], v)`.
pub fn atomic_or<T: Int, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old | v)
}

/// CUDA `atomicXor(&a[i], v)`.
pub fn atomic_xor<T: Int, I: KernelIndex>(a: Slice<'_, T>, i: I, v: T) -> T {
    rmw(a, i, |old| old ^ v)
}

/// CUDA `atomicCAS(&a[i], compare, v)`: bitwise comparison, as on the device.
pub fn atomic_cas<T: Scalar, I: KernelIndex>(a: Slice<'_, T>, i: I, compare: T, v: T) -> T {
    rmw(a, i, |old| if crate::lang::intrinsics::same_bits(&old, &compare) { v } else { old })
}
