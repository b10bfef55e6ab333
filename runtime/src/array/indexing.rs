//! Basic indexing (NumPy's `x[0, 1:3, None, ...]`): a typed index list of integers, slices, new
//! axes and an ellipsis, read as a view ([`Array::index`]) and written through one
//! ([`Array::assign_index`], [`Array::fill_index`]).
//!
//! ```no_run
//! # use cuprum_runtime::{Array, array::Idx};
//! let x = Array::<f32>::arange(24)?.reshape([2, 3, 4])?;
//! let v = x.index(&[Idx::from(1), (1..).into(), Idx::NewAxis, Idx::Ellipsis])?; // x[1, 1:, None, ...]
//! assert_eq!(v.shape(), &[2, 1, 4]);
//! # Ok::<(), cuprum_runtime::Error>(())
//! ```

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use super::Array;
use super::shape::{Layout, Slice};
use crate::Scalar;
use crate::element::Element;
use crate::error::{Error, Result};

/// One entry of a basic index: NumPy's `i`, `a:b:c`, `None` (`np.newaxis`) or `...`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idx {
    /// One position along an axis (negative counts from the end); the axis goes away.
    Int(isize),
    /// A [`Slice`] of an axis (Python's rules); the axis stays.
    Slice(Slice),
    /// A new axis of extent 1 (`None` / `np.newaxis`).
    NewAxis,
    /// As many whole axes (`:`) as the other entries leave (`...`; at most one).
    Ellipsis,
}

impl From<isize> for Idx {
    fn from(i: isize) -> Idx {
        Idx::Int(i)
    }
}

impl From<Slice> for Idx {
    fn from(s: Slice) -> Idx {
        Idx::Slice(s)
    }
}

macro_rules! idx_from_range {
    ($($r:ty),*) => {$(
        impl From<$r> for Idx {
            fn from(r: $r) -> Idx {
                Idx::Slice(Slice::from(r))
            }
        }
    )*};
}
idx_from_range!(
    Range<isize>,
    RangeFrom<isize>,
    RangeTo<isize>,
    RangeInclusive<isize>,
    RangeToInclusive<isize>,
    RangeFull
);

impl Layout {
    /// The view `index` selects (see [`Array::index`]).
    pub fn index(&self, index: &[Idx]) -> Result<Layout> {
        let ellipses = index.iter().filter(|i| matches!(i, Idx::Ellipsis)).count();
        if ellipses > 1 {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "an index can only have a single ellipsis, {index:?} has {ellipses}"
                ),
            });
        }
        let consumed = index
            .iter()
            .filter(|i| matches!(i, Idx::Int(_) | Idx::Slice(_)))
            .count();
        if consumed > self.ndim() {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "too many indices: {index:?} indexes {consumed} axes of an array with {} \
                     dimension(s) {:?}",
                    self.ndim(),
                    self.shape
                ),
            });
        }
        // Checked whole before the view is built: every error names the index as given.
        let mut shape = Vec::new();
        let mut strides = Vec::new();
        let mut offset = self.offset as isize;
        let mut axis = 0;
        let whole = |axis: usize, shape: &mut Vec<usize>, strides: &mut Vec<isize>| {
            shape.push(self.shape[axis]);
            strides.push(self.strides[axis]);
        };
        for entry in index {
            match *entry {
                Idx::Int(i) => {
                    let n = self.shape[axis] as isize;
                    let j = if i < 0 { i + n } else { i };
                    if j < 0 || j >= n {
                        return Err(Error::InvalidSlice {
                            detail: format!(
                                "index {i} is out of range for axis {axis} of extent {n} (in \
                                 {index:?})"
                            ),
                        });
                    }
                    offset += j * self.strides[axis];
                    axis += 1;
                }
                Idx::Slice(s) => {
                    let (start, count, step) = s.indices(self.shape[axis])?;
                    if count > 0 {
                        offset += start as isize * self.strides[axis];
                    }
                    shape.push(count);
                    strides.push(self.strides[axis] * step);
                    axis += 1;
                }
                Idx::NewAxis => {
                    shape.push(1);
                    strides.push(0);
                }
                Idx::Ellipsis => {
                    for _ in 0..self.ndim() - consumed {
                        whole(axis, &mut shape, &mut strides);
                        axis += 1;
                    }
                }
            }
        }
        while axis < self.ndim() {
            whole(axis, &mut shape, &mut strides);
            axis += 1;
        }
        // An empty result may start anywhere: keep the offset of the source (always inside it).
        let offset = if shape.contains(&0) {
            self.offset
        } else {
            offset as usize
        };
        Ok(Layout::new(shape, strides, offset))
    }
}

impl<T: Element> Array<T> {
    /// The view `x[index]` (NumPy's basic indexing: integers remove their axis, slices keep it,
    /// [`Idx::NewAxis`] inserts one of extent 1, [`Idx::Ellipsis`] stands for the axes not
    /// named; axes after the last entry are kept whole). No copy. Errors: an integer out of
    /// range, more indices than axes, two ellipses, a zero step.
    pub fn index(&self, index: &[Idx]) -> Result<Array<T>> {
        Ok(self.with_layout(self.layout.index(index)?))
    }
}

impl<T: Scalar> Array<T> {
    /// `x[index] = value` (NumPy's basic assignment): `value` is broadcast to the shape of the
    /// view [`index`](Self::index) selects and copied into it. The index and the shapes are
    /// checked before anything is written.
    pub fn assign_index(&mut self, index: &[Idx], value: &Array<T>) -> Result<()> {
        let mut view = self.index(index)?;
        super::shape::broadcast_strides(value.shape(), value.strides(), view.shape())?;
        view.assign(value)
    }

    /// `x[index] = value` for one scalar `value`: every element of the view is set.
    pub fn fill_index(&mut self, index: &[Idx], value: T) -> Result<()> {
        self.index(index)?.fill(value)
    }
}
