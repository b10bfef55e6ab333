//! Splitting an array into views along an axis: `split`, `array_split`, `hsplit`, `vsplit`,
//! `dsplit`. No copy: each part is a slice view of the input.

use super::Array;
use super::shape::{Slice, normalize_axis};
use crate::element::Element;
use crate::error::{Error, Result};

/// How to split an axis ([`split`], [`array_split`]): into `n` parts, or at the given indices
/// (Python's slice rules: negative counts from the end, out-of-range bounds give empty parts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sections {
    /// This many parts (for [`split`] of equal extent).
    Count(usize),
    /// The parts `[..i0]`, `[i0..i1]`, ..., `[ik..]`.
    At(Vec<isize>),
}

impl From<usize> for Sections {
    fn from(n: usize) -> Sections {
        Sections::Count(n)
    }
}

impl From<Vec<isize>> for Sections {
    fn from(v: Vec<isize>) -> Sections {
        Sections::At(v)
    }
}

impl From<&[isize]> for Sections {
    fn from(v: &[isize]) -> Sections {
        Sections::At(v.to_vec())
    }
}

impl<const N: usize> From<[isize; N]> for Sections {
    fn from(v: [isize; N]) -> Sections {
        Sections::At(v.to_vec())
    }
}

/// The parts of `a` along `axis` (NumPy's `array_split`): `Count(n)` gives `n` parts whose
/// extents differ by at most one (the first `len % n` one longer); `At(indices)` cuts at the
/// indices. Views. Errors: `Count(0)`, an axis out of range, a 0-d array.
pub fn array_split<T: Element>(
    a: &Array<T>,
    sections: impl Into<Sections>,
    axis: isize,
) -> Result<Vec<Array<T>>> {
    split_impl(a, sections.into(), axis, "array_split", false)
}

/// The parts of `a` along `axis` (NumPy's `split`): as [`array_split`], but `Count(n)` must
/// divide the axis's extent (else an error, and no part is made).
pub fn split<T: Element>(
    a: &Array<T>,
    sections: impl Into<Sections>,
    axis: isize,
) -> Result<Vec<Array<T>>> {
    split_impl(a, sections.into(), axis, "split", true)
}

/// [`split`] along axis 1, or along axis 0 for a 1-d array (NumPy's `hsplit`).
pub fn hsplit<T: Element>(a: &Array<T>, sections: impl Into<Sections>) -> Result<Vec<Array<T>>> {
    if a.ndim() == 0 {
        return Err(Error::InvalidShape {
            op: "hsplit",
            detail: "a 0-d array cannot be split".into(),
        });
    }
    split_impl(
        a,
        sections.into(),
        if a.ndim() > 1 { 1 } else { 0 },
        "hsplit",
        true,
    )
}

/// [`split`] along axis 0 of an array of at least 2 dimensions (NumPy's `vsplit`).
pub fn vsplit<T: Element>(a: &Array<T>, sections: impl Into<Sections>) -> Result<Vec<Array<T>>> {
    need_ndim(a, 2, "vsplit")?;
    split_impl(a, sections.into(), 0, "vsplit", true)
}

/// [`split`] along axis 2 of an array of at least 3 dimensions (NumPy's `dsplit`).
pub fn dsplit<T: Element>(a: &Array<T>, sections: impl Into<Sections>) -> Result<Vec<Array<T>>> {
    need_ndim(a, 3, "dsplit")?;
    split_impl(a, sections.into(), 2, "dsplit", true)
}

fn need_ndim<T: Element>(a: &Array<T>, n: usize, op: &'static str) -> Result<()> {
    if a.ndim() < n {
        return Err(Error::InvalidShape {
            op,
            detail: format!(
                "works on arrays of at least {n} dimensions, this one has shape {:?}",
                a.shape()
            ),
        });
    }
    Ok(())
}

fn split_impl<T: Element>(
    a: &Array<T>,
    sections: Sections,
    axis: isize,
    op: &'static str,
    equal: bool,
) -> Result<Vec<Array<T>>> {
    if a.ndim() == 0 {
        return Err(Error::InvalidShape {
            op,
            detail: "a 0-d array cannot be split".into(),
        });
    }
    let ax = normalize_axis(axis, a.ndim())?;
    let len = a.shape()[ax];
    let bounds: Vec<(Option<isize>, Option<isize>)> = match sections {
        Sections::Count(0) => {
            return Err(Error::InvalidShape {
                op,
                detail: "the number of sections must be at least 1".into(),
            });
        }
        Sections::Count(n) => {
            if equal && !len.is_multiple_of(n) {
                return Err(Error::InvalidShape {
                    op,
                    detail: format!(
                        "axis {ax} of extent {len} does not split into {n} equal parts: use `array_split`"
                    ),
                });
            }
            let (q, r) = (len / n, len % n);
            let mut at = 0usize;
            (0..n)
                .map(|i| {
                    let k = q + usize::from(i < r);
                    let b = (Some(at as isize), Some((at + k) as isize));
                    at += k;
                    b
                })
                .collect()
        }
        Sections::At(idx) => {
            let mut v = Vec::with_capacity(idx.len() + 1);
            let mut prev = None;
            for &i in &idx {
                v.push((prev, Some(i)));
                prev = Some(i);
            }
            v.push((prev, None));
            v
        }
    };
    bounds
        .into_iter()
        .map(|(start, stop)| {
            // `None` start is 0 and `None` stop the end: a forward slice.
            a.slice(ax, Slice::new(start.or(Some(0)), stop, 1))
        })
        .collect()
}
