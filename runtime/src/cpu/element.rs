//! Where the operands of one element ([`Element`]) or one run of consecutive elements ([`Run`])
//! of a CPU loop are: what the body the macro writes reads and writes through.

use crate::element::Element as ElementType;

/// How one operand is reached from an element.
pub(super) struct Operand {
    /// The first element (a scalar's value: [`ElementLoop::scalars`]); null for raw arguments.
    pub(super) base: *mut u8,
    /// Byte strides along the loop's collapsed axes (0 where it broadcasts).
    pub(super) strides: Vec<isize>,
    /// The element's size in bytes.
    pub(super) size: usize,
}

/// The most elements of one [`Run`].
pub const RUN_MAX: usize = 4096;

/// A run of an [`ElementLoop`](super::ElementLoop)
/// ([`ElementLoop::run_fast`](super::ElementLoop::run_fast)): `len` consecutive elements, each
/// operand's values at consecutive addresses from [`Run::ptr`].
pub struct Run<'l> {
    pub(super) ptrs: &'l [*mut u8],
    pub(super) len: usize,
    pub(super) index: usize,
    pub(super) size: usize,
}

impl Run<'_> {
    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the run is empty (never: runs have at least one element).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Operand `k`'s first element: the run's values of operand `k` are `len` consecutive
    /// elements of its type from here (outputs written there land in the array). Null for raw
    /// arguments.
    #[inline]
    pub fn ptr(&self, k: usize) -> *mut u8 {
        self.ptrs[k]
    }

    /// The first element's index in C order.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of elements of the loop.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// One element of an [`ElementLoop`](super::ElementLoop): where each operand's value is.
pub struct Element<'l> {
    pub(super) operands: &'l [Operand],
    pub(super) offsets: &'l [isize],
    pub(super) index: usize,
    pub(super) size: usize,
    /// A reduction map's position along the reduced axes (0 in elementwise loops).
    pub(super) reduce_index: usize,
}

impl Element<'_> {
    /// The value of per-element argument `k` (an input, or an output read before it is written).
    ///
    /// # Safety
    ///
    /// Argument `k` is an array or scalar argument whose element type is `T` for the loop's
    /// instance (what the macro writes: the signature's types, which the launch checked).
    #[inline]
    pub unsafe fn get<T: ElementType>(&self, k: usize) -> T {
        // SAFETY: `base + offset` is this element of operand `k` (the loop's offsets stay inside
        // the operand's layout, which the launch checked), aligned for its element type `T` (the
        // caller's contract); the buffer is locked for the launch.
        unsafe { (self.operands[k].base.offset(self.offsets[k]) as *const T).read() }
    }

    /// Writes `v` to output argument `k` at this element.
    ///
    /// # Safety
    ///
    /// As [`Element::get`], and argument `k` is an output (its buffer is locked for writing).
    #[inline]
    pub unsafe fn set<T: ElementType>(&self, k: usize, v: T) {
        // SAFETY: as in `get`; the element is this element's alone (the loop runs on several
        // threads only when each written buffer is reached through one layout).
        unsafe { (self.operands[k].base.offset(self.offsets[k]) as *mut T).write(v) }
    }

    /// The element's index in C order (`index()` in the body).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of elements of the loop (`loop_size()` in the body).
    pub fn size(&self) -> usize {
        self.size
    }

    /// A reduction map's position along the reduced axes (`reduce_index()` in the map).
    pub fn reduce_index(&self) -> usize {
        self.reduce_index
    }
}

/// A run's view of an operand that is constant along it: `len` copies of its element at `at`
/// (`size` bytes) in `scratch`, which is grown as needed.
///
/// # Safety
///
/// `at` is valid for reads of `size` bytes.
pub(super) unsafe fn repeated(scratch: &mut Vec<u128>, at: *const u8, size: usize, len: usize) -> *mut u8 {
    scratch.resize((len * size).div_ceil(16), 0);
    let dst = scratch.as_mut_ptr() as *mut u8;
    for j in 0..len {
        // SAFETY: `dst` has room for `len` elements of `size` bytes (resized above), `at` holds
        // one (the caller's contract); the scratch buffer is not the operand's memory.
        unsafe { std::ptr::copy_nonoverlapping(at, dst.add(j * size), size) };
    }
    dst
}
