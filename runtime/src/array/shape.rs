//! Pure shape and stride arithmetic (no device): element counts, C/F strides, contiguity,
//! NumPy broadcasting, reshape without copy, Python slicing, axis normalisation.
//!
//! Strides are in **elements** and may be 0 (broadcast) or negative (reversed views). An
//! `offset` is the element index, within the buffer, of the array's first logical element.

use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use crate::error::{Error, Result};

/// The number of elements of `shape` (1 for a 0-d shape); an error on overflow.
pub fn size_of(shape: &[usize]) -> Result<usize> {
    let mut n: usize = 1;
    for &d in shape {
        n = n.checked_mul(d).ok_or_else(|| Error::InvalidShape {
            op: "array creation",
            detail: format!("the element count of {shape:?} overflows usize"),
        })?;
    }
    // Element offsets are `isize`: keep counts within it.
    if n > isize::MAX as usize {
        return Err(Error::InvalidShape {
            op: "array creation",
            detail: format!("{shape:?} has more than isize::MAX elements"),
        });
    }
    Ok(n)
}

/// C-order (row-major) strides in elements.
pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s: isize = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s = s.wrapping_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Fortran-order (column-major) strides in elements.
pub fn f_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s: isize = 1;
    for i in 0..shape.len() {
        strides[i] = s;
        s = s.wrapping_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Whether the layout is C-contiguous: elements in C order are adjacent in memory. Strides of
/// extent-1 axes do not matter; an empty array is contiguous (NumPy's rules).
pub fn is_c_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected: isize = 1;
    for i in (0..shape.len()).rev() {
        if shape[i] != 1 {
            if strides[i] != expected {
                return false;
            }
            expected *= shape[i] as isize;
        }
    }
    true
}

/// Whether the layout is Fortran-contiguous (see [`is_c_contiguous`]).
pub fn is_f_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected: isize = 1;
    for i in 0..shape.len() {
        if shape[i] != 1 {
            if strides[i] != expected {
                return false;
            }
            expected *= shape[i] as isize;
        }
    }
    true
}

/// The smallest and largest element index reachable from `offset` through the layout, or
/// `None` for an empty array.
pub fn index_range(shape: &[usize], strides: &[isize], offset: isize) -> Option<(isize, isize)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (offset, offset);
    for (&d, &s) in shape.iter().zip(strides) {
        let span = (d as isize - 1) * s;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo, hi))
}

/// Calls `f` with the element index of every element, in C order.
pub fn for_each_index(shape: &[usize], strides: &[isize], offset: isize, mut f: impl FnMut(isize)) {
    if shape.contains(&0) {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f(offset);
        return;
    }
    let mut idx = vec![0usize; nd];
    let mut pos = offset;
    let last = nd - 1;
    loop {
        // Innermost axis as a plain loop.
        let (n, s) = (shape[last], strides[last]);
        let mut p = pos;
        for _ in 0..n {
            f(p);
            p += s;
        }
        // Carry into the outer axes.
        let mut ax = last;
        loop {
            if ax == 0 {
                return;
            }
            ax -= 1;
            idx[ax] += 1;
            pos += strides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            pos -= strides[ax] * shape[ax] as isize;
            idx[ax] = 0;
        }
    }
}

/// The broadcast shape of several shapes (NumPy rules: aligned at the last axis, each extent
/// equal or 1). The result has as many axes as the longest shape.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let nd = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; nd];
    for s in shapes {
        let pad = nd - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[pad + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(Error::Broadcast {
                    shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// Strides that view an array of `shape`/`strides` as `target` (which must be a broadcast of
/// it): new leading axes and stretched extent-1 axes get stride 0.
pub fn broadcast_strides(
    shape: &[usize],
    strides: &[isize],
    target: &[usize],
) -> Result<Vec<isize>> {
    let err = || Error::Broadcast {
        shapes: vec![shape.to_vec(), target.to_vec()],
    };
    if target.len() < shape.len() {
        return Err(err());
    }
    let pad = target.len() - shape.len();
    let mut out = vec![0isize; target.len()];
    for i in 0..shape.len() {
        let (d, t) = (shape[i], target[pad + i]);
        out[pad + i] = if d == t {
            strides[i]
        } else if d == 1 {
            0
        } else {
            return Err(err());
        };
    }
    Ok(out)
}

/// Resolves a shape with at most one `-1` (inferred from `size`) into extents.
pub fn infer_shape(size: usize, shape: &[isize]) -> Result<Vec<usize>> {
    let bad = |detail: String| Error::InvalidShape {
        op: "reshape",
        detail,
    };
    let mut infer = None;
    let mut known: usize = 1;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if infer.replace(i).is_some() {
                return Err(bad(format!("{shape:?} has more than one -1")));
            }
        } else if d < 0 {
            return Err(bad(format!(
                "{shape:?} has a negative extent other than -1"
            )));
        } else {
            known = known
                .checked_mul(d as usize)
                .ok_or_else(|| bad(format!("the element count of {shape:?} overflows")))?;
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    match infer {
        Some(i) => {
            if known == 0 || size % known != 0 {
                return Err(bad(format!(
                    "cannot infer the -1 in {shape:?} for an array of {size} elements"
                )));
            }
            out[i] = size / known;
        }
        None => {
            if known != size {
                return Err(bad(format!(
                    "an array of {size} elements cannot have shape {shape:?} ({known} elements)"
                )));
            }
        }
    }
    Ok(out)
}

/// Strides for viewing `shape`/`strides` as `new_shape` (same element count) in C order without
/// copying, or `None` when the layout does not allow it (NumPy's no-copy reshape).
pub fn reshape_strides(
    shape: &[usize],
    strides: &[isize],
    new_shape: &[usize],
) -> Option<Vec<isize>> {
    let size: usize = shape.iter().product();
    if size != new_shape.iter().product::<usize>() {
        return None;
    }
    if size == 0 || size == 1 {
        // Any strides work; use C strides.
        return Some(c_strides(new_shape));
    }
    // Drop extent-1 axes of the source; they never constrain the layout.
    let (os, ost): (Vec<usize>, Vec<isize>) = shape
        .iter()
        .zip(strides)
        .filter(|(d, _)| **d != 1)
        .map(|(&d, &s)| (d, s))
        .unzip();
    let mut out = vec![0isize; new_shape.len()];
    let (mut oi, mut oj) = (0usize, 1usize);
    let (mut ni, mut nj) = (0usize, 1usize);
    let (olen, nlen) = (os.len(), new_shape.len());
    while ni < nlen && oi < olen {
        let mut np = new_shape[ni];
        let mut op = os[oi];
        // Group axes until the products match.
        while np != op {
            if np < op {
                np *= *new_shape.get(nj)?;
                nj += 1;
            } else {
                op *= *os.get(oj)?;
                oj += 1;
            }
        }
        // The source axes oi..oj must be mergeable (C-contiguous among themselves).
        for k in oi..oj - 1 {
            if ost[k] != ost[k + 1] * os[k + 1] as isize {
                return None;
            }
        }
        // Strides of the new axes ni..nj, from the innermost source stride outwards.
        out[nj - 1] = ost[oj - 1];
        for k in (ni + 1..nj).rev() {
            out[k - 1] = out[k] * new_shape[k] as isize;
        }
        ni = nj;
        nj += 1;
        oi = oj;
        oj += 1;
    }
    // Trailing extent-1 axes of the new shape: any stride; use the last one's convention.
    let last = if ni > 0 { out[ni - 1] } else { 1 };
    for s in out.iter_mut().skip(ni) {
        *s = last;
    }
    Some(out)
}

/// An axis given as `isize` (negative counts from the end) turned into an index.
pub fn normalize_axis(axis: isize, ndim: usize) -> Result<usize> {
    let nd = ndim as isize;
    let a = if axis < 0 { axis + nd } else { axis };
    if a < 0 || a >= nd {
        return Err(Error::InvalidAxis { axis, ndim });
    }
    Ok(a as usize)
}

/// Checks that `axes` is a permutation of `0..ndim`.
pub fn check_permutation(axes: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    let bad = || Error::InvalidShape {
        op: "permute",
        detail: format!("{axes:?} is not a permutation of the {ndim} axes 0..{ndim}"),
    };
    if axes.len() != ndim {
        return Err(bad());
    }
    for &a in axes {
        if a >= ndim || std::mem::replace(&mut seen[a], true) {
            return Err(bad());
        }
    }
    Ok(())
}

/// The shape, strides (in elements) and offset (element index of the first element) of an
/// array; every view operation of `Array` is the same operation on its layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The extent of each axis.
    pub shape: Vec<usize>,
    /// The step of each axis, in elements (negative walks backwards).
    pub strides: Vec<isize>,
    /// The element index of the first element within the buffer.
    pub offset: usize,
}

impl Layout {
    /// A layout from its parts (as many strides as extents).
    pub fn new(shape: Vec<usize>, strides: Vec<isize>, offset: usize) -> Layout {
        debug_assert_eq!(shape.len(), strides.len());
        Layout {
            shape,
            strides,
            offset,
        }
    }

    /// The C-contiguous layout of `shape` at offset 0.
    pub fn c_contiguous(shape: Vec<usize>) -> Layout {
        let strides = c_strides(&shape);
        Layout::new(shape, strides, 0)
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it has no element (some extent is 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are in row-major order with no gaps.
    pub fn is_c_contiguous(&self) -> bool {
        is_c_contiguous(&self.shape, &self.strides)
    }

    /// Whether the elements are in column-major order with no gaps.
    pub fn is_f_contiguous(&self) -> bool {
        is_f_contiguous(&self.shape, &self.strides)
    }

    /// The smallest and largest element index reached, `None` when empty.
    pub fn index_range(&self) -> Option<(usize, usize)> {
        index_range(&self.shape, &self.strides, self.offset as isize)
            .map(|(lo, hi)| (lo.max(0) as usize, hi.max(0) as usize))
    }

    /// The elements in C order, from `data` holding the buffer's elements starting at element
    /// index `data_start` (which must cover [`Layout::index_range`]).
    pub fn gather<T: Copy>(&self, data: &[T], data_start: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        let base = self.offset as isize - data_start as isize;
        for_each_index(&self.shape, &self.strides, base, |i| {
            out.push(data[i as usize])
        });
        out
    }

    fn check_axis(&self, axis: usize) -> Result<usize> {
        if axis >= self.ndim() {
            return Err(Error::InvalidAxis {
                axis: axis as isize,
                ndim: self.ndim(),
            });
        }
        Ok(axis)
    }

    /// See `Array::reshape`.
    pub fn reshape(&self, new: &[usize]) -> Result<Layout> {
        let n = size_of(new)?;
        if n != self.len() {
            return Err(Error::InvalidShape {
                op: "reshape",
                detail: format!(
                    "an array of shape {:?} ({} elements) cannot be reshaped to {new:?} ({n} elements)",
                    self.shape,
                    self.len()
                ),
            });
        }
        match reshape_strides(&self.shape, &self.strides, new) {
            Some(strides) => Ok(Layout::new(new.to_vec(), strides, self.offset)),
            None => Err(Error::NeedsCopy {
                op: "reshape",
                detail: format!(
                    "shape {:?} with strides {:?} cannot be viewed as {new:?}",
                    self.shape, self.strides
                ),
            }),
        }
    }

    /// See `Array::transpose`.
    pub fn transpose(&self) -> Layout {
        let mut l = self.clone();
        l.shape.reverse();
        l.strides.reverse();
        l
    }

    /// See `Array::permute`.
    pub fn permute(&self, axes: &[usize]) -> Result<Layout> {
        check_permutation(axes, self.ndim())?;
        Ok(Layout::new(
            axes.iter().map(|&a| self.shape[a]).collect(),
            axes.iter().map(|&a| self.strides[a]).collect(),
            self.offset,
        ))
    }

    /// See `Array::swap_axes`.
    pub fn swap_axes(&self, a: usize, b: usize) -> Result<Layout> {
        self.check_axis(a)?;
        self.check_axis(b)?;
        let mut l = self.clone();
        l.shape.swap(a, b);
        l.strides.swap(a, b);
        Ok(l)
    }

    /// See `Array::slice`.
    pub fn slice(&self, axis: usize, s: Slice) -> Result<Layout> {
        let axis = self.check_axis(axis)?;
        let (start, count, step) = s.indices(self.shape[axis])?;
        let mut l = self.clone();
        if count > 0 {
            l.offset = (self.offset as isize + start as isize * self.strides[axis]) as usize;
        }
        l.shape[axis] = count;
        l.strides[axis] = self.strides[axis] * step;
        Ok(l)
    }

    /// See `Array::slices`.
    pub fn slices(&self, s: &[Slice]) -> Result<Layout> {
        if s.len() > self.ndim() {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "{} slices given for an array with {} dimension(s)",
                    s.len(),
                    self.ndim()
                ),
            });
        }
        let mut l = self.clone();
        for (axis, &sl) in s.iter().enumerate() {
            l = l.slice(axis, sl)?;
        }
        Ok(l)
    }

    /// See `Array::index_axis`.
    pub fn index_axis(&self, axis: usize, index: isize) -> Result<Layout> {
        let axis = self.check_axis(axis)?;
        let n = self.shape[axis] as isize;
        let i = if index < 0 { index + n } else { index };
        if i < 0 || i >= n {
            return Err(Error::InvalidSlice {
                detail: format!("index {index} is out of range for axis {axis} of extent {n}"),
            });
        }
        let mut l = self.clone();
        l.offset = (self.offset as isize + i * self.strides[axis]) as usize;
        l.shape.remove(axis);
        l.strides.remove(axis);
        Ok(l)
    }

    /// See `Array::broadcast_to`.
    pub fn broadcast_to(&self, target: &[usize]) -> Result<Layout> {
        size_of(target)?;
        let strides = broadcast_strides(&self.shape, &self.strides, target)?;
        Ok(Layout::new(target.to_vec(), strides, self.offset))
    }

    /// See `Array::squeeze`.
    pub fn squeeze(&self) -> Layout {
        let (shape, strides) = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(d, _)| **d != 1)
            .map(|(&d, &s)| (d, s))
            .unzip();
        Layout::new(shape, strides, self.offset)
    }

    /// See `Array::squeeze_axis`.
    pub fn squeeze_axis(&self, axis: usize) -> Result<Layout> {
        let axis = self.check_axis(axis)?;
        if self.shape[axis] != 1 {
            return Err(Error::InvalidShape {
                op: "squeeze_axis",
                detail: format!(
                    "axis {axis} has extent {}, only extent-1 axes can be removed",
                    self.shape[axis]
                ),
            });
        }
        self.index_axis(axis, 0)
    }

    /// See `Array::expand_dims`.
    pub fn expand_dims(&self, axis: usize) -> Result<Layout> {
        if axis > self.ndim() {
            return Err(Error::InvalidAxis {
                axis: axis as isize,
                ndim: self.ndim() + 1,
            });
        }
        let mut l = self.clone();
        // The stride of an extent-1 axis is never used; pick the contiguous one.
        let stride = if axis < self.ndim() {
            self.strides[axis] * self.shape[axis] as isize
        } else {
            1
        };
        l.shape.insert(axis, 1);
        l.strides.insert(axis, stride);
        Ok(l)
    }
}

/// A Python slice `start:stop:step` of one axis. `None` bounds mean "from the beginning/to the
/// end" in the step's direction; negative bounds count from the end; out-of-range bounds are
/// clamped (Python's rules). The step must not be 0; a negative step walks backwards.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// The first index (inclusive); `None`: the start in the step's direction.
    pub start: Option<isize>,
    /// The last index (exclusive); `None`: the end in the step's direction.
    pub stop: Option<isize>,
    /// The step between indices, not 0.
    pub step: isize,
}

impl Slice {
    /// `start:stop:step`.
    pub fn new(start: Option<isize>, stop: Option<isize>, step: isize) -> Slice {
        Slice { start, stop, step }
    }

    /// `:` (the whole axis).
    pub fn full() -> Slice {
        Slice::new(None, None, 1)
    }

    /// `::-1` (the whole axis reversed).
    pub fn rev() -> Slice {
        Slice::new(None, None, -1)
    }

    /// The same bounds with another step (`s.step_by(2)` is `start:stop:2`).
    pub fn step_by(self, step: isize) -> Slice {
        Slice { step, ..self }
    }

    /// `(start index, count, step)` for an axis of extent `len` (Python's `slice.indices`).
    pub fn indices(&self, len: usize) -> Result<(usize, usize, isize)> {
        let step = self.step;
        if step == 0 {
            return Err(Error::InvalidSlice {
                detail: "slice step cannot be zero".into(),
            });
        }
        let n = len as isize;
        let clamp = |v: isize, lo: isize, hi: isize| v.max(lo).min(hi);
        let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let norm = |v: Option<isize>, default: isize| match v {
            None => default,
            Some(v) if v < 0 => clamp(v + n, lo, hi),
            Some(v) => clamp(v, lo, hi),
        };
        let start = norm(self.start, if step > 0 { 0 } else { n - 1 });
        let stop = norm(self.stop, if step > 0 { n } else { -1 });
        let count = if step > 0 {
            if stop > start {
                (stop - start - 1) / step + 1
            } else {
                0
            }
        } else if start > stop {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        };
        // With count 0 the start is irrelevant; keep it inside the axis.
        let start = if count == 0 { 0 } else { start };
        Ok((start as usize, count as usize, step))
    }
}

impl fmt::Debug for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = |v: Option<isize>| v.map(|v| v.to_string()).unwrap_or_default();
        write!(f, "{}:{}:{}", b(self.start), b(self.stop), self.step)
    }
}

impl From<Range<isize>> for Slice {
    fn from(r: Range<isize>) -> Slice {
        Slice::new(Some(r.start), Some(r.end), 1)
    }
}

impl From<RangeInclusive<isize>> for Slice {
    fn from(r: RangeInclusive<isize>) -> Slice {
        let end = *r.end();
        // `a..=-1` means "through the last element".
        let stop = if end == -1 { None } else { Some(end + 1) };
        Slice::new(Some(*r.start()), stop, 1)
    }
}

impl From<RangeFrom<isize>> for Slice {
    fn from(r: RangeFrom<isize>) -> Slice {
        Slice::new(Some(r.start), None, 1)
    }
}

impl From<RangeTo<isize>> for Slice {
    fn from(r: RangeTo<isize>) -> Slice {
        Slice::new(None, Some(r.end), 1)
    }
}

impl From<RangeToInclusive<isize>> for Slice {
    fn from(r: RangeToInclusive<isize>) -> Slice {
        let stop = if r.end == -1 { None } else { Some(r.end + 1) };
        Slice::new(None, stop, 1)
    }
}

impl From<RangeFull> for Slice {
    fn from(_: RangeFull) -> Slice {
        Slice::full()
    }
}

/// A single index `i` as the slice `i:i+1` (keeps the axis; use `index_axis` to drop it).
impl From<isize> for Slice {
    fn from(i: isize) -> Slice {
        let stop = if i == -1 { None } else { Some(i + 1) };
        Slice::new(Some(i), stop, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt as _;

    /// Host model of a strided view, for checking the arithmetic against plain indexing.
    fn gather(data: &[i64], shape: &[usize], strides: &[isize], offset: isize) -> Vec<i64> {
        let mut v = Vec::new();
        for_each_index(shape, strides, offset, |i| v.push(data[i as usize]));
        v
    }

    #[test]
    fn sizes() {
        assert_eq!(size_of(&[]).unwrap(), 1);
        assert_eq!(size_of(&[2, 3, 4]).unwrap(), 24);
        assert_eq!(size_of(&[2, 0, 4]).unwrap(), 0);
        assert!(size_of(&[usize::MAX, 2]).is_err());
        assert!(size_of(&[1 << 40, 1 << 40]).is_err());
    }

    #[test]
    fn strides() {
        assert_eq!(c_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(f_strides(&[2, 3, 4]), vec![1, 2, 6]);
        assert_eq!(c_strides(&[]), Vec::<isize>::new());
        assert_eq!(c_strides(&[3, 0, 2]), vec![2, 2, 1]);
    }

    #[test]
    fn contiguity() {
        assert!(is_c_contiguous(&[2, 3], &[3, 1]));
        assert!(!is_f_contiguous(&[2, 3], &[3, 1]));
        assert!(is_f_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_c_contiguous(&[2, 3], &[1, 2]));
        // extent-1 axes: any stride
        assert!(is_c_contiguous(&[1, 3], &[99, 1]));
        assert!(is_c_contiguous(&[3, 1], &[1, 7]));
        assert!(is_f_contiguous(&[3, 1], &[1, 7]));
        // vectors are both
        assert!(is_c_contiguous(&[5], &[1]) && is_f_contiguous(&[5], &[1]));
        // broadcast, reversed, strided: neither
        assert!(!is_c_contiguous(&[5], &[0]));
        assert!(!is_c_contiguous(&[5], &[-1]));
        assert!(!is_c_contiguous(&[5], &[2]));
        // empty and 0-d
        assert!(is_c_contiguous(&[0, 3], &[0, 7]));
        assert!(is_c_contiguous(&[], &[]) && is_f_contiguous(&[], &[]));
    }

    #[test]
    fn ranges_and_iteration() {
        assert_eq!(index_range(&[2, 3], &[3, 1], 0), Some((0, 5)));
        assert_eq!(index_range(&[2, 3], &[-3, 1], 3), Some((0, 5)));
        assert_eq!(index_range(&[4], &[0], 2), Some((2, 2)));
        assert_eq!(index_range(&[4, 0], &[1, 1], 2), None);
        assert_eq!(index_range(&[], &[], 7), Some((7, 7)));

        let data: Vec<i64> = (0..12).collect();
        // transpose of 3x4
        let t = gather(&data, &[4, 3], &[1, 4], 0);
        assert_eq!(t, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        // reversed rows
        let r = gather(&data, &[3, 4], &[-4, 1], 8);
        assert_eq!(r, vec![8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3]);
        // broadcast
        assert_eq!(gather(&data, &[2, 3], &[0, 1], 1), vec![1, 2, 3, 1, 2, 3]);
        // 0-d
        assert_eq!(gather(&data, &[], &[], 5), vec![5]);
        // empty
        assert!(gather(&data, &[3, 0], &[1, 1], 0).is_empty());
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[&[2, 5], &[5]]).unwrap(), vec![2, 5]);
        assert_eq!(
            broadcast_shapes(&[&[8, 1, 6, 1], &[7, 1, 5]]).unwrap(),
            vec![8, 7, 6, 5]
        );
        assert_eq!(broadcast_shapes(&[&[], &[3]]).unwrap(), vec![3]);
        assert_eq!(broadcast_shapes(&[&[0], &[1]]).unwrap(), vec![0]);
        assert_eq!(broadcast_shapes(&[]).unwrap(), Vec::<usize>::new());
        assert_eq!(
            broadcast_shapes(&[&[3, 1], &[1, 4], &[4]]).unwrap(),
            vec![3, 4]
        );
        let e = broadcast_shapes(&[&[2, 3], &[4]]).unwrap_err();
        assert!(matches!(e, Error::Broadcast { .. }), "{e}");
        assert!(broadcast_shapes(&[&[0], &[2]]).is_err());

        assert_eq!(broadcast_strides(&[5], &[1], &[2, 5]).unwrap(), vec![0, 1]);
        assert_eq!(
            broadcast_strides(&[3, 1], &[1, 1], &[3, 4]).unwrap(),
            vec![1, 0]
        );
        assert_eq!(broadcast_strides(&[3], &[-2], &[3]).unwrap(), vec![-2]);
        assert!(broadcast_strides(&[3], &[1], &[4]).is_err());
        assert!(broadcast_strides(&[2, 3], &[3, 1], &[3]).is_err());
    }

    #[test]
    fn inference() {
        assert_eq!(infer_shape(12, &[3, -1]).unwrap(), vec![3, 4]);
        assert_eq!(infer_shape(12, &[-1]).unwrap(), vec![12]);
        assert_eq!(infer_shape(12, &[2, 6]).unwrap(), vec![2, 6]);
        assert_eq!(infer_shape(0, &[0, -1]).map_err(|_| ()), Err(()));
        assert_eq!(infer_shape(0, &[3, -1]).unwrap(), vec![3, 0]);
        assert!(infer_shape(12, &[5, -1]).is_err());
        assert!(infer_shape(12, &[-1, -1]).is_err());
        assert!(infer_shape(12, &[-2, 6]).is_err());
        assert!(infer_shape(12, &[5, 2]).is_err());
    }

    /// Reshape checked against the semantic definition: the C-order elements are the same.
    fn check_reshape(shape: &[usize], strides: &[isize], offset: isize, new: &[usize]) -> bool {
        let hi = index_range(shape, strides, offset).map_or(0, |r| r.1);
        let data: Vec<i64> = (0..=hi.max(0) as i64 + 1).collect();
        match reshape_strides(shape, strides, new) {
            None => false,
            Some(ns) => {
                assert_eq!(ns.len(), new.len());
                let a = gather(&data, shape, strides, offset);
                let b = gather(&data, new, &ns, offset);
                assert_eq!(a, b, "{shape:?}/{strides:?} -> {new:?}/{ns:?}");
                true
            }
        }
    }

    #[test]
    fn reshapes() {
        // contiguous: always
        assert!(check_reshape(&[2, 3, 4], &[12, 4, 1], 0, &[6, 4]));
        assert!(check_reshape(&[2, 3, 4], &[12, 4, 1], 0, &[24]));
        assert!(check_reshape(&[24], &[1], 0, &[2, 3, 4]));
        assert!(check_reshape(&[2, 3, 4], &[12, 4, 1], 0, &[4, 1, 6, 1]));
        assert!(check_reshape(&[1, 2, 1, 3], &[0, 3, 9, 1], 0, &[6]));
        // strided outer axis: split/merge allowed only within contiguous groups
        assert!(check_reshape(&[3, 4], &[8, 1], 0, &[3, 2, 2]));
        assert!(!check_reshape(&[3, 4], &[8, 1], 0, &[12]));
        assert!(check_reshape(&[4], &[2], 0, &[2, 2]));
        // transposed: cannot flatten
        assert!(!check_reshape(&[4, 3], &[1, 4], 0, &[12]));
        assert!(check_reshape(&[4, 3], &[1, 4], 0, &[2, 2, 3]));
        // reversed
        assert!(check_reshape(&[6], &[-1], 5, &[2, 3]));
        assert!(!check_reshape(&[2, 3], &[3, -1], 2, &[6]));
        // broadcast (stride 0): splitting fine, merging not
        assert!(check_reshape(&[6], &[0], 0, &[2, 3]));
        assert!(!check_reshape(&[2, 3], &[0, 1], 0, &[6]));
        // 0-d and size-1 and empty
        assert!(check_reshape(&[], &[], 3, &[1, 1]));
        assert!(check_reshape(&[1, 1], &[5, 5], 3, &[]));
        assert_eq!(
            reshape_strides(&[0, 3], &[3, 1], &[3, 0]),
            Some(c_strides(&[3, 0]))
        );
        // different counts
        assert_eq!(reshape_strides(&[2, 3], &[3, 1], &[5]), None);
    }

    /// Random layouts (views of a 200-element buffer) reshaped into random factorisations (a
    /// fresh seed each run, printed; `CUPRUM_TEST_SEED` replays one).
    #[test]
    fn reshape_fuzz() {
        let mut rng = crate::test_support::seeded();
        let mut rnd = |n: u64| rng.random_range(0..n);
        let mut ok = 0;
        for _ in 0..3000 {
            let nd = 1 + rnd(4) as usize;
            let shape: Vec<usize> = (0..nd).map(|_| 1 + rnd(3) as usize).collect();
            // C strides, then random perturbations: transpose, negate, scale
            let mut strides = c_strides(&shape);
            if rnd(3) == 0 {
                strides.reverse();
            }
            for s in strides.iter_mut() {
                match rnd(5) {
                    0 => *s = -*s,
                    1 => *s *= 2,
                    _ => {}
                }
            }
            let offset = index_range(&shape, &strides, 0).map_or(0, |r| -r.0);
            let total: usize = shape.iter().product();
            // random factorisation of total
            let mut rest = total;
            let mut new = Vec::new();
            while rest > 1 {
                let divs: Vec<usize> = (2..=rest).filter(|d| rest.is_multiple_of(*d)).collect();
                let d = divs[rnd(divs.len() as u64) as usize];
                new.push(d);
                rest /= d;
                if rnd(3) == 0 {
                    new.push(1);
                }
            }
            if check_reshape(&shape, &strides, offset, &new) {
                ok += 1;
            }
            // Contiguous layouts must always reshape.
            let cs = c_strides(&shape);
            assert!(check_reshape(&shape, &cs, 0, &new));
        }
        assert!(ok > 100, "{ok}");
    }

    #[test]
    fn axes() {
        assert_eq!(normalize_axis(-1, 3).unwrap(), 2);
        assert_eq!(normalize_axis(0, 3).unwrap(), 0);
        assert!(matches!(
            normalize_axis(3, 3),
            Err(Error::InvalidAxis { axis: 3, ndim: 3 })
        ));
        assert!(normalize_axis(-4, 3).is_err());
        assert!(normalize_axis(0, 0).is_err());
        assert!(check_permutation(&[2, 0, 1], 3).is_ok());
        assert!(check_permutation(&[0, 0, 1], 3).is_err());
        assert!(check_permutation(&[0, 1], 3).is_err());
        assert!(check_permutation(&[0, 1, 3], 3).is_err());
    }

    /// Python's `range(len)[slice]` as the reference.
    fn py(len: usize, s: Slice) -> Vec<usize> {
        let (start, count, step) = s.indices(len).unwrap();
        (0..count)
            .map(|k| (start as isize + k as isize * step) as usize)
            .collect()
    }

    #[test]
    fn slices() {
        let s = |a, b, c| Slice::new(a, b, c);
        assert_eq!(py(5, s(None, None, 1)), vec![0, 1, 2, 3, 4]);
        assert_eq!(py(5, s(None, None, -1)), vec![4, 3, 2, 1, 0]);
        assert_eq!(py(5, s(Some(1), Some(4), 2)), vec![1, 3]);
        assert_eq!(py(5, s(Some(-2), None, 1)), vec![3, 4]);
        assert_eq!(py(5, s(Some(4), Some(-6), -1)), vec![4, 3, 2, 1, 0]);
        assert_eq!(py(5, s(Some(4), Some(0), -2)), vec![4, 2]);
        assert_eq!(py(5, s(Some(10), None, -1)), vec![4, 3, 2, 1, 0]);
        assert_eq!(py(5, s(Some(-10), Some(10), 3)), vec![0, 3]);
        assert_eq!(py(5, s(Some(3), Some(1), 1)), Vec::<usize>::new());
        assert_eq!(py(5, s(Some(1), Some(3), -1)), Vec::<usize>::new());
        assert_eq!(py(0, s(None, None, -1)), Vec::<usize>::new());
        assert_eq!(py(5, s(None, Some(-1), 1)), vec![0, 1, 2, 3]);
        assert!(s(None, None, 0).indices(5).is_err());
        // conversions
        assert_eq!(py(5, (1..3).into()), vec![1, 2]);
        assert_eq!(py(5, (1..=3).into()), vec![1, 2, 3]);
        assert_eq!(py(5, (2..).into()), vec![2, 3, 4]);
        assert_eq!(py(5, (..2).into()), vec![0, 1]);
        assert_eq!(py(5, (..=-1).into()), vec![0, 1, 2, 3, 4]);
        assert_eq!(py(5, (..).into()), vec![0, 1, 2, 3, 4]);
        assert_eq!(py(5, Slice::from(-1)), vec![4]);
        assert_eq!(py(5, Slice::from(-3..=-1)), vec![2, 3, 4]);
        assert_eq!(py(6, Slice::rev().step_by(-2)), vec![5, 3, 1]);
        assert_eq!(format!("{:?}", s(Some(1), None, -1)), "1::-1");
    }

    /// `range(len)[start:stop:step]` straight from the Python docs: normalise, clamp, walk.
    fn python_slice(
        len: isize,
        start: Option<isize>,
        stop: Option<isize>,
        step: isize,
    ) -> Vec<usize> {
        let adj = |v: isize| if v < 0 { v + len } else { v };
        let mut out = Vec::new();
        if step > 0 {
            let a = start.map(adj).unwrap_or(0).clamp(0, len);
            let b = stop.map(adj).unwrap_or(len).clamp(0, len);
            let mut i = a;
            while i < b {
                out.push(i as usize);
                i += step;
            }
        } else {
            let a = start.map(adj).unwrap_or(len - 1).clamp(-1, len - 1);
            let b = stop.map(adj).unwrap_or(-1).clamp(-1, len - 1);
            let mut i = a;
            while i > b {
                out.push(i as usize);
                i += step;
            }
        }
        out
    }

    /// Exhaustive check of `indices` against a direct simulation of Python's semantics.
    #[test]
    fn slice_exhaustive() {
        let bounds: Vec<Option<isize>> = std::iter::once(None).chain((-8..=8).map(Some)).collect();
        for len in 0..6isize {
            for &a in &bounds {
                for &b in &bounds {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let got = py(len as usize, Slice::new(a, b, step));
                        assert_eq!(
                            got,
                            python_slice(len, a, b, step),
                            "len {len} {a:?}:{b:?}:{step}"
                        );
                    }
                }
            }
        }
    }

    /// A host n-d array model: C-order data of `shape`, for checking layouts by value.
    fn host(shape: &[usize]) -> (Vec<i64>, Layout) {
        let n: usize = shape.iter().product();
        (
            (0..n as i64).collect(),
            Layout::c_contiguous(shape.to_vec()),
        )
    }

    fn vals(data: &[i64], l: &Layout) -> Vec<i64> {
        l.gather(data, 0)
    }

    #[test]
    fn layout_views() {
        let (d, a) = host(&[2, 3, 4]);
        // transpose: element [i,j,k] of a == element [k,j,i] of a.T
        let t = a.transpose();
        assert_eq!(t.shape, vec![4, 3, 2]);
        assert!(!t.is_c_contiguous() && t.is_f_contiguous());
        let tv = vals(&d, &t);
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(tv[k * 6 + j * 2 + i], d[i * 12 + j * 4 + k]);
                }
            }
        }
        // permute
        let p = a.permute(&[1, 2, 0]).unwrap();
        assert_eq!(p.shape, vec![3, 4, 2]);
        assert_eq!(vals(&d, &p)[..4], [0, 12, 1, 13]);
        assert!(a.permute(&[0, 1]).is_err());
        assert_eq!(a.swap_axes(0, 2).unwrap(), a.transpose());
        assert!(a.swap_axes(0, 3).is_err());

        // slicing with negative steps: a[::-1, 1:, ::-2]
        let s = a
            .slices(&[Slice::rev(), (1..).into(), Slice::rev().step_by(-2)])
            .unwrap();
        assert_eq!(s.shape, vec![2, 2, 2]);
        assert_eq!(vals(&d, &s), vec![19, 17, 23, 21, 7, 5, 11, 9]);
        assert!(a.slices(&[Slice::full(); 4]).is_err());
        assert!(a.slice(3, Slice::full()).is_err());
        assert!(a.slice(0, Slice::new(None, None, 0)).is_err());
        // empty slice
        let e = a.slice(1, (2..2).into()).unwrap();
        assert_eq!(e.shape, vec![2, 0, 4]);
        assert!(vals(&d, &e).is_empty() && e.index_range().is_none());

        // index_axis
        let r = a.index_axis(1, -1).unwrap();
        assert_eq!(r.shape, vec![2, 4]);
        assert_eq!(vals(&d, &r), vec![8, 9, 10, 11, 20, 21, 22, 23]);
        assert!(a.index_axis(1, 3).is_err() && a.index_axis(1, -4).is_err());

        // broadcast
        let (d1, v) = host(&[4]);
        let b = v.broadcast_to(&[3, 4]).unwrap();
        assert_eq!(b.strides, vec![0, 1]);
        assert_eq!(vals(&d1, &b), vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert!(v.broadcast_to(&[3, 5]).is_err());
        let col = v.expand_dims(1).unwrap();
        assert_eq!(col.shape, vec![4, 1]);
        let bc = col.broadcast_to(&[4, 2]).unwrap();
        assert_eq!(vals(&d1, &bc), vec![0, 0, 1, 1, 2, 2, 3, 3]);

        // squeeze and expand
        let (d2, x) = host(&[1, 3, 1]);
        assert_eq!(x.squeeze().shape, vec![3]);
        assert_eq!(x.squeeze_axis(2).unwrap().shape, vec![1, 3]);
        assert!(x.squeeze_axis(1).is_err());
        let ex = x.expand_dims(3).unwrap();
        assert_eq!(ex.shape, vec![1, 3, 1, 1]);
        assert!(ex.is_c_contiguous());
        assert_eq!(vals(&d2, &ex), vec![0, 1, 2]);
        assert!(x.expand_dims(4).is_err());

        // reshape of views
        let rv = a.slice(2, Slice::rev()).unwrap();
        assert!(matches!(rv.reshape(&[24]), Err(Error::NeedsCopy { .. })));
        let ok = rv.reshape(&[6, 4]).unwrap();
        assert_eq!(vals(&d, &ok), vals(&d, &rv));
        assert!(matches!(
            a.reshape(&[5, 5]),
            Err(Error::InvalidShape { .. })
        ));
        // the error says to copy
        let msg = a.transpose().reshape(&[24]).unwrap_err().to_string();
        assert!(msg.contains(".copy()"), "{msg}");
    }

    /// The host model of a view for [`layout_fuzz`]: its shape and its elements in C order,
    /// changed by each view operation through plain index arithmetic (no strides).
    #[derive(Debug)]
    struct Model {
        shape: Vec<usize>,
        vals: Vec<i64>,
    }

    impl Model {
        /// The model whose element at `new` index `idx` is this model's element at `old(idx)`.
        fn map(&self, shape: Vec<usize>, old: impl Fn(&[usize]) -> Vec<usize>) -> Model {
            let n: usize = shape.iter().product();
            let mut vals = Vec::with_capacity(n);
            for flat in 0..n {
                // C-order multi-index of `flat` in `shape`.
                let mut idx = vec![0; shape.len()];
                let mut rest = flat;
                for (i, &d) in idx.iter_mut().zip(&shape).rev() {
                    *i = rest % d;
                    rest /= d;
                }
                let o = old(&idx);
                let at = o.iter().zip(&self.shape).fold(0, |acc, (&i, &d)| {
                    assert!(i < d);
                    acc * d + i
                });
                vals.push(self.vals[at]);
            }
            Model { shape, vals }
        }
    }

    /// Random chains of view operations (reverse or step along an axis, permute, transpose, index
    /// an axis, reshape, expand, broadcast, squeeze) on layouts, each step compared element by
    /// element with [`Model`] (a fresh seed each run, printed; `CUPRUM_TEST_SEED` replays one).
    #[test]
    fn layout_fuzz() {
        let mut rng = crate::test_support::seeded();
        for _ in 0..500 {
            let nd = 1 + rng.random_range(0..3usize);
            let shape: Vec<usize> = (0..nd).map(|_| 1 + rng.random_range(0..4usize)).collect();
            let (d, mut l) = host(&shape);
            let mut m = Model {
                shape: shape.clone(),
                vals: d.clone(),
            };
            let mut ops = Vec::new();
            for _ in 0..6 {
                let nd = l.ndim();
                let op = rng.random_range(0..8u32);
                ops.push(op);
                match op {
                    // a slice `start:stop:step` of one axis (reversals among them)
                    0 | 1 if nd > 0 => {
                        let ax = rng.random_range(0..nd);
                        let n = l.shape[ax] as isize;
                        let r = n as i64 + 1;
                        let mut bound = || {
                            rng.random_bool(0.7)
                                .then(|| rng.random_range(-r..=r) as isize)
                        };
                        let (start, stop) = (bound(), bound());
                        let step = [-3, -2, -1, 1, 2, 3][rng.random_range(0..6)];
                        let sl = Slice::new(start, stop, step);
                        let picks = python_slice(n, start, stop, step);
                        l = l.slice(ax, sl).unwrap();
                        let mut shape = m.shape.clone();
                        shape[ax] = picks.len();
                        m = m.map(shape, |idx| {
                            let mut o = idx.to_vec();
                            o[ax] = picks[idx[ax]];
                            o
                        });
                    }
                    // a random permutation of the axes
                    2 => {
                        let mut axes: Vec<usize> = (0..nd).collect();
                        for i in (1..nd).rev() {
                            axes.swap(i, rng.random_range(0..=i));
                        }
                        l = l.permute(&axes).unwrap();
                        let shape = axes.iter().map(|&a| m.shape[a]).collect();
                        m = m.map(shape, |idx| {
                            let mut o = vec![0; nd];
                            for (k, &a) in axes.iter().enumerate() {
                                o[a] = idx[k];
                            }
                            o
                        });
                    }
                    // the transpose: axes reversed
                    3 => {
                        l = l.transpose();
                        let shape = m.shape.iter().rev().copied().collect();
                        m = m.map(shape, |idx| idx.iter().rev().copied().collect());
                    }
                    // one index along an axis (the axis goes away)
                    4 if nd > 1 && l.shape.iter().all(|&n| n > 0) => {
                        let ax = rng.random_range(0..nd);
                        let i = rng.random_range(0..l.shape[ax]);
                        l = l.index_axis(ax, i as isize).unwrap();
                        let mut shape = m.shape.clone();
                        shape.remove(ax);
                        m = m.map(shape, |idx| {
                            let mut o = idx.to_vec();
                            o.insert(ax, i);
                            o
                        });
                    }
                    // a reshape to a random factorisation: the same elements in C order; only a
                    // layout that is not C-contiguous may need a copy
                    5 => {
                        let mut rest = l.len();
                        let mut new = Vec::new();
                        while rest > 1 {
                            let divs: Vec<usize> =
                                (2..=rest).filter(|d| rest.is_multiple_of(*d)).collect();
                            let f = divs[rng.random_range(0..divs.len())];
                            new.push(f);
                            rest /= f;
                        }
                        if rest == 0 {
                            new = vec![0];
                        }
                        match l.reshape(&new) {
                            Ok(nl) => {
                                l = nl;
                                m = Model {
                                    shape: new,
                                    vals: m.vals,
                                };
                            }
                            Err(e) => {
                                assert!(matches!(e, Error::NeedsCopy { .. }), "{e}");
                                assert!(!l.is_c_contiguous(), "{l:?} -> {new:?}: {e}");
                            }
                        }
                    }
                    // a new extent-1 axis, then sometimes a broadcast of it
                    6 if nd < 4 => {
                        let ax = rng.random_range(0..=nd);
                        l = l.expand_dims(ax).unwrap();
                        let mut shape = m.shape.clone();
                        shape.insert(ax, 1);
                        m = m.map(shape, |idx| {
                            let mut o = idx.to_vec();
                            o.remove(ax);
                            o
                        });
                        if rng.random_bool(0.5) {
                            let k = rng.random_range(0..4usize);
                            let mut target = m.shape.clone();
                            target[ax] = k;
                            l = l.broadcast_to(&target).unwrap();
                            m = m.map(target, |idx| {
                                let mut o = idx.to_vec();
                                o[ax] = 0;
                                o
                            });
                        }
                    }
                    // every extent-1 axis removed
                    _ => {
                        l = l.squeeze();
                        let keep: Vec<usize> = (0..nd).filter(|&a| m.shape[a] != 1).collect();
                        let shape = keep.iter().map(|&a| m.shape[a]).collect();
                        m = m.map(shape, |idx| {
                            let mut o = vec![0; nd];
                            for (k, &a) in keep.iter().enumerate() {
                                o[a] = idx[k];
                            }
                            o
                        });
                    }
                }
                assert_eq!(l.shape, m.shape, "after ops {ops:?}: {l:?}");
                if let Some((lo, hi)) = l.index_range() {
                    assert!(hi < d.len(), "after ops {ops:?}: {l:?} reaches {lo}..={hi}");
                }
                assert_eq!(vals(&d, &l), m.vals, "after ops {ops:?}: {l:?}");
            }
        }
    }
}
