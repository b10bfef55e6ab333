//! `nonzero`, `flatnonzero` and `argwhere` (NumPy's; `nonzero` is also the one-argument
//! `where(cond)`): the coordinates of the non-zero elements in C order, as `i64` (NumPy's `intp`).
//!
//! Three passes and one compaction: "non-zero" as 0/1 (`astype`, NumPy's truth of each element:
//! NaN is non-zero, -0.0 is zero), the inclusive [`cumsum`](Array::cumsum) of those marks, whose
//! last element is the count (read back: a synchronisation, as the result's size depends on the
//! data, as CuPy's), then the built-in `marked_coords` of `kernels/compact.rs` writes each marked
//! element's coordinates at its rank. [`marked_positions`] is that compaction for other callers
//! (`unique_all`'s run starts), and [`scattered_ranks`] the kernel file's other use (`unique_all`'s
//! inverse).

use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::{Array, DType, Scalar};

/// The built-in compaction kernel (`kernels/compact.rs`, precompiled by the runtime's build.rs).
#[path = "../kernels/compact.rs"]
#[allow(missing_docs, clippy::too_many_arguments)]
mod kernels;

impl<T: Scalar> Array<T> {
    /// The indices of the non-zero elements, one `i64` array per dimension (NumPy's `nonzero`,
    /// and its one-argument `where(cond)`): element `k` of array `d` is coordinate `d` of the
    /// `k`-th non-zero element in C order, so `(out[0][k], out[1][k], ...)` is its index. Any
    /// layout (a view is read in its own C order) and element type; NaN counts as non-zero and
    /// -0.0 as zero. The count is read back from the device (a synchronisation). A 0-d array is
    /// an error, as in NumPy >= 2.1 (use [`flatnonzero`](Array::flatnonzero), or reshape to 1-d
    /// first). The arrays are rows of one `[ndim, count]` buffer (C-contiguous views).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f32>::from_shape_vec([2, 3], vec![0.0, 1.5, 0.0, f32::NAN, 0.0, -2.0])?;
    /// let nz = x.nonzero()?;
    /// assert_eq!(nz[0].to_vec()?, [0, 1, 1]);
    /// assert_eq!(nz[1].to_vec()?, [1, 0, 2]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn nonzero(&self) -> Result<Vec<Array<i64>>> {
        if self.ndim() == 0 {
            return Err(Error::InvalidShape {
                op: "nonzero",
                detail: "a 0-d array has no axes to index (NumPy >= 2.1 refuses it too): use x.flatnonzero(), or x.reshape(1) first".into(),
            });
        }
        let ndim = self.ndim();
        let all = coords(self, false)?;
        (0..ndim).map(|d| all.index_axis(0, d as isize)).collect()
    }

    /// The indices of the non-zero elements of the flattened array, in C order (NumPy's
    /// `flatnonzero`): a 1-d `i64` array. A 0-d array counts as one element.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<i32>::from_shape_vec([2, 2], vec![0, 7, -1, 0])?;
    /// assert_eq!(x.flatnonzero()?.to_vec()?, [1, 2]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn flatnonzero(&self) -> Result<Array<i64>> {
        coords(&self.ravel()?, false)?.index_axis(0, 0)
    }

    /// The index of each non-zero element, one per row, in C order (NumPy's `argwhere`): an
    /// `i64` array of shape `[count, ndim]`, C-contiguous (the transpose of
    /// [`nonzero`](Array::nonzero)'s arrays). A 0-d array gives shape `[count, 0]` (`count` 0 or
    /// 1), as NumPy's.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<bool>::from_shape_vec([2, 2], vec![false, true, true, true])?;
    /// let w = x.argwhere()?;
    /// assert_eq!(w.shape(), [3, 2]);
    /// assert_eq!(w.to_vec()?, [0, 1, 1, 0, 1, 1]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn argwhere(&self) -> Result<Array<i64>> {
        if self.ndim() == 0 {
            let count = self.reshape(1usize)?.count_nonzero(None)?.item()? as usize;
            return Array::<i64>::empty_on([count, 0], &Stream::current_for(self.device())?);
        }
        coords(self, true)
    }
}

/// The coordinates of `x`'s non-zero elements (`ndim >= 1`): `[ndim, count]`, or `[count, ndim]`
/// with `by_row`.
fn coords<T: Scalar>(x: &Array<T>, by_row: bool) -> Result<Array<i64>> {
    let stream = Stream::current_for(x.device())?;
    // NumPy's truth of each element, as 0/1 (bool converts to numbers directly).
    let marks = if T::DTYPE == DType::Bool { x.astype::<i64>()? } else { x.astype::<bool>()?.astype::<i64>()? };
    let scan = marks.reshape(x.len())?.cumsum(None)?;
    let count = if x.is_empty() { 0 } else { scan.index_axis(0, -1)?.item()? as usize };
    marked_positions(&scan, x.shape(), count, by_row, &stream)
}

/// The coordinates in the C-order `shape` (`len(scan)` elements, at least one axis) of the
/// positions where the inclusive scan `scan` of 0/1 marks steps up, `count` of them (the scan's
/// last value): `[ndim, count]`, or `[count, ndim]` with `by_row`.
pub(crate) fn marked_positions(
    scan: &Array<i64>,
    shape: &[usize],
    count: usize,
    by_row: bool,
    stream: &Stream,
) -> Result<Array<i64>> {
    let ndim = shape.len();
    debug_assert!(ndim >= 1 && scan.ndim() == 1 && scan.is_c_contiguous());
    let out_shape = if by_row { [count, ndim] } else { [ndim, count] };
    let mut out = Array::<i64>::empty_on(out_shape, stream)?;
    if count == 0 {
        return Ok(out);
    }
    let n = scan.len();
    let extents: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
    let extents = Array::<i64>::from_shape_vec_on(ndim, &extents, stream)?;
    let (dim_stride, rank_stride) = if by_row { (1, ndim as i64) } else { (count as i64, 1) };
    kernels::marked_coords::launch(&grid_stride(n, stream), scan, &extents, &mut out, n as u64, ndim as u32, dim_stride, rank_stride)?;
    Ok(out)
}

/// `out[p[i]] = scan[i] - 1` for each `i` (`scan` the inclusive scan of 0/1 marks, `p` a
/// permutation of `0..len`, both C-contiguous 1-d of one length): each position's rank among the
/// marked ones at or before it, sent to its place before the permutation.
pub(crate) fn scattered_ranks(scan: &Array<i64>, p: &Array<i64>, stream: &Stream) -> Result<Array<i64>> {
    debug_assert!(scan.len() == p.len() && scan.is_c_contiguous() && p.is_c_contiguous());
    let n = scan.len();
    let mut out = Array::<i64>::empty_on(n, stream)?;
    if n > 0 {
        kernels::scatter_ranks::launch(&grid_stride(n, stream), scan, p, &mut out, n as u64)?;
    }
    Ok(out)
}

/// The launch of a grid-stride kernel over `len` elements: 256 threads a block, at most 65536
/// blocks.
fn grid_stride<'s>(len: usize, stream: &'s Stream) -> LaunchConfig<'s> {
    let grid = len.div_ceil(256).clamp(1, 65_536) as u32;
    LaunchConfig::new(grid, 256u32).stream(stream)
}
