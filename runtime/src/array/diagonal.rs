//! `diagonal`: a diagonal of two axes as a strided view (NumPy's `a.diagonal(offset, axis1,
//! axis2)`); `diag` and `diagflat` build on it (`creation.rs`), `trace` sums it
//! (`reduction/trace.rs`).

use super::Array;
use super::shape::{Layout, normalize_axis};
use crate::element::Element;
use crate::error::{Error, Result};

impl Layout {
    /// See [`Array::diagonal`].
    pub fn diagonal(&self, offset: isize, axis1: isize, axis2: isize) -> Result<Layout> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::InvalidShape {
                op: "diagonal",
                detail: format!(
                    "a diagonal needs at least 2 dimensions, the array has shape {:?}",
                    self.shape
                ),
            });
        }
        let (a, b) = (normalize_axis(axis1, nd)?, normalize_axis(axis2, nd)?);
        if a == b {
            return Err(Error::InvalidShape {
                op: "diagonal",
                detail: format!("axis1 ({axis1}) and axis2 ({axis2}) name the same axis {a}"),
            });
        }
        let (n1, n2) = (self.shape[a] as isize, self.shape[b] as isize);
        // Rows skipped (offset < 0) or columns skipped (offset > 0), then the diagonal's length.
        let (r0, c0) = if offset >= 0 {
            (0, offset)
        } else {
            (-offset, 0)
        };
        let len = (n1 - r0).min(n2 - c0).max(0) as usize;
        let mut shape = Vec::with_capacity(nd - 1);
        let mut strides = Vec::with_capacity(nd - 1);
        for ax in (0..nd).filter(|&ax| ax != a && ax != b) {
            shape.push(self.shape[ax]);
            strides.push(self.strides[ax]);
        }
        shape.push(len);
        strides.push(self.strides[a] + self.strides[b]);
        let start = if len > 0 && !self.shape.contains(&0) {
            (self.offset as isize + r0 * self.strides[a] + c0 * self.strides[b]) as usize
        } else {
            self.offset
        };
        Ok(Layout::new(shape, strides, start))
    }
}

impl<T: Element> Array<T> {
    /// The diagonal of axes `axis1` and `axis2` (negative counts from the end), `offset` above
    /// the main one (below when negative), as a view (NumPy's `diagonal`; NumPy returns a
    /// read-only view, this one can be written). Both axes are removed and the diagonal is the
    /// last axis; an offset past the edge gives an empty diagonal. Errors: fewer than 2 axes, an
    /// axis out of range, both axes the same.
    pub fn diagonal(&self, offset: isize, axis1: isize, axis2: isize) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.diagonal(offset, axis1, axis2)?))
    }
}
