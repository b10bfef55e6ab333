//! Kernel argument types with a shape: [`Raw`] for elementwise and reduction kernels, [`View`] and
//! [`ViewMut`] for raw kernels (docs/kernel-language.md).
//!
//! These are the host types: they make kernel bodies type-check and run on the host. On the device
//! the compiler passes the same information (pointer, shape, strides) in CuPy's `CArray` layout, and
//! the launch functions take `Array`s in their place. Shapes and strides are counted in elements
//! (CuPy's `CArray::strides()` counts bytes).

use std::ops::{Index, IndexMut};
use std::sync::Arc;

use super::intrinsics::KernelIndex;

/// C-contiguous strides (in elements) of `shape`.
fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.wrapping_mul(isize::try_from(n).unwrap_or(isize::MAX));
    }
    strides
}

/// The product of the extents, `None` on overflow.
fn checked_len(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n))
}

/// An elementwise kernel's raw argument: CuPy's `raw T x`. It is not broadcast; the body indexes it
/// by hand with a flat C-order index, usually derived from [`index()`](super::intrinsics::index) and
/// [`loop_size()`](super::intrinsics::loop_size).
///
/// On the host it owns (shares) its data, which is C-contiguous; cloning is cheap.
#[derive(Clone, Debug, PartialEq)]
pub struct Raw<T> {
    data: Arc<[T]>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    /// Set when a launch on the CPU device reads it: an index out of range then gives zero and
    /// is reported, as on the GPU, instead of panicking.
    launch: Option<Arc<Launched<T>>>,
}

/// What an out-of-range index of a launched [`Raw`] needs: the kernel to report, the zero to read.
#[derive(Debug, PartialEq)]
struct Launched<T> {
    kernel: String,
    zero: T,
}

impl<T> Raw<T> {
    /// A 1-D raw argument holding `data`.
    pub fn new(data: Vec<T>) -> Self {
        let shape = vec![data.len()];
        Raw {
            data: data.into(),
            shape,
            strides: vec![1],
            launch: None,
        }
    }

    /// A raw argument of the given shape holding `data` in C order; `None` if the number of
    /// elements of `shape` is not `data.len()`.
    pub fn with_shape(data: Vec<T>, shape: &[usize]) -> Option<Self> {
        if checked_len(shape)? != data.len() {
            return None;
        }
        Some(Raw {
            data: data.into(),
            shape: shape.to_vec(),
            strides: c_strides(shape),
            launch: None,
        })
    }

    /// The same argument as read by `kernel` launched on the CPU device: an index out of range
    /// reads `zero` (zero bytes) and is reported as `Error::IndexOutOfBounds` at the device's
    /// next synchronising call, as on the GPU (docs/semantics.md, row 18).
    pub(crate) fn launched_by(mut self, kernel: &str, zero: T) -> Self {
        self.launch = Some(Arc::new(Launched { kernel: kernel.to_string(), zero }));
        self
    }

    /// The number of elements: CuPy's `x.size()`.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The number of dimensions: CuPy's `x.ndim`.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The extents: CuPy's `x.shape()`.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The strides, in elements (C-contiguous on the host).
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The elements in C order.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// `x[i]` without the kernel's run-time index check (docs/semantics.md, row 18).
    ///
    /// # Safety
    ///
    /// `i` must be in range: on the device an out-of-range index reads outside the argument
    /// (undefined behaviour). This host definition checks anyway (it panics, as `x[i]` does).
    pub unsafe fn get_unchecked<I>(&self, i: I) -> &T
    where
        Self: Index<I, Output = T>,
    {
        &self[i]
    }
}

impl<T> From<Vec<T>> for Raw<T> {
    fn from(data: Vec<T>) -> Self {
        Raw::new(data)
    }
}

/// `x[i]`: the element at flat C-order index `i`, which may be a `usize`, `u32`, `i32`, `u64` or
/// `i64` (a 32-bit index keeps 32-bit address arithmetic on the device); a negative index is out of
/// bounds.
impl<T, I: KernelIndex> Index<I> for Raw<T> {
    type Output = T;
    fn index(&self, i: I) -> &T {
        match (self.data.get(i.to_usize()), &self.launch) {
            (Some(x), _) => x,
            (None, Some(l)) => {
                // Elementwise and reduction loops on the CPU run no CUDA thread to name.
                crate::bounds::record_cpu(&l.kernel, i.to_i128(), self.data.len() as u64, [0; 3], [0; 3]);
                &l.zero
            }
            (None, None) => panic!("index out of bounds: the len is {} but the index is {}", self.data.len(), i.to_i128()),
        }
    }
}

/// The validated layout shared by [`View`] and [`ViewMut`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout<const N: usize> {
    shape: [usize; N],
    strides: [isize; N],
    offset: usize,
    len: usize,
}

impl<const N: usize> Layout<N> {
    /// Checks that every element lies in `0..data_len`; `None` otherwise or on overflow.
    fn new(data_len: usize, shape: [usize; N], strides: [isize; N], offset: usize) -> Option<Self> {
        let len = checked_len(&shape)?;
        if len > 0 {
            let mut lo = i128::try_from(offset).ok()?;
            let mut hi = lo;
            for (&n, &s) in shape.iter().zip(&strides) {
                let reach = i128::try_from(n - 1)
                    .ok()?
                    .checked_mul(i128::try_from(s).ok()?)?;
                if reach < 0 {
                    lo = lo.checked_add(reach)?;
                } else {
                    hi = hi.checked_add(reach)?;
                }
            }
            if lo < 0 || hi >= i128::try_from(data_len).ok()? {
                return None;
            }
        }
        Some(Layout {
            shape,
            strides,
            offset,
            len,
        })
    }

    fn c_contiguous(data_len: usize, shape: [usize; N]) -> Option<Self> {
        if checked_len(&shape)? != data_len {
            return None;
        }
        let mut strides = [0isize; N];
        strides.copy_from_slice(&c_strides(&shape));
        Layout::new(data_len, shape, strides, 0)
    }

    /// The data position of the element at `idx`; panics if `idx` is out of bounds.
    fn position<I: KernelIndex>(&self, idx: [I; N]) -> usize {
        let mut pos = self.offset as isize;
        for (axis, ((&i, &n), &s)) in idx.iter().zip(&self.shape).zip(&self.strides).enumerate() {
            let i = i.to_usize();
            assert!(
                i < n,
                "index out of bounds: the extent of axis {axis} is {n} but the index is {i}"
            );
            // No overflow: the constructor checked that every element lies inside the data, and
            // every partial sum lies between the lowest and the highest element's position.
            pos += i as isize * s;
        }
        pos as usize
    }

    /// The data position of the element at flat C-order index `i`; panics if out of bounds.
    fn flat_position(&self, i: usize) -> usize {
        assert!(
            i < self.len,
            "index out of bounds: the len is {} but the index is {i}",
            self.len
        );
        let mut idx = [0usize; N];
        let mut rest = i;
        for (x, &n) in idx.iter_mut().zip(&self.shape).rev() {
            *x = rest % n;
            rest /= n;
        }
        self.position(idx)
    }
}

/// An `N`-dimensional read-only array argument of a raw kernel: shape and strides (in elements)
/// over borrowed data. Index it with `[i, j, ...]` (`x[[i, j]]`) or with a flat C-order index; the
/// indices may be `usize`, `u32`, `i32`, `u64` or `i64` ([`KernelIndex`]).
#[derive(Debug)]
pub struct View<'a, T, const N: usize> {
    data: &'a [T],
    layout: Layout<N>,
}

impl<T, const N: usize> Clone for View<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for View<'_, T, N> {}

impl<'a, T, const N: usize> View<'a, T, N> {
    /// A C-contiguous view of `data` with the given shape; `None` if the number of elements of
    /// `shape` is not `data.len()`.
    pub fn new(data: &'a [T], shape: [usize; N]) -> Option<Self> {
        Some(View {
            data,
            layout: Layout::c_contiguous(data.len(), shape)?,
        })
    }

    /// A strided view whose element `[0, ..., 0]` is `data[0]`; `None` if an element would lie
    /// outside `data` (or the sizes overflow).
    pub fn with_strides(data: &'a [T], shape: [usize; N], strides: [isize; N]) -> Option<Self> {
        Self::with_layout(data, shape, strides, 0)
    }

    /// A strided view whose element `[0, ..., 0]` is `data[offset]` (needed for negative strides);
    /// `None` if an element would lie outside `data` (or the sizes overflow).
    pub fn with_layout(
        data: &'a [T],
        shape: [usize; N],
        strides: [isize; N],
        offset: usize,
    ) -> Option<Self> {
        Some(View {
            data,
            layout: Layout::new(data.len(), shape, strides, offset)?,
        })
    }

    /// The extents.
    pub fn shape(&self) -> [usize; N] {
        self.layout.shape
    }

    /// The strides, in elements.
    pub fn strides(&self) -> [isize; N] {
        self.layout.strides
    }

    /// The number of elements (the product of the extents).
    pub fn len(&self) -> usize {
        self.layout.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.layout.len == 0
    }

    /// `x[ix]` (a flat index or a multi-index `[i, j]`) without the kernel's run-time index check
    /// (docs/semantics.md, row 18).
    ///
    /// # Safety
    ///
    /// Every index must be in range: on the device an out-of-range index reads outside the
    /// argument (undefined behaviour). This host definition checks anyway (it panics, as
    /// `x[ix]` does).
    pub unsafe fn get_unchecked<Ix>(&self, ix: Ix) -> &T
    where
        Self: Index<Ix, Output = T>,
    {
        &self[ix]
    }
}

/// `x[[i, j, ...]]`: the element at a multi-index (of any [`KernelIndex`] type), through the
/// strides.
impl<T, I: KernelIndex, const N: usize> Index<[I; N]> for View<'_, T, N> {
    type Output = T;
    fn index(&self, idx: [I; N]) -> &T {
        &self.data[self.layout.position(idx)]
    }
}

/// `x[i]`: the element at flat C-order index `i` (of any [`KernelIndex`] type), whatever the
/// strides.
impl<T, I: KernelIndex, const N: usize> Index<I> for View<'_, T, N> {
    type Output = T;
    fn index(&self, i: I) -> &T {
        &self.data[self.layout.flat_position(i.to_usize())]
    }
}

/// An `N`-dimensional writable array argument of a raw kernel: shape and strides (in elements) over
/// mutably borrowed data. Index it with `[i, j, ...]` (`x[[i, j]] = v`) or with a flat C-order
/// index; the indices may be `usize`, `u32`, `i32`, `u64` or `i64` ([`KernelIndex`]).
#[derive(Debug)]
pub struct ViewMut<'a, T, const N: usize> {
    data: &'a mut [T],
    layout: Layout<N>,
}

impl<'a, T, const N: usize> ViewMut<'a, T, N> {
    /// A C-contiguous view of `data` with the given shape; `None` if the number of elements of
    /// `shape` is not `data.len()`.
    pub fn new(data: &'a mut [T], shape: [usize; N]) -> Option<Self> {
        let layout = Layout::c_contiguous(data.len(), shape)?;
        Some(ViewMut { data, layout })
    }

    /// A strided view whose element `[0, ..., 0]` is `data[0]`; `None` if an element would lie
    /// outside `data` (or the sizes overflow). Strides that make two indices share an element are
    /// accepted (as on the device, writes through them race).
    pub fn with_strides(data: &'a mut [T], shape: [usize; N], strides: [isize; N]) -> Option<Self> {
        Self::with_layout(data, shape, strides, 0)
    }

    /// A strided view whose element `[0, ..., 0]` is `data[offset]` (needed for negative strides);
    /// `None` if an element would lie outside `data` (or the sizes overflow).
    pub fn with_layout(
        data: &'a mut [T],
        shape: [usize; N],
        strides: [isize; N],
        offset: usize,
    ) -> Option<Self> {
        let layout = Layout::new(data.len(), shape, strides, offset)?;
        Some(ViewMut { data, layout })
    }

    /// The extents.
    pub fn shape(&self) -> [usize; N] {
        self.layout.shape
    }

    /// The strides, in elements.
    pub fn strides(&self) -> [isize; N] {
        self.layout.strides
    }

    /// The number of elements (the product of the extents).
    pub fn len(&self) -> usize {
        self.layout.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.layout.len == 0
    }

    /// A read-only view of the same elements.
    pub fn as_view(&self) -> View<'_, T, N> {
        View {
            data: self.data,
            layout: self.layout,
        }
    }

    /// `x[ix]` (a flat index or a multi-index `[i, j]`) without the kernel's run-time index check
    /// (docs/semantics.md, row 18).
    ///
    /// # Safety
    ///
    /// As [`View::get_unchecked`].
    pub unsafe fn get_unchecked<Ix>(&self, ix: Ix) -> &T
    where
        Self: Index<Ix, Output = T>,
    {
        &self[ix]
    }

    /// `&mut x[ix]` without the kernel's run-time index check (docs/semantics.md, row 18).
    ///
    /// # Safety
    ///
    /// Every index must be in range: on the device an out-of-range index writes outside the
    /// argument (undefined behaviour). This host definition checks anyway (it panics).
    pub unsafe fn get_unchecked_mut<Ix>(&mut self, ix: Ix) -> &mut T
    where
        Self: IndexMut<Ix, Output = T>,
    {
        &mut self[ix]
    }
}

/// `x[[i, j, ...]]`: the element at a multi-index (of any [`KernelIndex`] type), through the
/// strides.
impl<T, I: KernelIndex, const N: usize> Index<[I; N]> for ViewMut<'_, T, N> {
    type Output = T;
    fn index(&self, idx: [I; N]) -> &T {
        &self.data[self.layout.position(idx)]
    }
}

/// `x[[i, j, ...]] = v`.
impl<T, I: KernelIndex, const N: usize> IndexMut<[I; N]> for ViewMut<'_, T, N> {
    fn index_mut(&mut self, idx: [I; N]) -> &mut T {
        let pos = self.layout.position(idx);
        &mut self.data[pos]
    }
}

/// `x[i]`: the element at flat C-order index `i` (of any [`KernelIndex`] type), whatever the
/// strides.
impl<T, I: KernelIndex, const N: usize> Index<I> for ViewMut<'_, T, N> {
    type Output = T;
    fn index(&self, i: I) -> &T {
        &self.data[self.layout.flat_position(i.to_usize())]
    }
}

/// `x[i] = v` at flat C-order index `i`.
impl<T, I: KernelIndex, const N: usize> IndexMut<I> for ViewMut<'_, T, N> {
    fn index_mut(&mut self, i: I) -> &mut T {
        let pos = self.layout.flat_position(i.to_usize());
        &mut self.data[pos]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::intrinsics::{index, loop_size, with_elementwise_index};

    #[test]
    fn raw_indexing() {
        let r = Raw::with_shape((0..6).collect::<Vec<i32>>(), &[2, 3]).unwrap();
        assert_eq!(r.len(), 6);
        assert_eq!(r.ndim(), 2);
        assert_eq!(r.shape(), &[2, 3]);
        assert_eq!(r.strides(), &[3, 1]);
        assert_eq!(r[4usize], 4);
        assert_eq!(r[5u32], 5);
        assert_eq!(r[1i32], 1);
        assert_eq!(r[2u64], 2);
        assert_eq!(r[3i64], 3);
        // An unsuffixed literal index (i32 by fallback) still types the element.
        assert_eq!(r[0], 0);
        let c = r.clone();
        assert_eq!(c, r);
        assert_eq!(c.as_slice(), &[0, 1, 2, 3, 4, 5]);
        assert!(Raw::with_shape(vec![1, 2, 3], &[2, 2]).is_none());
        assert!(Raw::with_shape(Vec::<u8>::new(), &[usize::MAX, 2]).is_none());
        let e = Raw::with_shape(Vec::<u8>::new(), &[3, 0]).unwrap();
        assert!(e.is_empty());
        assert_eq!(e.strides(), &[0, 1]);
        let one = Raw::from(vec![1.5f32]);
        assert_eq!((one.shape(), one.strides()), (&[1usize][..], &[1isize][..]));
        let s = Raw::with_shape(vec![7u8], &[]).unwrap();
        assert_eq!((s.len(), s.ndim()), (1, 0));
    }

    #[test]
    #[should_panic(expected = "index out of bounds: the len is 2 but the index is -1")]
    fn raw_negative_index_is_out_of_bounds() {
        let r = Raw::new(vec![1u8, 2]);
        let _ = r[-1i32];
    }

    #[test]
    fn elementwise_body_with_raw_argument() {
        // CuPy's example: y = x[_ind.size() - i - 1], a reversal through a raw argument.
        fn reverse(x: &Raw<f32>) -> f32 {
            x[loop_size() - index() - 1]
        }
        let x = Raw::new(vec![1.0f32, 2.0, 3.0]);
        let y: Vec<f32> = (0..3)
            .map(|i| with_elementwise_index(i, 3, || reverse(&x)))
            .collect();
        assert_eq!(y, [3.0, 2.0, 1.0]);
    }

    #[test]
    fn view_indexing_with_strides() {
        let data: Vec<i32> = (0..12).collect();
        // A C-contiguous 3x4 view.
        let v = View::new(&data, [3, 4]).unwrap();
        assert_eq!((v.shape(), v.strides(), v.len()), ([3, 4], [4, 1], 12));
        assert_eq!(v[[1, 2]], 6);
        assert_eq!(v[[1u32, 2]], 6);
        assert_eq!(v[[1i32, 2]], 6);
        assert_eq!(v[7], 7);
        assert_eq!(v[7u32], 7);
        assert_eq!(v[7i64], 7);
        // Its transpose (4x3) through strides.
        let t = View::with_strides(&data, [4, 3], [1, 4]).unwrap();
        assert_eq!(t[[2, 1]], 6);
        assert_eq!(
            (0..12).map(|i| t[i]).collect::<Vec<_>>(),
            [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
        );
        // Every other column.
        let s = View::with_strides(&data, [3, 2], [4, 2]).unwrap();
        assert_eq!(
            (0..6).map(|i| s[i]).collect::<Vec<_>>(),
            [0, 2, 4, 6, 8, 10]
        );
        // Reversed rows need an offset.
        let r = View::with_layout(&data, [3, 4], [-4, 1], 8).unwrap();
        assert_eq!(r[[0, 0]], 8);
        assert_eq!(r[[2, 3]], 3);
        // Broadcast (stride 0).
        let b = View::with_strides(&data[..4], [5, 4], [0, 1]).unwrap();
        assert_eq!(b[[4, 3]], 3);
        let copy = b;
        assert_eq!(copy.len(), b.len());
    }

    #[test]
    fn view_bounds_are_validated() {
        let data = [0u8; 12];
        assert!(View::new(&data, [3, 5]).is_none());
        assert!(View::with_strides(&data, [3, 4], [4, 2]).is_none());
        assert!(View::with_strides(&data, [3, 4], [-4, 1]).is_none());
        assert!(View::with_layout(&data, [3, 4], [-4, 1], 9).is_none());
        assert!(View::with_layout(&data, [1], [1], 12).is_none());
        assert!(View::with_strides(&data, [usize::MAX, 2], [1, 1]).is_none());
        assert!(View::with_strides(&data, [2, 2], [isize::MAX, 1]).is_none());
        assert!(View::with_strides(&data, [2, 2], [isize::MIN, 1]).is_none());
        // Empty views are valid whatever the strides and offset.
        let e = View::with_layout(&data, [0, 7], [1000, 1000], 1000).unwrap();
        assert!(e.is_empty());
        assert!(View::<u8, 1>::new(&[], [0]).unwrap().is_empty());
        // A 0-d view has one element.
        let z = View::new(&data[..1], []).unwrap();
        assert_eq!((z.len(), z[[0usize; 0]], z[0]), (1, 0, 0));
    }

    #[test]
    #[should_panic(expected = "axis 1")]
    fn view_multi_index_out_of_bounds_panics() {
        let data = [0u8; 12];
        let v = View::new(&data, [3, 4]).unwrap();
        let _ = v[[0, 4]];
    }

    #[test]
    #[should_panic(expected = "the extent of axis 1 is 4 but the index is 18446744073709551615")]
    fn view_negative_multi_index_panics() {
        let data = [0u8; 12];
        let v = View::new(&data, [3, 4]).unwrap();
        let _ = v[[0, -1i32]];
    }

    #[test]
    #[should_panic(expected = "index out of bounds: the len is 2 but the index is 2")]
    fn view_flat_index_out_of_bounds_panics() {
        let data = [0u8; 4];
        let v = View::with_strides(&data, [2], [2]).unwrap();
        let _ = v[2];
    }

    #[test]
    fn view_mut_writes_through_strides() {
        let mut data = vec![0i32; 6];
        {
            // The transpose of a 2x3 C-contiguous array.
            let mut t = ViewMut::with_strides(&mut data, [3, 2], [1, 3]).unwrap();
            assert_eq!((t.shape(), t.strides(), t.len()), ([3, 2], [1, 3], 6));
            for i in 0..3 {
                for j in 0..2 {
                    t[[i, j]] = 10 * i + j;
                }
            }
            assert_eq!(t[[2, 1]], 21);
            assert_eq!(t[5], 21);
            t[0] += 100;
            assert_eq!(t.as_view()[[0, 0]], 100);
        }
        assert_eq!(data, [100, 10, 20, 1, 11, 21]);
        let mut m = ViewMut::new(&mut data, [6]).unwrap();
        m[[5u32]] = -1;
        m[4i32] = -2;
        assert_eq!(m[[4usize]], -2);
        assert_eq!(m[5], -1);
        assert!(ViewMut::new(&mut data, [7]).is_none());
        assert!(ViewMut::with_layout(&mut data, [2], [-1], 0).is_none());
        let r = ViewMut::with_layout(&mut data, [2], [-1], 1).unwrap();
        assert!(!r.is_empty());
    }

    #[test]
    fn raw_kernel_body_with_views() {
        // A raw-kernel style body: out[i, j] = a[j, i] over all elements, one thread.
        fn transpose(a: View<'_, f32, 2>, mut out: ViewMut<'_, f32, 2>) {
            let [n, m] = out.shape();
            for i in 0..n {
                for j in 0..m {
                    out[[i, j]] = a[[j, i]];
                }
            }
        }
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut out = [0.0f32; 6];
        transpose(
            View::new(&a, [2, 3]).unwrap(),
            ViewMut::new(&mut out, [3, 2]).unwrap(),
        );
        assert_eq!(out, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn get_unchecked_is_indexing_on_the_host() {
        let r = Raw::with_shape((0..6).collect::<Vec<i32>>(), &[2, 3]).unwrap();
        // SAFETY: in range.
        assert_eq!(unsafe { *r.get_unchecked(4u32) }, 4);
        let data: Vec<f32> = (0..6).map(|x| x as f32).collect();
        let v = View::new(&data, [2, 3]).unwrap();
        // SAFETY: in range.
        assert_eq!(unsafe { (*v.get_unchecked([1usize, 2]), *v.get_unchecked(4i32)) }, (5.0, 4.0));
        let mut out = vec![0.0f32; 6];
        let mut w = ViewMut::new(&mut out, [3, 2]).unwrap();
        // SAFETY: in range.
        unsafe {
            *w.get_unchecked_mut([2u32, 1]) = 9.0;
            *w.get_unchecked_mut(0usize) = 1.0;
        }
        // SAFETY: in range.
        assert_eq!(unsafe { *w.get_unchecked([2u32, 1]) }, 9.0);
        assert_eq!(out, [1.0, 0.0, 0.0, 0.0, 0.0, 9.0]);
    }
}
