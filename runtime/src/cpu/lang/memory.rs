//! Global and shared memory as a kernel's host code sees it on the CPU device: [`Slice`] and
//! [`View`] handles (a pointer and a layout, `Copy`), read with [`Load`] and written with
//! [`Store`]. The macros rewrite `a[i]` in a kernel's host copy into `Load::load(&a, i)` and
//! `a[i] = v` into `Store::store(&a, i, v)`, so no Rust reference to memory that other CUDA
//! threads share is ever made: several CUDA threads reach the same elements, which `&mut [T]`
//! would forbid.
//!
//! Every access is checked as on the GPU (docs/semantics.md, row 18): out of range, a read gives
//! zero and a write is skipped, and the first violation is recorded for the device's next
//! synchronising call ([`crate::bounds`]). An element whose size is 1, 2, 4 or 8 bytes and
//! whose alignment is its size is read and written with relaxed atomic operations, so blocks may
//! run on several host threads at once: two CUDA threads racing on an element (a kernel's own
//! bug on a GPU too) give one value or the other, never undefined behaviour. The grid runner
//! runs a launch with any other element type (complex numbers, `#[device]` structs) on one host
//! thread (`cpu::grid`), where plain reads and writes are sound.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

use super::context;
use crate::element::Element;
use crate::lang::intrinsics::KernelIndex;

/// Whether elements of this size and alignment are accessed atomically (and so may be shared by
/// host threads): the one rule [`read`], [`write`] and the grid runner agree on.
pub(crate) const fn atomic_width(size: usize, align: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8) && align >= size
}

/// Reads the element at `p`.
///
/// # Safety
///
/// `p` is valid for reads of a `T` and aligned; if another host thread may write it at the same
/// time, `T` has an atomic width.
#[inline(always)]
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> T {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    // SAFETY: in each arm, `p` is valid and aligned for a `T`, whose size and alignment match
    // the atomic type's (`atomic_width`); the atomic's bits are a `T`'s (written as one).
    unsafe {
        if !atomic_width(size, align) {
            return p.read();
        }
        match size {
            1 => std::mem::transmute_copy(&AtomicU8::from_ptr(p as *mut u8).load(Relaxed)),
            2 => std::mem::transmute_copy(&AtomicU16::from_ptr(p as *mut u16).load(Relaxed)),
            4 => std::mem::transmute_copy(&AtomicU32::from_ptr(p as *mut u32).load(Relaxed)),
            _ => std::mem::transmute_copy(&AtomicU64::from_ptr(p as *mut u64).load(Relaxed)),
        }
    }
}

/// Writes `v` to the element at `p`.
///
/// # Safety
///
/// As [`read`], for writes.
#[inline(always)]
pub(crate) unsafe fn write<T: Copy>(p: *mut T, v: T) {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    // SAFETY: as in `read`.
    unsafe {
        if !atomic_width(size, align) {
            return p.write(v);
        }
        match size {
            1 => AtomicU8::from_ptr(p as *mut u8).store(std::mem::transmute_copy(&v), Relaxed),
            2 => AtomicU16::from_ptr(p as *mut u16).store(std::mem::transmute_copy(&v), Relaxed),
            4 => AtomicU32::from_ptr(p as *mut u32).store(std::mem::transmute_copy(&v), Relaxed),
            _ => AtomicU64::from_ptr(p as *mut u64).store(std::mem::transmute_copy(&v), Relaxed),
        }
    }
}

/// The value an out-of-range read gives: zero bytes (a valid value of every [`Element`]).
#[inline]
pub(crate) fn zero<T: Element>() -> T {
    // SAFETY: every bit pattern of an `Element` is a valid value (the trait's contract).
    unsafe { std::mem::zeroed() }
}

/// Records an out-of-range index of the running kernel (the first one is reported).
#[cold]
pub(crate) fn out_of_range(index: i128, len: usize) {
    let (kernel, block, thread) = match context::current() {
        Some(c) => {
            let (b, t) = (c.block_idx, c.thread_idx.get());
            (c.function.get(), [b.x, b.y, b.z], [t.x, t.y, t.z])
        }
        None => ("(host)", [0; 3], [0; 3]),
    };
    crate::bounds::record_cpu(kernel, index, len as u64, block, thread);
}

/// Records a misaligned index of the running kernel (`align`: the alignment the access needs, in
/// elements), unless a violation is recorded already.
#[cold]
pub(crate) fn misaligned(index: i128, align: usize) {
    let (kernel, block, thread) = match context::current() {
        Some(c) => {
            let (b, t) = (c.block_idx, c.thread_idx.get());
            (c.function.get(), [b.x, b.y, b.z], [t.x, t.y, t.z])
        }
        None => ("(host)", [0; 3], [0; 3]),
    };
    crate::bounds::record_cpu_info(
        kernel,
        index,
        align as u64,
        block,
        thread,
        cuprum_abi::bounds::INFO_MISALIGNED,
    );
}

/// A `&[T]` or `&mut [T]` of a kernel (a whole array argument, or shared memory) on the CPU
/// device: where its elements are and how many.
pub struct Slice<'a, T> {
    ptr: *mut T,
    len: usize,
    _memory: PhantomData<&'a [T]>,
}

impl<T> Clone for Slice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Slice<'_, T> {}

// SAFETY: a handle is used by several host threads only inside a launch whose blocks run on
// several host threads, which the grid runner allows only when every element type has an atomic
// width (each access then an atomic operation); shared-memory handles stay with their block's
// host thread.
unsafe impl<T: Sync> Sync for Slice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Slice<'_, T> {}

impl<T> std::fmt::Debug for Slice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Slice({:p}, {})", self.ptr, self.len)
    }
}

impl<'a, T: Element> Slice<'a, T> {
    /// The slice of `len` elements at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for reads and writes of `len` aligned `T`s for `'a`, and nothing else
    /// reaches them during `'a` but handles of the same launch (the grid runner holds the
    /// buffers' locks); if the launch runs on several host threads, `T` has an atomic width.
    #[inline]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Slice<'a, T> {
        Slice { ptr, len, _memory: PhantomData }
    }

    /// The number of elements (`a.len()` in the kernel).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element's address, or `None` (and the violation recorded) out of range.
    #[inline]
    pub(crate) fn at<I: KernelIndex>(&self, i: I) -> Option<*mut T> {
        let k = i.to_usize();
        if k < self.len {
            // SAFETY: `k` is in range of the slice's elements (the constructor's contract).
            Some(unsafe { self.ptr.add(k) })
        } else {
            out_of_range(i.to_i128(), self.len);
            None
        }
    }
}

/// The start of `i..i + 4` in `len` elements, or `None` (the first index outside recorded).
fn quad_start<I: KernelIndex>(i: I, len: usize) -> Option<usize> {
    let k = i.to_usize();
    if k < len && len - k >= 4 {
        Some(k)
    } else {
        out_of_range(if k < len { len as i128 } else { i.to_i128() }, len);
        None
    }
}

/// `load4` (`lang::intrinsics`): `x[i..i + 4]`; zeros out of range (the violation recorded).
pub fn load4<T: Element + Copy, I: KernelIndex>(x: Slice<'_, T>, i: I) -> [T; 4] {
    match quad_start(i, x.len) {
        Some(k) => std::array::from_fn(|j| x.load(k + j)),
        None => [zero(); 4],
    }
}

/// `store4` (`lang::intrinsics`): `y[i..i + 4] = v`; nothing out of range (the violation
/// recorded).
pub fn store4<T: Element + Copy, I: KernelIndex>(y: Slice<'_, T>, i: I, v: [T; 4]) {
    if let Some(k) = quad_start(i, y.len) {
        for (j, e) in v.into_iter().enumerate() {
            y.store(k + j, e);
        }
    }
}

/// A `View<T, N>` or `ViewMut<T, N>` of a raw kernel on the CPU device.
pub struct View<'a, T, const N: usize> {
    ptr: *mut T,
    shape: [usize; N],
    strides: [isize; N],
    len: usize,
    _memory: PhantomData<&'a [T]>,
}

impl<T, const N: usize> Clone for View<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for View<'_, T, N> {}

// SAFETY: as for `Slice`.
unsafe impl<T: Sync, const N: usize> Sync for View<'_, T, N> {}
// SAFETY: as for `Slice`.
unsafe impl<T: Send, const N: usize> Send for View<'_, T, N> {}

impl<T, const N: usize> std::fmt::Debug for View<'_, T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "View({:p}, {:?}, {:?})", self.ptr, self.shape, self.strides)
    }
}

impl<'a, T: Element, const N: usize> View<'a, T, N> {
    /// The view whose element `[0, ..]` is at `ptr`, with `shape` and `strides` in elements.
    ///
    /// # Safety
    ///
    /// As [`Slice::from_raw_parts`], for every element the shape and strides reach from `ptr`.
    pub unsafe fn from_raw_parts(ptr: *mut T, shape: [usize; N], strides: [isize; N]) -> View<'a, T, N> {
        View { ptr, shape, strides, len: shape.iter().product(), _memory: PhantomData }
    }

    /// The extents (`v.shape()` in the kernel).
    #[inline]
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The strides in elements (`v.strides()`).
    #[inline]
    pub fn strides(&self) -> [isize; N] {
        self.strides
    }

    /// The number of elements (`v.len()`).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn at_index<I: KernelIndex>(&self, idx: [I; N]) -> Option<*mut T> {
        let mut off = 0isize;
        for (axis, &i) in idx.iter().enumerate() {
            let k = i.to_usize();
            if k >= self.shape[axis] {
                out_of_range(i.to_i128(), self.shape[axis]);
                return None;
            }
            off += k as isize * self.strides[axis];
        }
        // SAFETY: every index is inside its axis, so the element is one the view reaches (the
        // constructor's contract).
        Some(unsafe { self.ptr.offset(off) })
    }

    #[inline]
    fn at_flat<I: KernelIndex>(&self, i: I) -> Option<*mut T> {
        let mut rest = i.to_usize();
        if rest >= self.len {
            out_of_range(i.to_i128(), self.len);
            return None;
        }
        let mut idx = [0usize; N];
        for axis in (0..N).rev() {
            idx[axis] = rest % self.shape[axis];
            rest /= self.shape[axis];
        }
        self.at_index(idx)
    }
}

/// `a[i]` read in a kernel's host code.
pub trait Load<I> {
    /// The element type.
    type Elem;
    /// The element at `i`; zero out of range (the violation is recorded).
    fn load(&self, i: I) -> Self::Elem;
}

/// `a[i] = v` in a kernel's host code.
pub trait Store<I>: Load<I> {
    /// Writes `v` at `i`; nothing out of range (the violation is recorded).
    fn store(&self, i: I, v: Self::Elem);
}

impl<T: Element + Copy, I: KernelIndex> Load<I> for Slice<'_, T> {
    type Elem = T;
    #[inline]
    fn load(&self, i: I) -> T {
        // SAFETY: `at` gives an element of the slice (valid, aligned: the constructor's contract).
        self.at(i).map_or_else(zero, |p| unsafe { read(p) })
    }
}

impl<T: Element + Copy, I: KernelIndex> Store<I> for Slice<'_, T> {
    #[inline]
    fn store(&self, i: I, v: T) {
        if let Some(p) = self.at(i) {
            // SAFETY: as in `load`.
            unsafe { write(p, v) }
        }
    }
}

impl<T: Element + Copy, I: KernelIndex, const N: usize> Load<[I; N]> for View<'_, T, N> {
    type Elem = T;
    #[inline]
    fn load(&self, i: [I; N]) -> T {
        // SAFETY: `at_index` gives an element of the view.
        self.at_index(i).map_or_else(zero, |p| unsafe { read(p) })
    }
}

impl<T: Element + Copy, I: KernelIndex, const N: usize> Store<[I; N]> for View<'_, T, N> {
    #[inline]
    fn store(&self, i: [I; N], v: T) {
        if let Some(p) = self.at_index(i) {
            // SAFETY: as in `load`.
            unsafe { write(p, v) }
        }
    }
}

/// A flat C-order index into a view (`v[k]`).
macro_rules! flat_view_index {
    ($($t:ty),*) => {$(
        impl<T: Element + Copy, const N: usize> Load<$t> for View<'_, T, N> {
            type Elem = T;
            #[inline]
            fn load(&self, i: $t) -> T {
                // SAFETY: `at_flat` gives an element of the view.
                self.at_flat(i).map_or_else(zero, |p| unsafe { read(p) })
            }
        }
        impl<T: Element + Copy, const N: usize> Store<$t> for View<'_, T, N> {
            #[inline]
            fn store(&self, i: $t, v: T) {
                if let Some(p) = self.at_flat(i) {
                    // SAFETY: as in `load`.
                    unsafe { write(p, v) }
                }
            }
        }
    )*};
}

flat_view_index!(usize, u32, i32, u64, i64);

/// `shared_array::<T, N>()` at call site `site` (a key the macro makes of the function's name
/// and the site's number): the block's array for that site (made zeroed by the first of its
/// threads to get there). Outside a launch, an empty slice. Two sites whose keys collide and
/// whose arrays differ in size panic (an error of the launch) rather than share too little
/// memory.
#[inline]
pub fn shared_array<'a, T: Element + Copy, const N: usize>(site: u64) -> Slice<'a, T> {
    let words = (N * size_of::<T>()).div_ceil(16);
    let Some(c) = context::current() else {
        // No block: no shared memory (every access is out of range).
        // SAFETY: a dangling, aligned pointer is valid for zero elements.
        return unsafe { Slice::from_raw_parts(std::ptr::NonNull::dangling().as_ptr(), 0) };
    };
    let block = c.block();
    let recent = &block.recent[(site % 4) as usize];
    if let Some((key, have, p)) = recent.get() {
        if key == site && have >= words {
            // SAFETY: as below (the same array, made by an earlier thread of the block).
            return unsafe { Slice::from_raw_parts(p.cast(), N) };
        }
    }
    let mut statics = block.statics.borrow_mut();
    let k = match statics.iter().position(|(key, _)| *key == site) {
        Some(k) => k,
        None => {
            statics.push((site, vec![0u128; words].into_boxed_slice()));
            statics.len() - 1
        }
    };
    let arena = &mut statics[k].1;
    assert!(
        arena.len() >= words,
        "two shared_array call sites of this kernel have the same key (site {site}) and different sizes"
    );
    let p = arena.as_mut_ptr();
    recent.set(Some((site, arena.len(), p)));
    // SAFETY: the block's array for this site: zeroed, 16-byte aligned, at least `words` 16-byte
    // words (checked above) so at least `N` elements, alive until the block's threads have all
    // finished (the block owns it, and never frees or moves a box's memory before); only the
    // block's threads reach it, and they all run on this host thread.
    unsafe { Slice::from_raw_parts(p.cast(), N) }
}

/// `dynamic_shared::<T>()`: the block's dynamic shared memory (the launch's byte count) as `T`s.
#[inline]
pub fn dynamic_shared<'a, T: Element + Copy>() -> Slice<'a, T> {
    let Some(c) = context::current() else {
        // SAFETY: a dangling, aligned pointer is valid for zero elements.
        return unsafe { Slice::from_raw_parts(std::ptr::NonNull::dangling().as_ptr(), 0) };
    };
    let n = c.grid().dynamic_bytes / size_of::<T>().max(1);
    let p = c.block().dynamic.borrow_mut().as_mut_ptr();
    // SAFETY: the block's dynamic memory holds `dynamic_bytes` zeroed bytes, 16-byte aligned,
    // alive until the block's threads have finished; only they reach it (on this host thread).
    unsafe { Slice::from_raw_parts(p.cast(), n) }
}
