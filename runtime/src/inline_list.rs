//! A short list kept on the stack (spilling to the heap when long): the per-launch lists of
//! the elementwise and reduction launches (parameters, axes), which allocate nothing on the
//! common path.

use std::mem::MaybeUninit;

/// A list kept inline up to `N` items, on the heap beyond (launches with many or large
/// parameters). The inline items are not initialised until pushed, so making a list writes
/// nothing (a launch's parameter list is about 1.2 KB inline).
#[derive(Clone)]
pub(crate) struct InlineList<T: Copy, const N: usize> {
    inline: [MaybeUninit<T>; N],
    /// Items in the list; the first `len` inline ones are initialised while `len <= N`.
    len: usize,
    heap: Vec<T>,
}

impl<T: Copy, const N: usize> InlineList<T, N> {
    #[inline]
    pub(crate) fn new() -> Self {
        InlineList { inline: [MaybeUninit::uninit(); N], len: 0, heap: Vec::new() }
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        if self.len <= N {
            // SAFETY: the first `len` (<= N) inline items were written by `extend` (the invariant
            // of `len`); `MaybeUninit<T>` has `T`'s layout.
            unsafe { std::slice::from_raw_parts(self.inline.as_ptr().cast::<T>(), self.len) }
        } else {
            &self.heap
        }
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len <= N {
            // SAFETY: as in `as_slice`; the borrow is unique.
            unsafe { std::slice::from_raw_parts_mut(self.inline.as_mut_ptr().cast::<T>(), self.len) }
        } else {
            &mut self.heap
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        self.extend(1, value);
    }

    /// Appends `n` copies of `fill`; returns where they start.
    #[inline]
    pub(crate) fn extend(&mut self, n: usize, fill: T) -> usize {
        let at = self.len;
        if at + n <= N {
            for slot in &mut self.inline[at..at + n] {
                slot.write(fill);
            }
            self.len = at + n;
        } else {
            self.spill(n, fill);
        }
        at
    }

    /// [`InlineList::extend`] past the inline items (out of line: launches rarely get here).
    #[cold]
    #[inline(never)]
    fn spill(&mut self, n: usize, fill: T) {
        let at = self.len;
        if at <= N {
            self.heap = self.as_slice().to_vec();
        }
        self.heap.resize(at + n, fill);
        self.len = at + n;
    }

    /// Keeps the first `len` items (no-op when the list is not longer).
    #[inline]
    pub(crate) fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        if self.len > N {
            if len <= N {
                // Back inline: the heap held every item.
                for (slot, &v) in self.inline.iter_mut().zip(&self.heap[..len]) {
                    slot.write(v);
                }
                self.heap = Vec::new();
            } else {
                self.heap.truncate(len);
            }
        }
        self.len = len;
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for InlineList<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy, const N: usize> std::ops::DerefMut for InlineList<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

/// This thread's CPU time in ns (Linux `schedstat`), else wall time: host-cost timings that
/// other processes on the machine do not inflate.
#[cfg(test)]
pub(crate) fn cpu_ns() -> u64 {
    let cpu = std::fs::read_to_string("/proc/thread-self/schedstat").ok().and_then(|s| s.split_whitespace().next()?.parse().ok());
    cpu.unwrap_or_else(|| {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_the_heap_keeping_the_items() {
        let mut l = InlineList::<u32, 2>::new();
        assert_eq!(l.extend(1, 7), 0);
        assert_eq!(l.extend(2, 8), 1);
        assert_eq!(l.extend(1, 9), 3);
        l[0] = 6;
        assert_eq!(&*l, &[6, 8, 8, 9]);
        l.truncate(3);
        assert_eq!(&*l, &[6, 8, 8]);
        l.truncate(1);
        assert_eq!(&*l, &[6]);
        assert_eq!(l.extend(2, 5), 1);
        assert_eq!(&*l, &[6, 5, 5]);
    }
}
