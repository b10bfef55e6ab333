//! `unique` and `unique_all` (NumPy's `unique` of the flattened array, without and with its
//! `return_index`, `return_inverse` and `return_counts`) on the stable radix sort of
//! runtime/src/sort.rs.
//!
//! The flattened array is sorted (with its indices for `unique_all`: a stable `argsort`), the
//! first key of each run of equal keys is marked (`unique_marks` of `kernels/sort.rs`: -0.0 and
//! 0.0 are one value, every NaN one NaN, NumPy >= 1.21's `equal_nan=True`) and the marks are
//! scanned with [`cumsum`](Array::cumsum); the scan's last value is the number of unique values
//! (read back: a synchronisation, as the result's size depends on the data). Then:
//!
//! - the values: the first key of each run (`unique_compact`);
//! - the run starts (positions in sorted order): the compaction of `kernels/compact.rs`;
//! - `indices`: the sort's indices at the run starts (`gather_keys`); the sort is stable, so each
//!   run's first key is the value's first occurrence, NumPy's `return_index`;
//! - `counts`: the distance from each run start to the next (or to the end);
//! - `inverse`: each sorted position's run number (the scan minus one), sent back to the element's
//!   place in the input (`scatter_ranks` of `kernels/compact.rs`).

use crate::array::concatenate;
use crate::error::Result;
use crate::nonzero::{marked_positions, scattered_ranks};
use crate::sort::{KeyBits, Mode, Vals, as_bits, grid_stride_config, kernels, kind_of, radix, unreachable_result};
use crate::stream::Stream;
use crate::{Array, Scalar};

/// What [`Array::unique_all`] returns: NumPy's `unique(x, return_index=True, return_inverse=True,
/// return_counts=True)` (the array API's `unique_all`), each a field.
#[derive(Debug, Clone)]
pub struct Unique<T: Scalar> {
    /// The sorted unique values (1-d): NumPy's `unique(x)`.
    pub values: Array<T>,
    /// The index in the flattened input of each value's first occurrence (1-d, as long as
    /// `values`): `return_index`.
    pub indices: Array<i64>,
    /// For each input element, the index of its value in `values`, in the input's shape (as
    /// NumPy 2.0.1 and later give it for `axis=None`): `values.take(&inverse, None)` rebuilds the
    /// input (NaNs as the one NaN of `values`, -0.0 as the zero `values` kept). `return_inverse`.
    pub inverse: Array<i64>,
    /// How many input elements equal each value (1-d, as long as `values`; they add up to the
    /// input's size): `return_counts`.
    pub counts: Array<i64>,
}

impl<T: Scalar> Array<T> {
    /// The sorted unique values of the flattened array (NumPy's `unique` without its options):
    /// -0.0 and 0.0 are one value (the first in sorted order, as NumPy keeps), and all NaNs one
    /// NaN (NumPy >= 1.21). Element types: `i32`, `u32`, `i64`, `u64`, `f32`, `f64` (others are
    /// refused: convert with `astype` first). For NumPy's `return_index`, `return_inverse` and
    /// `return_counts`, see [`unique_all`](Array::unique_all).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<i32>::from_vec(vec![3, -1, 3, 7, -1])?;
    /// assert_eq!(x.unique()?.to_vec()?, [-1, 3, 7]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn unique(&self) -> Result<Array<T>> {
        let (mode, size) = kind_of::<T>("unique")?;
        if size == 4 { unique_bits::<T, u32>(self, mode) } else { unique_bits::<T, u64>(self, mode) }
    }

    /// The sorted unique values of the flattened array with the index of each one's first
    /// occurrence, the inverse (each element's value's index, in the input's shape) and the
    /// counts: NumPy's `unique(x, return_index=True, return_inverse=True, return_counts=True)`,
    /// the array API's `unique_all`, as the fields of a [`Unique`] (take the ones you need).
    /// The values are [`unique`](Array::unique)'s; the indices, inverse and counts are `i64`.
    /// It sorts with the indices (a stable `argsort`), so it costs more than `unique`. Element
    /// types as `unique`'s.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f64>::from_shape_vec([2, 3], vec![2.5, f64::NAN, -1.0, 2.5, f64::NAN, 2.5])?;
    /// let u = x.unique_all()?;
    /// assert_eq!(&u.values.to_vec()?[..2], [-1.0, 2.5]);
    /// assert!(u.values.to_vec()?[2].is_nan()); // one NaN for all
    /// assert_eq!(u.indices.to_vec()?, [2, 0, 1]);
    /// assert_eq!(u.inverse.shape(), [2, 3]);
    /// assert_eq!(u.inverse.to_vec()?, [1, 2, 0, 1, 2, 1]);
    /// assert_eq!(u.counts.to_vec()?, [1, 3, 2]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn unique_all(&self) -> Result<Unique<T>> {
        let (mode, size) = kind_of::<T>("unique_all")?;
        if size == 4 { unique_all_bits::<T, u32>(self, mode) } else { unique_all_bits::<T, u64>(self, mode) }
    }
}

/// The flattened `x`, C-contiguous (a view when it is already).
fn flat_contiguous<T: Scalar>(x: &Array<T>) -> Result<Array<T>> {
    let flat = x.ravel()?;
    if flat.is_c_contiguous() { Ok(flat) } else { flat.copy() }
}

/// The marks of the first key of each run of equal keys in the sorted key bits `sorted`, scanned
/// (inclusive), and the number of runs (read back).
fn run_scan<K: KeyBits>(sorted: &Array<K>, mode: Mode, stream: &Stream) -> Result<(Array<i64>, usize)> {
    let n = sorted.len();
    let mut marks = Array::<i64>::empty_on(n, stream)?;
    let cfg = grid_stride_config(n, stream);
    kernels::unique_marks::launch(&cfg, sorted, &mut marks, n as u64, mode as u32, K::sign(), K::inf())?;
    let scan = marks.cumsum(None)?;
    let count = scan.index_axis(0, -1)?.item()? as usize;
    Ok((scan, count))
}

/// The first key of each run of the sorted key bits `sorted`, as `T`.
fn run_values<T: Scalar, K: KeyBits>(sorted: &Array<K>, scan: &Array<i64>, count: usize, stream: &Stream) -> Result<Array<T>> {
    let n = sorted.len();
    let mut out = Array::<K>::empty_on(count, stream)?;
    kernels::unique_compact::launch(&grid_stride_config(n, stream), sorted, scan, &mut out, n as u64)?;
    as_bits::<K, T>(&out)
}

/// `unique` through the key bits `K`: sort the flattened array, mark the first key of each run
/// of equal keys, scan the marks for the output positions and compact.
fn unique_bits<T: Scalar, K: KeyBits>(x: &Array<T>, mode: Mode) -> Result<Array<T>> {
    let stream = Stream::current_for(x.device())?;
    let flat = flat_contiguous(x)?;
    if flat.is_empty() {
        return Array::<T>::empty_on(0usize, &stream);
    }
    let (sorted, _) = radix(&as_bits::<T, K>(&flat)?, Vals::None, mode, K::BITS, &stream)?;
    let (scan, count) = run_scan(&sorted, mode, &stream)?;
    run_values(&sorted, &scan, count, &stream)
}

/// `unique_all` through the key bits `K` (the module's comment says how).
fn unique_all_bits<T: Scalar, K: KeyBits>(x: &Array<T>, mode: Mode) -> Result<Unique<T>> {
    let stream = Stream::current_for(x.device())?;
    let flat = flat_contiguous(x)?;
    let n = flat.len();
    if n == 0 {
        let none = || Array::<i64>::empty_on(0usize, &stream);
        return Ok(Unique {
            values: Array::<T>::empty_on(0usize, &stream)?,
            indices: none()?,
            inverse: Array::<i64>::empty_on(x.shape(), &stream)?,
            counts: none()?,
        });
    }
    let (sorted, perm) = radix(&as_bits::<T, K>(&flat)?, Vals::Iota, mode, K::BITS, &stream)?;
    let perm = perm.ok_or_else(|| unreachable_result("unique_all"))?;
    let (scan, count) = run_scan(&sorted, mode, &stream)?;
    let values = run_values::<T, K>(&sorted, &scan, count, &stream)?;
    // Where each run starts in sorted order, then the input index of each run's first key.
    let starts = marked_positions(&scan, &[n], count, false, &stream)?.reshape(count)?;
    let mut first = Array::<u64>::empty_on(count, &stream)?;
    let cfg = grid_stride_config(count, &stream);
    kernels::gather_keys::launch(&cfg, &starts, &as_bits::<i64, u64>(&perm)?, &mut first, count as u64)?;
    let indices = as_bits::<u64, i64>(&first)?;
    // Each run's length: the next run's start (the end for the last run) minus its own.
    let end = Array::<i64>::from_shape_vec_on(1usize, &[n as i64], &stream)?;
    let ends = concatenate(&[&starts.slice(0, 1..)?, &end], 0)?;
    let counts = (&ends - &starts)?;
    let inverse = scattered_ranks(&scan, &perm, &stream)?.reshape(x.shape())?;
    Ok(Unique { values, indices, inverse, counts })
}
