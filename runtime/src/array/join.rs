//! Joining arrays: `concatenate`, `stack`, `hstack`, `vstack`, `dstack`, `column_stack`.
//!
//! Each allocates the result once (C-contiguous, on the first array's device) and copies every
//! input into its slice of the result with the built-in copy kernel (`Array::assign`): no host
//! round trip, one launch per input. Joining along axis 0 (and any join of 1-d arrays) makes
//! each slice of the result C-contiguous, so each copy is the copy kernel's contiguous,
//! vectorised loop: a copy at the device's copy bandwidth. Along another axis each copy is a
//! strided 2-d loop. Every check (count, dimensions, shapes, devices) is made before the
//! result is allocated.

use super::Array;
use super::shape::{Slice, normalize_axis};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::stream::Stream;

/// The arrays joined along an existing axis (NumPy's `concatenate(arrays, axis)`; negative
/// counts from the end). Every array has the same number of dimensions (at least 1) and the
/// same extents except along `axis`, and lives on the same device. Empty inputs are allowed.
pub fn concatenate<T: Scalar>(arrays: &[&Array<T>], axis: isize) -> Result<Array<T>> {
    let Some(first) = arrays.first() else {
        return Err(Error::InvalidShape {
            op: "concatenate",
            detail: "no arrays to join: pass at least one".into(),
        });
    };
    let nd = first.ndim();
    if nd == 0 {
        return Err(Error::InvalidShape {
            op: "concatenate",
            detail: "0-d arrays cannot be concatenated: make them 1-d first (`atleast_1d`), or \
                     use `stack`"
                .into(),
        });
    }
    let ax = normalize_axis(axis, nd)?;
    let mut shape = first.shape().to_vec();
    shape[ax] = 0;
    for (i, a) in arrays.iter().enumerate() {
        let same = a.ndim() == nd
            && a.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(k, (x, y))| k == ax || x == y);
        if !same {
            return Err(Error::InvalidShape {
                op: "concatenate",
                detail: format!(
                    "array {i} has shape {:?} but array 0 has shape {:?}: along every axis but \
                     {ax} the extents must be equal",
                    a.shape(),
                    first.shape()
                ),
            });
        }
        if a.device() != first.device() {
            return Err(Error::DeviceMismatch {
                context: format!("concatenate (array {i})"),
                expected: first.device().ordinal(),
                found: a.device().ordinal(),
            });
        }
        shape[ax] += a.shape()[ax];
    }
    let out = Array::<T>::empty_on(shape, &Stream::current_for(first.device())?)?;
    let mut at = 0usize;
    for a in arrays {
        let n = a.shape()[ax];
        if n > 0 && !a.is_empty() {
            let s = Slice::new(Some(at as isize), Some((at + n) as isize), 1);
            out.slice(ax, s)?.assign(a)?;
        }
        at += n;
    }
    Ok(out)
}

/// The arrays, all of one shape, joined along a new axis `axis` (in `-(ndim+1)..=ndim`) of the
/// result (NumPy's `stack`).
pub fn stack<T: Scalar>(arrays: &[&Array<T>], axis: isize) -> Result<Array<T>> {
    let Some(first) = arrays.first() else {
        return Err(Error::InvalidShape {
            op: "stack",
            detail: "no arrays to stack: pass at least one".into(),
        });
    };
    if let Some((i, a)) = arrays
        .iter()
        .enumerate()
        .find(|(_, a)| a.shape() != first.shape())
    {
        return Err(Error::InvalidShape {
            op: "stack",
            detail: format!(
                "all arrays must have the same shape: array {i} has {:?}, array 0 {:?}",
                a.shape(),
                first.shape()
            ),
        });
    }
    let ax = normalize_axis(axis, first.ndim() + 1)?;
    let expanded = arrays
        .iter()
        .map(|a| a.expand_dims(ax))
        .collect::<Result<Vec<_>>>()?;
    concatenate(&expanded.iter().collect::<Vec<_>>(), ax as isize)
}

/// The arrays joined horizontally: along axis 0 when all are 1-d (or 0-d, made 1-d), else along
/// axis 1 (NumPy's `hstack`).
pub fn hstack<T: Scalar>(arrays: &[&Array<T>]) -> Result<Array<T>> {
    let v: Vec<Array<T>> = arrays.iter().map(|a| a.atleast_1d()).collect();
    let axis = if v.iter().all(|a| a.ndim() == 1) {
        0
    } else {
        1
    };
    concatenate(&v.iter().collect::<Vec<_>>(), axis)
}

/// The arrays joined vertically: each made at least 2-d (`[n]` as `[1, n]`), joined along axis 0
/// (NumPy's `vstack`, also `row_stack`).
pub fn vstack<T: Scalar>(arrays: &[&Array<T>]) -> Result<Array<T>> {
    let v: Vec<Array<T>> = arrays.iter().map(|a| a.atleast_2d()).collect();
    concatenate(&v.iter().collect::<Vec<_>>(), 0)
}

/// The arrays joined along the third axis: each made at least 3-d (`[n]` as `[1, n, 1]`,
/// `[m, n]` as `[m, n, 1]`), joined along axis 2 (NumPy's `dstack`).
pub fn dstack<T: Scalar>(arrays: &[&Array<T>]) -> Result<Array<T>> {
    let v: Vec<Array<T>> = arrays.iter().map(|a| a.atleast_3d()).collect();
    concatenate(&v.iter().collect::<Vec<_>>(), 2)
}

/// 1-d arrays as the columns of a 2-d array (`[n]` as `[n, 1]`), other arrays made at least 2-d,
/// joined along axis 1 (NumPy's `column_stack`).
pub fn column_stack<T: Scalar>(arrays: &[&Array<T>]) -> Result<Array<T>> {
    let v = arrays
        .iter()
        .map(|a| {
            if a.ndim() < 2 {
                a.atleast_1d().expand_dims(1)
            } else {
                Ok((*a).clone())
            }
        })
        .collect::<Result<Vec<_>>>()?;
    concatenate(&v.iter().collect::<Vec<_>>(), 1)
}
