//! Axis rearrangements as views, with NumPy's signed axes: `swapaxes`, `moveaxis`, `rollaxis`,
//! `atleast_1d`/`2d`/`3d`, `broadcast` and `broadcast_arrays` (`transpose`, `permute`, `swap_axes`,
//! `expand_dims`, `squeeze` and `broadcast_to` are in `mod.rs`).

use super::Array;
use super::shape::{broadcast_shapes, normalize_axis};
use crate::element::Element;
use crate::error::{Error, Result};

impl<T: Element> Array<T> {
    /// Axes `a` and `b` exchanged (negative counts from the end); a view (NumPy's `swapaxes`;
    /// [`swap_axes`](Self::swap_axes) takes unsigned axes).
    pub fn swapaxes(&self, a: isize, b: isize) -> Result<Array<T>> {
        let nd = self.ndim();
        self.swap_axes(normalize_axis(a, nd)?, normalize_axis(b, nd)?)
    }

    /// The axes `source` moved to the positions `destination` (as many of each, no repeats;
    /// negative counts from the end), the other axes keeping their order; a view (NumPy's
    /// `moveaxis`).
    pub fn moveaxis(&self, source: &[isize], destination: &[isize]) -> Result<Array<T>> {
        let nd = self.ndim();
        if source.len() != destination.len() {
            return Err(Error::InvalidShape {
                op: "moveaxis",
                detail: format!(
                    "source {source:?} and destination {destination:?} must name as many axes"
                ),
            });
        }
        let norm = |axes: &[isize], what: &str| -> Result<Vec<usize>> {
            let v = axes
                .iter()
                .map(|&a| normalize_axis(a, nd))
                .collect::<Result<Vec<_>>>()?;
            let mut seen = vec![false; nd];
            for &a in &v {
                if std::mem::replace(&mut seen[a], true) {
                    return Err(Error::InvalidShape {
                        op: "moveaxis",
                        detail: format!("{what} {axes:?} names axis {a} twice"),
                    });
                }
            }
            Ok(v)
        };
        let (src, dst) = (norm(source, "source")?, norm(destination, "destination")?);
        let mut order: Vec<usize> = (0..nd).filter(|a| !src.contains(a)).collect();
        let mut pairs: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
        pairs.sort_unstable();
        for (d, s) in pairs {
            order.insert(d, s);
        }
        self.permute(&order)
    }

    /// The elements as C-contiguous rows along `axis` (negative counts from the end; `None`: the
    /// flattened array, one row), for the routines that work row by row (`cumsum`, `sort`): the
    /// axis moved last ([`moveaxis`](Self::moveaxis)) and the result copied unless it is
    /// C-contiguous already; with the axis to give back to the rows' result
    /// ([`from_rows`](Self::from_rows)), `None` when it was last already. A 0-d array has no axis.
    pub(crate) fn rows_along(&self, axis: Option<isize>) -> Result<(Array<T>, Option<usize>)> {
        let (rows, moved) = match axis {
            None => (self.ravel()?, None),
            Some(a) => {
                let nd = self.ndim();
                if nd == 0 {
                    return Err(Error::InvalidAxis { axis: a, ndim: nd });
                }
                let k = normalize_axis(a, nd)?;
                if k == nd - 1 { (self.clone(), None) } else { (self.moveaxis(&[k as isize], &[-1])?, Some(k)) }
            }
        };
        let rows = if rows.is_c_contiguous() { rows } else { rows.copy()? };
        Ok((rows, moved))
    }

    /// A result computed on [`rows_along`](Self::rows_along)'s rows (the same shape), with the
    /// axis `moved` given back to its place: C-contiguous, as NumPy's results are.
    pub(crate) fn from_rows(self, moved: Option<usize>) -> Result<Array<T>> {
        match moved {
            None => Ok(self),
            Some(k) => self.moveaxis(&[-1], &[k as isize])?.copy(),
        }
    }

    /// Axis `axis` moved to lie before position `start` (NumPy's `rollaxis`, kept for old
    /// code; [`moveaxis`](Self::moveaxis) is clearer): `start` is in `-ndim..=ndim`. A view.
    pub fn rollaxis(&self, axis: isize, start: isize) -> Result<Array<T>> {
        let nd = self.ndim();
        let a = normalize_axis(axis, nd)?;
        let s = if start < 0 {
            start + nd as isize
        } else {
            start
        };
        if s < 0 || s > nd as isize {
            return Err(Error::InvalidAxis {
                axis: start,
                ndim: nd + 1,
            });
        }
        let mut s = s as usize;
        if a < s {
            s -= 1;
        }
        if a == s {
            return Ok(self.clone());
        }
        let mut order: Vec<usize> = (0..nd).filter(|&x| x != a).collect();
        order.insert(s, a);
        self.permute(&order)
    }

    /// The array with at least one dimension: a 0-d array becomes shape `[1]` (a view; NumPy's
    /// `atleast_1d`).
    pub fn atleast_1d(&self) -> Array<T> {
        match self.ndim() {
            0 => self.reshape([1]).expect("one element has shape [1]"),
            _ => self.clone(),
        }
    }

    /// The array with at least two dimensions: 0-d becomes `[1, 1]`, 1-d `[n]` becomes
    /// `[1, n]` (a view; NumPy's `atleast_2d`).
    pub fn atleast_2d(&self) -> Array<T> {
        match self.ndim() {
            0 => self.reshape([1, 1]).expect("one element has shape [1, 1]"),
            1 => self.expand_dims(0).expect("axis 0 of a 1-d array"),
            _ => self.clone(),
        }
    }

    /// The array with at least three dimensions: 0-d becomes `[1, 1, 1]`, 1-d `[n]` becomes
    /// `[1, n, 1]`, 2-d `[m, n]` becomes `[m, n, 1]` (a view; NumPy's `atleast_3d`).
    pub fn atleast_3d(&self) -> Array<T> {
        let end = |a: &Array<T>| a.expand_dims(a.ndim()).expect("a new last axis");
        match self.ndim() {
            0 => self
                .reshape([1, 1, 1])
                .expect("one element has shape [1, 1, 1]"),
            1 => end(&self.atleast_2d()),
            2 => end(self),
            _ => self.clone(),
        }
    }
}

/// The arrays broadcast against each other: views of one shape, NumPy's rules (NumPy's
/// `broadcast_arrays`; the shape alone is [`broadcast_shapes`]). An error names the shapes
/// that do not broadcast.
pub fn broadcast_arrays<T: Element>(arrays: &[&Array<T>]) -> Result<Vec<Array<T>>> {
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    let shape = broadcast_shapes(&shapes)?;
    arrays.iter().map(|a| a.broadcast_to(&shape)).collect()
}

/// What NumPy's `np.broadcast(a, b, ...)` object tells: the shape the arrays broadcast to
/// ([`broadcast`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broadcast {
    shape: Vec<usize>,
    numiter: usize,
}

impl Broadcast {
    /// The broadcast shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of dimensions of the broadcast shape.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements of the broadcast shape.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// How many arrays were broadcast (NumPy's `numiter`).
    pub fn numiter(&self) -> usize {
        self.numiter
    }
}

/// The broadcast of the arrays' shapes (NumPy's `np.broadcast(a, b, ...)`, without its
/// iterator: [`broadcast_arrays`] gives the views). An error names the shapes that do not
/// broadcast.
pub fn broadcast<T: Element>(arrays: &[&Array<T>]) -> Result<Broadcast> {
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape()).collect();
    Ok(Broadcast {
        shape: broadcast_shapes(&shapes)?,
        numiter: arrays.len(),
    })
}
