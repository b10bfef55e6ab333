//! Local arrays on the CPU device: the index checks of a raw kernel's own arrays (`let a = [0.0;
//! 8]`, arrays in structs, a device function's `&mut [T; N]` parameter), as on the GPU
//! (docs/semantics.md, row 18): out of range, a read gives zero and a write is skipped, and the
//! first violation is reported at the device's next synchronising call. The macros rewrite a read
//! `a[i]` of a local array into [`local_get`] and a write `a[i] = v` (or `a[i][j] op= v`, `s.v[k]
//! = v`) into a write through [`local_slot`]; a borrow `&mut a[i]` keeps Rust's own check.

use super::memory::out_of_range;
use crate::lang::intrinsics::KernelIndex;
use crate::lang::views::Raw;

/// What a kernel indexes that is not global or shared memory.
pub trait LocalIndex<I> {
    /// The element type.
    type Elem;
    /// The element at `i`, or `None` (the violation recorded) out of range.
    fn get_at(&self, i: I) -> Option<&Self::Elem>;
    /// The element at `i` to write, or `None` (the violation recorded) out of range.
    fn slot_at(&mut self, i: I) -> Option<&mut Self::Elem>;
}

fn checked<I: KernelIndex>(i: I, len: usize) -> Option<usize> {
    let k = i.to_usize();
    if k < len {
        Some(k)
    } else {
        out_of_range(i.to_i128(), len);
        None
    }
}

impl<T, I: KernelIndex, const N: usize> LocalIndex<I> for [T; N] {
    type Elem = T;
    #[inline]
    fn get_at(&self, i: I) -> Option<&T> {
        checked(i, N).map(|k| &self[k])
    }
    #[inline]
    fn slot_at(&mut self, i: I) -> Option<&mut T> {
        checked(i, N).map(|k| &mut self[k])
    }
}

/// A device function's `&[T; N]` parameter: as the array, read-only.
impl<T, I: KernelIndex, const N: usize> LocalIndex<I> for &[T; N] {
    type Elem = T;
    #[inline]
    fn get_at(&self, i: I) -> Option<&T> {
        (**self).get_at(i)
    }
    /// A shared array reference is never written (rustc rejects the kernel that would).
    #[inline]
    fn slot_at(&mut self, i: I) -> Option<&mut T> {
        checked(i, N);
        None
    }
}

/// A device function's `&mut [T; N]` parameter: as the array.
impl<T, I: KernelIndex, const N: usize> LocalIndex<I> for &mut [T; N] {
    type Elem = T;
    #[inline]
    fn get_at(&self, i: I) -> Option<&T> {
        (**self).get_at(i)
    }
    #[inline]
    fn slot_at(&mut self, i: I) -> Option<&mut T> {
        (**self).slot_at(i)
    }
}

impl<T, I: KernelIndex> LocalIndex<I> for Raw<T> {
    type Elem = T;
    #[inline]
    fn get_at(&self, i: I) -> Option<&T> {
        checked(i, self.len()).map(|k| &self.as_slice()[k])
    }
    /// A raw argument is read-only.
    #[inline]
    fn slot_at(&mut self, i: I) -> Option<&mut T> {
        checked(i, self.len());
        None
    }
}

/// `a[i]` read: the element, or zero bytes out of range.
///
/// # Safety
///
/// All-zero bytes are a valid `A::Elem` (every kernel value type: numbers, `bool`, arrays,
/// tuples and `#[device]` structs of them), which the macro that writes the call guarantees.
#[inline]
pub unsafe fn local_get<A: LocalIndex<I>, I>(a: &A, i: I) -> A::Elem
where
    A::Elem: Copy,
{
    match a.get_at(i) {
        Some(v) => *v,
        // SAFETY: the caller's contract.
        None => unsafe { std::mem::zeroed() },
    }
}

/// `a[i]` as a place to write, `None` out of range (or when `a` is none: an enclosing index
/// was out of range).
#[inline]
pub fn local_slot<'a, A: LocalIndex<I> + 'a, I>(a: Option<&'a mut A>, i: I) -> Option<&'a mut A::Elem> {
    a?.slot_at(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Out-of-range indices record a violation for the whole process: `gpu_bounds.rs` tests them
    // (its tests take turns); here only the in-range paths.
    #[test]
    fn nested_reads_and_writes() {
        let mut a = [[1u32, 2], [3, 4]];
        // SAFETY: u32 arrays are valid as zero bytes.
        unsafe {
            assert_eq!(local_get(&a, 1usize), [3, 4]);
            assert_eq!(local_get(&local_get(&a, 0u32), 1i32), 2);
        }
        if let Some(s) = local_slot(local_slot(Some(&mut a), 1usize), 0usize) {
            *s = 9;
        }
        assert_eq!(a, [[1, 2], [9, 4]]);
        let r = &mut a;
        if let Some(s) = local_slot(Some(&mut &mut *r), 0u64) {
            *s = [5, 6];
        }
        assert_eq!(a[0], [5, 6]);
    }
}
