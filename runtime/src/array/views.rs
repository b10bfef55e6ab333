//! The views of NumPy's shape manipulation: `reshape`, `transpose`, `permute`, `swap_axes`,
//! slicing, `index_axis`, `broadcast_to`, `squeeze`, `expand_dims`, `ravel`. Each shares the
//! buffer (the layout arithmetic is `shape::Layout`'s); `ravel` copies when it must.

use super::shape::{self, Layout, Slice};
use super::{Array, IntoShape};
use crate::element::Element;
use crate::error::Result;

impl<T: Element> Array<T> {
    /// The shape, strides and offset.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// A view with another shape of the same element count, in C order. An error when the
    /// layout does not allow it without copying (call `.copy()` first).
    pub fn reshape(&self, shape: impl IntoShape) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.reshape(&shape.into_shape())?))
    }

    /// [`reshape`](Self::reshape) with one extent given as `-1`, inferred from the others.
    pub fn reshape_infer(&self, shape: &[isize]) -> Result<Array<T>> {
        let new = shape::infer_shape(self.len(), shape)?;
        self.reshape(new)
    }

    /// The axes in reverse order (a view).
    pub fn transpose(&self) -> Array<T> {
        self.with_layout(self.layout.transpose())
    }

    /// The axes in the order `axes` (a permutation of `0..ndim`); a view.
    pub fn permute(&self, axes: &[usize]) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.permute(axes)?))
    }

    /// Axes `a` and `b` exchanged; a view.
    pub fn swap_axes(&self, a: usize, b: usize) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.swap_axes(a, b)?))
    }

    /// The view `start:stop:step` of one axis (Python's slice rules; a negative step reverses).
    /// `s` is a [`Slice`] or a Rust range of `isize` (`1..3`, `..`, `-2..`).
    pub fn slice(&self, axis: usize, s: impl Into<Slice>) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.slice(axis, s.into())?))
    }

    /// One [`Slice`] per leading axis (`a[s0, s1, ...]`); later axes are kept whole.
    pub fn slices(&self, s: &[Slice]) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.slices(s)?))
    }

    /// The sub-array at `index` along `axis` (negative counts from the end); the axis is
    /// removed. A view.
    pub fn index_axis(&self, axis: usize, index: isize) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.index_axis(axis, index)?))
    }

    /// A view with the (NumPy) broadcast shape `shape`: stretched axes get stride 0.
    pub fn broadcast_to(&self, shape: impl IntoShape) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.broadcast_to(&shape.into_shape())?))
    }

    /// Removes every extent-1 axis (a view).
    pub fn squeeze(&self) -> Array<T> {
        self.with_layout(self.layout.squeeze())
    }

    /// Removes `axis`, which must have extent 1 (a view).
    pub fn squeeze_axis(&self, axis: usize) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.squeeze_axis(axis)?))
    }

    /// Inserts an extent-1 axis at position `axis` (0..=ndim); a view.
    pub fn expand_dims(&self, axis: usize) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.expand_dims(axis)?))
    }

    /// A 1-D array of all elements in C order: a view when C-contiguous, else a copy.
    pub fn ravel(&self) -> Result<Array<T>> {
        if self.is_c_contiguous() {
            Ok(self.with_layout(Layout::new(vec![self.len()], vec![1], self.layout.offset)))
        } else {
            self.copy()?.reshape([self.len()])
        }
    }
}
