//! [`ArgList`]: the one parameter buffer. Every launch whose argument list is built at run time
//! uses it: `RawKernel` calls with a run-time argument list, and the erased elementwise and
//! reduction launches (which lay out the C structs of `abi/include/cuprum/*.h` into it). Each
//! parameter starts 16-byte aligned; a few strided parameters, or many contiguous ones, stay on
//! the stack.

use std::ffi::c_void;

use super::args::{KernelArg, KernelArgs};
use crate::inline_list::InlineList;
use crate::repr::DeviceRepr;

/// A 16-byte aligned slot of parameter storage.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot([u8; 16]);

/// Slots kept inline: a few strided parameters, or many contiguous ones.
const INLINE_SLOTS: usize = 48;
/// Parameters kept inline.
const INLINE_PARAMS: usize = 24;
/// Parameters whose pointer array stays on the stack.
const INLINE_POINTERS: usize = 32;

/// Arguments collected at run time (any number, any mix of types), for launches whose argument
/// list is not known at compile time.
///
/// ```
/// # use cuprum_runtime::{ArgList, DevicePtr};
/// let mut args = ArgList::new();
/// args.push(7u32).push(2.5f64).push(DevicePtr(0));
/// assert_eq!(args.len(), 3);
/// ```
#[derive(Clone)]
pub struct ArgList {
    storage: InlineList<Slot, INLINE_SLOTS>,
    /// First slot and byte size of each parameter.
    params: InlineList<(usize, usize), INLINE_PARAMS>,
}

impl Default for ArgList {
    fn default() -> ArgList {
        ArgList { storage: InlineList::new(), params: InlineList::new() }
    }
}

impl std::fmt::Debug for ArgList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgList").field("sizes", &self.sizes()).finish()
    }
}

impl ArgList {
    /// An empty list.
    pub fn new() -> ArgList {
        ArgList::default()
    }

    /// Appends one argument (its parameter value: an array's device pointer, a scalar, a
    /// [`DeviceRepr`] struct).
    pub fn push<A: KernelArg>(&mut self, arg: A) -> &mut Self {
        self.push_repr(arg.param());
        self
    }

    /// Reserves zeroed slots for a parameter of `size` bytes; returns its first slot.
    fn reserve(&mut self, size: usize) -> usize {
        let first = self.storage.extend(size.div_ceil(16).max(1), Slot([0; 16]));
        self.params.push((first, size));
        first
    }

    /// Appends a parameter laid out in place (a C struct, `elementwise::params`): `write` gets
    /// `room` zeroed bytes, writes the parameter's fields into them and returns its size (bytes
    /// past `room` are zero). Writing in place, rather than building the struct and copying it
    /// in, is a fifth of an elementwise call's host work.
    #[inline]
    pub(crate) fn push_in_place(&mut self, room: usize, write: impl FnOnce(&mut [u8]) -> usize) {
        let first = self.storage.extend(room.div_ceil(16).max(1), Slot([0; 16]));
        let slots = &mut self.storage.as_mut_slice()[first..];
        // SAFETY: `Slot` is `#[repr(C)]` over `[u8; 16]` (size 16, no padding), so `slots` is
        // `slots.len() * 16` initialised bytes, borrowed uniquely for the call.
        let bytes = unsafe { std::slice::from_raw_parts_mut(slots.as_mut_ptr().cast::<u8>(), slots.len() * 16) };
        let size = write(bytes);
        let used = size.div_ceil(16).max(1);
        let have = self.storage.as_slice().len() - first;
        if used > have {
            self.storage.extend(used - have, Slot([0; 16]));
        } else {
            self.storage.truncate(first + used);
        }
        self.params.push((first, size));
    }

    /// Appends a plain-data parameter (a value, or a `#[repr(C)]` mirror of the kernel's
    /// parameter).
    pub fn push_repr<T: DeviceRepr>(&mut self, value: T) {
        let size = std::mem::size_of::<T>();
        let first = self.reserve(size);
        let dst = self.storage.as_mut_slice()[first..].as_mut_ptr() as *mut u8;
        // SAFETY: `reserve` made `size.div_ceil(16)` slots from `first` on, so `dst` (16-byte
        // aligned, at least `T`'s alignment for any parameter type) has room for `size` bytes;
        // the source is a live `T` of `size` bytes; the regions do not overlap. `DeviceRepr`
        // types are plain data, so an untyped copy of their bytes is a valid copy.
        unsafe { std::ptr::copy_nonoverlapping(&value as *const T as *const u8, dst, size) };
    }

    /// The number of arguments.
    pub fn len(&self) -> usize {
        self.params.as_slice().len()
    }

    /// Whether there is no argument.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte size of each parameter.
    pub fn sizes(&self) -> Vec<usize> {
        self.params.iter().map(|&(_, size)| size).collect()
    }

    /// The bytes of parameter `k`.
    pub fn bytes(&self, k: usize) -> Vec<u8> {
        let (first, size) = self.params.as_slice()[k];
        let flat: Vec<u8> = self.storage.as_slice()[first..].iter().flat_map(|s| s.0).collect();
        flat[..size].to_vec()
    }
}

impl KernelArgs for ArgList {
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        let base = self.storage.as_slice().as_ptr();
        // `wrapping_add` stays inside `storage` (each first slot is a valid slot index).
        let ptr = |&(first, _): &(usize, usize)| base.wrapping_add(first) as *mut c_void;
        let params = self.params.as_slice();
        if params.len() <= INLINE_POINTERS {
            let mut ptrs = [std::ptr::null_mut(); INLINE_POINTERS];
            for (p, q) in ptrs.iter_mut().zip(params) {
                *p = ptr(q);
            }
            f(&mut ptrs[..params.len()])
        } else {
            let mut ptrs: Vec<*mut c_void> = params.iter().map(ptr).collect();
            f(&mut ptrs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    #[test]
    fn tuple_params_point_at_values() {
        #[derive(Clone, Copy)]
        #[repr(C)]
        struct S {
            a: f32,
            b: u8,
        }
        // SAFETY: #[repr(C)] plain data (test only).
        unsafe impl DeviceRepr for S {}
        let args = (7u32, 2.5f64, S { a: 1.5, b: 9 }, Complex::new(1.0f32, -1.0));
        args.with_params(|p| {
            assert_eq!(p.len(), 4);
            // SAFETY: each pointer points at the parameter value of the matching type.
            unsafe {
                assert_eq!(*(p[0] as *const u32), 7);
                assert_eq!(*(p[1] as *const f64), 2.5);
                assert_eq!((*(p[2] as *const S)).b, 9);
                assert_eq!(*(p[3] as *const Complex<f32>), Complex::new(1.0, -1.0));
            }
        });
        let mut list = ArgList::new();
        list.push(7u32)
            .push(2.5f64)
            .push(S { a: 1.5, b: 9 })
            .push([1u16, 2, 3]);
        assert_eq!(list.len(), 4);
        list.with_params(|p| {
            // SAFETY: as above.
            unsafe {
                assert_eq!(*(p[0] as *const u32), 7);
                assert_eq!(*(p[1] as *const f64), 2.5);
                assert_eq!((*(p[2] as *const S)).a, 1.5);
                assert_eq!(*(p[3] as *const [u16; 3]), [1, 2, 3]);
                assert_eq!(p[0] as usize % 16, 0);
            }
        });
    }
}
