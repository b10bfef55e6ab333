//! The GPU intrinsics of the kernel language (docs/kernel-language.md), with their host definitions.
//!
//! The names and signatures here are fixed: the compiler recognises calls to them by name and
//! translates each to its CUDA equivalent (given in each function's documentation). The host
//! definitions exist so that kernel bodies type-check under rustc and elementwise and reduction
//! bodies can run on the host; they model a launch of **one thread in one block**:
//!
//! - `thread_idx()`, `block_idx()` are 0; `block_dim()`, `grid_dim()` are 1; `grid_1d()` is 0 and
//!   `grid_size_1d()` is 1; `lane_id()` is 0 and `warp_size()` is 32;
//! - `sync_*`, `grid_sync` and `thread_fence*` do nothing; a shuffle returns the caller's own `v`;
//! - atomics do their read-modify-write on the slice and return the old value;
//! - `index()` and `loop_size()` are 0 and 1 unless a host driver sets them with
//!   [`with_elementwise_index`];
//! - shared memory is freshly allocated, zeroed (`Default`) memory that is leaked: each call returns
//!   new memory (on the device, every call site names one `__shared__` array per block). Host calls
//!   are meant for tests and type checking, not for long-running loops.
//!
//! No host intrinsic panics, except on an out-of-bounds slice index (as Rust's indexing does).

use std::cell::Cell;

use super::traits::{Int, Number, Real, Scalar};

pub use crate::dim3::Dim3;

const ZERO3: Dim3 = Dim3 { x: 0, y: 0, z: 0 };
const ONE3: Dim3 = Dim3 { x: 1, y: 1, z: 1 };

// ---------------------------------------------------------------------------------------------
// Thread and block indices.
// ---------------------------------------------------------------------------------------------

/// The thread's index in its block: CUDA `threadIdx`. Host: `(0, 0, 0)`.
pub fn thread_idx() -> Dim3 {
    ZERO3
}

/// The block's index in the grid: CUDA `blockIdx`. Host: `(0, 0, 0)`.
pub fn block_idx() -> Dim3 {
    ZERO3
}

/// The block's extent in threads: CUDA `blockDim`. Host: `(1, 1, 1)`.
pub fn block_dim() -> Dim3 {
    ONE3
}

/// The grid's extent in blocks: CUDA `gridDim`. Host: `(1, 1, 1)`.
pub fn grid_dim() -> Dim3 {
    ONE3
}

/// The thread's global 1-D index, `blockIdx.x * blockDim.x + threadIdx.x` (cupyx.jit `grid(1)`).
/// Host: 0.
pub fn grid_1d() -> u32 {
    0
}

/// The thread's global 2-D index `(x, y)` (cupyx.jit `grid(2)`). Host: `(0, 0)`.
pub fn grid_2d() -> (u32, u32) {
    (0, 0)
}

/// The thread's global 3-D index `(x, y, z)` (cupyx.jit `grid(3)`). Host: `(0, 0, 0)`.
pub fn grid_3d() -> (u32, u32, u32) {
    (0, 0, 0)
}

/// The total number of threads in x, `blockDim.x * gridDim.x` (cupyx.jit `gridsize(1)`). Host: 1.
pub fn grid_size_1d() -> u32 {
    1
}

/// The total number of threads in x and y (cupyx.jit `gridsize(2)`). Host: `(1, 1)`.
pub fn grid_size_2d() -> (u32, u32) {
    (1, 1)
}

/// The total number of threads in x, y and z (cupyx.jit `gridsize(3)`). Host: `(1, 1, 1)`.
pub fn grid_size_3d() -> (u32, u32, u32) {
    (1, 1, 1)
}

/// The thread's lane in its warp: CUDA `%laneid` (cupyx.jit `laneid()`). Host: 0.
pub fn lane_id() -> u32 {
    0
}

/// The number of threads in a warp: CUDA `warpSize`, 32.
pub fn warp_size() -> u32 {
    32
}

// ---------------------------------------------------------------------------------------------
// Synchronisation.
// ---------------------------------------------------------------------------------------------

/// Block-wide barrier: CUDA `__syncthreads()`. Host: does nothing.
pub fn sync_threads() {}

/// Barrier for the warp lanes in `mask`: CUDA `__syncwarp(mask)`. Host: does nothing.
pub fn sync_warp(mask: u32) {
    let _ = mask;
}

/// Device-wide memory fence: CUDA `__threadfence()`. Host: does nothing.
pub fn thread_fence() {}

/// Block-wide memory fence: CUDA `__threadfence_block()`. Host: does nothing.
pub fn thread_fence_block() {}

/// Grid-wide barrier: every thread of every block of the launch waits here until all have
/// arrived, and sees the global-memory writes each made before it: CUDA's
/// `cooperative_groups::this_grid().sync()`. It includes a block barrier (`sync_threads()`), and
/// may be called any number of times (in a loop: a persistent kernel's steps).
///
/// A `#[rawkernel]` that calls it (directly or through `#[device]` functions) is launched
/// cooperatively, so every block must be resident at once: the launch is an error
/// (`Error::CooperativeGrid`) unless the grid has at most `NAME::max_cooperative_blocks(&config)`
/// blocks (docs/kernel-language.md, "Grid synchronisation"). Raw kernels and device functions
/// only. Host: does nothing (one thread).
pub fn grid_sync() {}

// ---------------------------------------------------------------------------------------------
// Shared memory.
// ---------------------------------------------------------------------------------------------

/// A statically sized shared-memory array, one per block: CUDA `__shared__ T a[N];`.
///
/// Host: freshly allocated zeroed (`T::default()`) memory, leaked; each call returns new memory.
pub fn shared_array<T: Scalar, const N: usize>() -> &'static mut [T; N] {
    let boxed: Box<[T]> = vec![T::default(); N].into_boxed_slice();
    match <Box<[T; N]>>::try_from(boxed) {
        Ok(array) => Box::leak(array),
        // The vector has exactly N elements.
        Err(_) => unreachable!("a vector of N elements converts to [T; N]"),
    }
}

/// The dynamically sized shared memory of the launch, as an array of `T`: CUDA
/// `extern __shared__ T a[];` (the size in bytes is given at launch).
///
/// Host: freshly allocated zeroed memory of `bytes / size_of::<T>()` elements, leaked, where
/// `bytes` is set by [`with_dynamic_shared_bytes`] (0 by default, an empty slice).
pub fn dynamic_shared<T: Scalar>() -> &'static mut [T] {
    let bytes = DYNAMIC_SHARED_BYTES.with(Cell::get);
    let n = bytes / std::mem::size_of::<T>().max(1);
    Box::leak(vec![T::default(); n].into_boxed_slice())
}

// ---------------------------------------------------------------------------------------------
// Atomics.
// ---------------------------------------------------------------------------------------------

/// An integer type usable as an index of a kernel slice or array in the atomics: `usize`, `u32`,
/// `i32`, `u64`, `i64`. A 32-bit index keeps 32-bit address arithmetic in the generated code.
pub trait KernelIndex: Copy {
    /// The index as `usize`. A negative or too large index becomes `usize::MAX`, so indexing with it
    /// is out of bounds (it panics on the host, as Rust does).
    fn to_usize(self) -> usize;
    /// The index as Rust prints it (negative for a negative signed index).
    fn to_i128(self) -> i128;
}

macro_rules! impl_kernel_index {
    ($($t:ty),*) => {$(
        impl KernelIndex for $t {
            fn to_usize(self) -> usize {
                usize::try_from(self).unwrap_or(usize::MAX)
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
        }
    )*};
}

impl_kernel_index!(usize, u32, i32, u64, i64);

/// `x[i..i + 4]` as an array, read in the widest accesses its address allows: one 16-byte load
/// (`ld.global.nc.v4` for a `&[T]` argument) for four 4-byte elements whose first is 16-byte
/// aligned, one 8-byte load for four 2-byte ones, 16-byte pieces for wider elements, one load per
/// element when misaligned (docs/kernel-language.md, "Vector accesses"). Checked as `x[i]` is:
/// out of range, the first index outside is reported and the elements are zeros.
///
/// Host: `x[i..i + 4]`, which panics out of range, as Rust does.
///
/// ```
/// use cuprum_runtime::prelude::*;
///
/// let x = [1.0f32, 2.0, 3.0, 4.0, 5.0];
/// assert_eq!(load4(&x, 1usize), [2.0, 3.0, 4.0, 5.0]);
/// let mut y = [0.0f32; 8];
/// store4(&mut y, 4u32, load4(&x, 0u32));
/// assert_eq!(y, [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
/// ```
pub fn load4<T: Scalar, I: KernelIndex>(x: &[T], i: I) -> [T; 4] {
    let k = i.to_usize();
    [x[k], x[k + 1], x[k + 2], x[k + 3]]
}

/// `y[i..i + 4] = v`, written as wide as [`load4`] reads. Checked as `y[i] = v` is: out of range,
/// the first index outside is reported and nothing is written.
///
/// Host: `y[i..i + 4].copy_from_slice(&v)`, which panics out of range, as Rust does.
pub fn store4<T: Scalar, I: KernelIndex>(y: &mut [T], i: I, v: [T; 4]) {
    let k = i.to_usize();
    y[k..][..4].copy_from_slice(&v);
}

/// Replaces `a[i]` by `f(a[i])` and returns the old value.
fn rmw<T: Copy, I: KernelIndex>(a: &mut [T], i: I, f: impl FnOnce(T) -> T) -> T {
    let slot = &mut a[i.to_usize()];
    let old = *slot;
    *slot = f(old);
    old
}

/// `a[i] += v` atomically, returning the old value: CUDA `atomicAdd(&a[i], v)`. Integers wrap.
pub fn atomic_add<T: Number, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old.__wrapping_add(v))
}

/// `a[i] -= v` atomically, returning the old value: CUDA `atomicSub(&a[i], v)` (for floats,
/// `atomicAdd(&a[i], -v)`). Integers wrap.
pub fn atomic_sub<T: Number, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old.__wrapping_sub(v))
}

/// `a[i] = v` atomically, returning the old value: CUDA `atomicExch(&a[i], v)`.
pub fn atomic_exch<T: Number, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |_| v)
}

/// `a[i] = min(a[i], v)` atomically, returning the old value: CUDA `atomicMin(&a[i], v)`.
/// For floats, NaN is ignored as by [`Real::min`].
pub fn atomic_min<T: Real, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old.min(v))
}

/// `a[i] = max(a[i], v)` atomically, returning the old value: CUDA `atomicMax(&a[i], v)`.
/// For floats, NaN is ignored as by [`Real::max`].
pub fn atomic_max<T: Real, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old.max(v))
}

/// `a[i] = if a[i] >= v { 0 } else { a[i] + 1 }` atomically, returning the old value: CUDA
/// `atomicInc(&a[i], v)`.
pub fn atomic_inc<I: KernelIndex>(a: &mut [u32], i: I, v: u32) -> u32 {
    rmw(a, i, |old| if old >= v { 0 } else { old + 1 })
}

/// `a[i] = if a[i] == 0 || a[i] > v { v } else { a[i] - 1 }` atomically, returning the old value:
/// CUDA `atomicDec(&a[i], v)`.
pub fn atomic_dec<I: KernelIndex>(a: &mut [u32], i: I, v: u32) -> u32 {
    rmw(a, i, |old| if old == 0 || old > v { v } else { old - 1 })
}

/// `a[i]`, read as a relaxed atomic load: on the GPU a volatile load that sees what other blocks
/// published (with [`thread_fence`] between a value and its flag on both sides), without the
/// read-modify-write of an `atomic_or(a, i, 0)`.
pub fn atomic_load<T: Number, I: KernelIndex>(a: &mut [T], i: I) -> T {
    rmw(a, i, |old| old)
}

/// `a[i] &= v` atomically, returning the old value: CUDA `atomicAnd(&a[i], v)`.
pub fn atomic_and<T: Int, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old & v)
}

/// `a[i] |= v` atomically, returning the old value: CUDA `atomicOr(&a[i], v)`.
pub fn atomic_or<T: Int, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old | v)
}

/// `a[i] ^= v` atomically, returning the old value: CUDA `atomicXor(&a[i], v)`.
pub fn atomic_xor<T: Int, I: KernelIndex>(a: &mut [T], i: I, v: T) -> T {
    rmw(a, i, |old| old ^ v)
}

/// Compare and swap: if `a[i]` equals `compare` bit for bit, `a[i] = v`; returns the old value
/// either way. CUDA `atomicCAS(&a[i], compare, v)`. The comparison is bitwise as on the device
/// (a NaN matches the same NaN, `-0.0` does not match `0.0`).
pub fn atomic_cas<T: Scalar, I: KernelIndex>(a: &mut [T], i: I, compare: T, v: T) -> T {
    rmw(a, i, |old| if same_bits(&old, &compare) { v } else { old })
}

/// Whether two scalars have the same bytes.
pub(crate) fn same_bits<T: Scalar>(a: &T, b: &T) -> bool {
    let n = std::mem::size_of::<T>();
    // SAFETY: `Scalar` guarantees that `T` has no padding bytes, so all `n` bytes of a valid `T`
    // are initialised; the pointers come from references, valid and aligned for `n` bytes.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts((a as *const T).cast::<u8>(), n),
            std::slice::from_raw_parts((b as *const T).cast::<u8>(), n),
        )
    };
    a == b
}

// ---------------------------------------------------------------------------------------------
// Warp shuffles.
// ---------------------------------------------------------------------------------------------

/// `v` of lane `src_lane` among the lanes in `mask`: CUDA `__shfl_sync(mask, v, src_lane)`.
/// Host: `v`.
pub fn shfl_sync<T: Scalar>(mask: u32, v: T, src_lane: u32) -> T {
    let _ = (mask, src_lane);
    v
}

/// `v` of lane `lane_id() - delta` (unchanged for the lowest `delta` lanes): CUDA
/// `__shfl_up_sync(mask, v, delta)`. Host: `v`.
pub fn shfl_up_sync<T: Scalar>(mask: u32, v: T, delta: u32) -> T {
    let _ = (mask, delta);
    v
}

/// `v` of lane `lane_id() + delta` (unchanged for the highest `delta` lanes): CUDA
/// `__shfl_down_sync(mask, v, delta)`. Host: `v`.
pub fn shfl_down_sync<T: Scalar>(mask: u32, v: T, delta: u32) -> T {
    let _ = (mask, delta);
    v
}

/// `v` of lane `lane_id() ^ lane_mask`: CUDA `__shfl_xor_sync(mask, v, lane_mask)`. Host: `v`.
pub fn shfl_xor_sync<T: Scalar>(mask: u32, v: T, lane_mask: u32) -> T {
    let _ = (mask, lane_mask);
    v
}

/// [`shfl_sync`] within groups of `width` lanes: CUDA `__shfl_sync(mask, v, src_lane, width)`.
/// Host: `v`.
pub fn shfl_sync_width<T: Scalar>(mask: u32, v: T, src_lane: u32, width: u32) -> T {
    let _ = (mask, src_lane, width);
    v
}

/// [`shfl_up_sync`] within groups of `width` lanes: CUDA `__shfl_up_sync(mask, v, delta, width)`.
/// Host: `v`.
pub fn shfl_up_sync_width<T: Scalar>(mask: u32, v: T, delta: u32, width: u32) -> T {
    let _ = (mask, delta, width);
    v
}

/// [`shfl_down_sync`] within groups of `width` lanes: CUDA
/// `__shfl_down_sync(mask, v, delta, width)`. Host: `v`.
pub fn shfl_down_sync_width<T: Scalar>(mask: u32, v: T, delta: u32, width: u32) -> T {
    let _ = (mask, delta, width);
    v
}

/// [`shfl_xor_sync`] within groups of `width` lanes: CUDA
/// `__shfl_xor_sync(mask, v, lane_mask, width)`. Host: `v`.
pub fn shfl_xor_sync_width<T: Scalar>(mask: u32, v: T, lane_mask: u32, width: u32) -> T {
    let _ = (mask, lane_mask, width);
    v
}

// ---------------------------------------------------------------------------------------------
// Elementwise loop index, and the host drivers.
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// `(index(), loop_size())` of the elementwise body running on this host thread.
    static ELEMENTWISE: Cell<(usize, usize)> = const { Cell::new((0, 1)) };
    /// [`reduce_index()`] of the reduction map running on this host thread.
    static REDUCE_INDEX: Cell<usize> = const { Cell::new(0) };
    /// The dynamic shared memory size in bytes seen by [`dynamic_shared`] on this host thread.
    static DYNAMIC_SHARED_BYTES: Cell<usize> = const { Cell::new(0) };
}

/// The index of the element an elementwise (or reduction map) body is computing: CuPy's `i` in an
/// `ElementwiseKernel`. Host: 0, or the index set by [`with_elementwise_index`].
pub fn index() -> usize {
    ELEMENTWISE.with(Cell::get).0
}

/// The number of elements of the elementwise loop: CuPy's `_ind.size()`. Host: 1, or the size set
/// by [`with_elementwise_index`].
pub fn loop_size() -> usize {
    ELEMENTWISE.with(Cell::get).1
}

/// In a reduction's map, the position of the element along the reduced axes: `0..n` in C order
/// over the reduced axes, for `n` elements reduced into each output (CuPy's `_J`). `argmax` is a
/// reduction of `(value, reduce_index())` pairs. Host: 0, or the position set by
/// [`with_reduce_index`].
pub fn reduce_index() -> usize {
    REDUCE_INDEX.with(Cell::get)
}

/// Restores a thread-local cell on drop (also when `f` unwinds).
struct Restore<T: Copy + 'static> {
    key: &'static std::thread::LocalKey<Cell<T>>,
    old: T,
}

impl<T: Copy + 'static> Drop for Restore<T> {
    fn drop(&mut self) {
        self.key.with(|c| c.set(self.old));
    }
}

fn with_cell<T: Copy + 'static, R>(
    key: &'static std::thread::LocalKey<Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    let _restore = Restore {
        key,
        old: key.with(|c| c.replace(value)),
    };
    f()
}

/// Host driver: runs `f` with [`index()`] returning `i` and [`loop_size()`] returning `n` on this
/// thread, then restores the previous values. A host loop over an elementwise body that uses the
/// loop index calls it once per element.
pub fn with_elementwise_index<R>(i: usize, n: usize, f: impl FnOnce() -> R) -> R {
    with_cell(&ELEMENTWISE, (i, n), f)
}

/// Host driver: runs `f` with [`reduce_index()`] returning `j` on this thread, then restores the
/// previous value. A host loop over a reduction's map calls it once per element.
pub fn with_reduce_index<R>(j: usize, f: impl FnOnce() -> R) -> R {
    with_cell(&REDUCE_INDEX, j, f)
}

/// Host driver: runs `f` with [`dynamic_shared`] returning `bytes` bytes of zeroed memory on this
/// thread (the launch's dynamic shared memory size), then restores the previous size.
pub fn with_dynamic_shared_bytes<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    with_cell(&DYNAMIC_SHARED_BYTES, bytes, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;
    use num_complex::Complex;

    #[test]
    fn one_thread_one_block() {
        assert_eq!(thread_idx(), Dim3::default());
        assert_eq!(block_idx(), Dim3 { x: 0, y: 0, z: 0 });
        assert_eq!(block_dim(), Dim3 { x: 1, y: 1, z: 1 });
        assert_eq!(grid_dim(), Dim3 { x: 1, y: 1, z: 1 });
        assert_eq!((grid_1d(), grid_2d(), grid_3d()), (0, (0, 0), (0, 0, 0)));
        assert_eq!(
            (grid_size_1d(), grid_size_2d(), grid_size_3d()),
            (1, (1, 1), (1, 1, 1))
        );
        assert_eq!((lane_id(), warp_size()), (0, 32));
        sync_threads();
        sync_warp(u32::MAX);
        thread_fence();
        thread_fence_block();
        grid_sync();
    }

    #[test]
    fn raw_kernel_body_runs_on_host() {
        // The README's example, run as one thread.
        fn elementwise_copy<T: Scalar>(x: &[T], y: &mut [T], size: u32) {
            let tid = block_idx().x * block_dim().x + thread_idx().x;
            let ntid = grid_dim().x * block_dim().x;
            let mut i = tid;
            while i < size {
                y[i as usize] = x[i as usize];
                i += ntid;
            }
        }
        let x = [1.5f32, 2.5, 3.5];
        let mut y = [0.0f32; 3];
        elementwise_copy(&x, &mut y, 3);
        assert_eq!(x, y);
    }

    #[test]
    fn atomics_return_old_values() {
        let mut a = [10i32, 20, 30];
        assert_eq!(atomic_add(&mut a, 0usize, 5), 10);
        assert_eq!(atomic_sub(&mut a, 1u32, 5), 20);
        assert_eq!(atomic_exch(&mut a, 2i32, 7), 30);
        assert_eq!(a, [15, 15, 7]);
        assert_eq!(atomic_min(&mut a, 0u64, 3), 15);
        assert_eq!(atomic_max(&mut a, 1i64, 100), 15);
        assert_eq!(a, [3, 100, 7]);
        assert_eq!(atomic_and(&mut a, 0usize, 0b110), 3);
        assert_eq!(atomic_or(&mut a, 0usize, 0b1000), 0b010);
        assert_eq!(atomic_load(&mut a, 0usize), 0b1010);
        assert_eq!(atomic_xor(&mut a, 0usize, 0b1111), 0b1010);
        assert_eq!(a[0], 0b0101);
        // Integer atomics wrap, never panic.
        let mut b = [u8::MAX, 0];
        assert_eq!(atomic_add(&mut b, 0usize, 1), 255);
        assert_eq!(atomic_sub(&mut b, 1usize, 1), 0);
        assert_eq!(b, [0, 255]);
        // Floats, halves and complex numbers.
        let mut f = [1.0f32, f32::NAN];
        assert_eq!(atomic_add(&mut f, 0usize, 0.5), 1.0);
        assert!(atomic_min(&mut f, 1usize, 2.0).is_nan());
        assert_eq!(f, [1.5, 2.0]);
        let mut h = [f16::ONE];
        assert_eq!(atomic_add(&mut h, 0usize, f16::ONE), f16::ONE);
        assert_eq!(h[0], f16::from_f32(2.0));
        let mut c = [Complex::new(1.0f64, 1.0)];
        atomic_add(&mut c, 0usize, Complex::new(0.5, -1.0));
        assert_eq!(c[0], Complex::new(1.5, 0.0));
    }

    #[test]
    fn atomic_inc_dec_follow_cuda() {
        let mut a = [0u32, 3, 5, 0];
        // inc: old >= v ? 0 : old + 1
        assert_eq!(atomic_inc(&mut a, 0usize, 3), 0);
        assert_eq!(atomic_inc(&mut a, 1usize, 3), 3);
        assert_eq!(atomic_inc(&mut a, 2usize, 3), 5);
        assert_eq!(&a[..3], &[1, 0, 0]);
        let mut m = [u32::MAX];
        atomic_inc(&mut m, 0usize, u32::MAX);
        assert_eq!(m, [0]);
        // dec: (old == 0 || old > v) ? v : old - 1
        let mut d = [0u32, 3, 5, 2];
        assert_eq!(atomic_dec(&mut d, 0usize, 4), 0);
        assert_eq!(atomic_dec(&mut d, 1usize, 4), 3);
        assert_eq!(atomic_dec(&mut d, 2usize, 4), 5);
        assert_eq!(atomic_dec(&mut d, 3usize, 4), 2);
        assert_eq!(d, [4, 2, 4, 1]);
    }

    #[test]
    fn atomic_cas_is_bitwise() {
        let mut a = [1i32, 2];
        assert_eq!(atomic_cas(&mut a, 0usize, 1, 9), 1);
        assert_eq!(atomic_cas(&mut a, 1usize, 1, 9), 2);
        assert_eq!(a, [9, 2]);
        let mut f = [f32::NAN, 0.0];
        assert!(atomic_cas(&mut f, 0usize, f32::NAN, 1.0).is_nan());
        assert_eq!(f[0], 1.0);
        assert_eq!(atomic_cas(&mut f, 1usize, -0.0, 5.0), 0.0);
        assert_eq!(f[1], 0.0);
        let mut b = [false];
        assert!(!atomic_cas(&mut b, 0usize, false, true));
        assert!(b[0]);
    }

    #[test]
    fn atomics_on_shared_arrays() {
        let sh = shared_array::<u32, 4>();
        assert_eq!(*sh, [0; 4]);
        atomic_add(sh, 1u32, 2);
        atomic_add(sh, 1u32, 3);
        assert_eq!(sh[1], 5);
        let sh2 = shared_array::<f64, 2>();
        assert_eq!(*sh2, [0.0; 2]);
    }

    #[test]
    #[should_panic(
        expected = "index out of bounds: the len is 1 but the index is 18446744073709551615"
    )]
    fn atomics_panic_on_negative_index() {
        let mut a = [1i32];
        atomic_add(&mut a, -1i32, 1);
    }

    #[test]
    fn dynamic_shared_size_is_set_by_the_driver() {
        assert!(dynamic_shared::<f32>().is_empty());
        let (n32, n64) = with_dynamic_shared_bytes(64, || {
            (dynamic_shared::<f32>().len(), dynamic_shared::<f64>().len())
        });
        assert_eq!((n32, n64), (16, 8));
        assert!(dynamic_shared::<u8>().is_empty());
        assert!(
            with_dynamic_shared_bytes(8, dynamic_shared::<i32>)
                .iter()
                .all(|&v| v == 0)
        );
    }

    #[test]
    fn shuffles_return_own_value() {
        assert_eq!(shfl_sync(u32::MAX, 7i32, 3), 7);
        assert_eq!(shfl_up_sync(u32::MAX, 1.5f32, 1), 1.5);
        assert_eq!(shfl_down_sync(u32::MAX, 2u64, 16), 2);
        assert!(shfl_xor_sync(u32::MAX, true, 1));
        assert_eq!(shfl_sync_width(1, 7i8, 3, 8), 7);
        assert_eq!(shfl_up_sync_width(1, 7i8, 3, 8), 7);
        assert_eq!(shfl_down_sync_width(1, 7i8, 3, 8), 7);
        assert_eq!(shfl_xor_sync_width(1, f16::ONE, 3, 8), f16::ONE);
        // A warp reduction written for the device computes the single lane's value.
        let mut v = 3.0f32;
        let mut offset = warp_size() / 2;
        while offset > 0 {
            v += shfl_down_sync(u32::MAX, v, offset);
            offset /= 2;
        }
        assert_eq!(v, 3.0 * 32.0);
    }

    #[test]
    fn elementwise_index_is_scoped() {
        assert_eq!((index(), loop_size()), (0, 1));
        let r = with_elementwise_index(5, 10, || {
            assert_eq!((index(), loop_size()), (5, 10));
            with_elementwise_index(7, 8, || (index(), loop_size()))
        });
        assert_eq!(r, (7, 8));
        assert_eq!((index(), loop_size()), (0, 1));
        // Restored after a panic too.
        let caught = std::panic::catch_unwind(|| with_elementwise_index(3, 4, || panic!("boom")));
        assert!(caught.is_err());
        assert_eq!((index(), loop_size()), (0, 1));
        assert_eq!(reduce_index(), 0);
        assert_eq!(with_reduce_index(4, || (reduce_index(), index())), (4, 0));
        assert_eq!(reduce_index(), 0);
    }
}
