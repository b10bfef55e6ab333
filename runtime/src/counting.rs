//! `bincount` and `histogram` (NumPy's) through the built-in counting kernels of
//! `kernels/counting.rs`: per-block histograms in shared memory, added to the result with one
//! atomic per bin and block.
//!
//! Both return counts as `i64` (NumPy's `intp`). Both read their result's size or range from the
//! data first where NumPy does (the largest value of `bincount`'s input, the smallest and
//! largest of `histogram`'s without a range): a reduction and a copy to the host, as CuPy does.
//! A `u8` input to `bincount` skips that pass: its bytes are counted into 256 bins in one pass
//! (sixteen per 16-byte load), and the result is cut after its last non-zero bin (a copy of the
//! 256 counts to the host), unless `minlength` is at least 256 (then nothing is read back).

use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::stream::Stream;
use crate::reduction::Axes;
use crate::{Array, DType, Device, Float, Int, Scalar};

/// The built-in counting kernels (`kernels/counting.rs`, precompiled by the runtime's build.rs).
#[path = "../kernels/counting.rs"]
#[allow(missing_docs)]
mod kernels;

/// Threads per block of the counting kernels.
const THREADS: u32 = 256;

/// A grid of eight blocks per multiprocessor (grid-stride loops; 100% occupancy: `bincount` of
/// bytes ran at 0.584 of copy with it against 0.554 with four), at most what covers `n`
/// items with one per thread.
fn grid_for(device: &Device, n: usize) -> u32 {
    let sms = device.multiprocessor_count().max(1);
    let wanted = (sms * 8) as usize;
    wanted.min(n.div_ceil(THREADS as usize)).max(1) as u32
}

impl<T: Int> Array<T> {
    /// The number of occurrences of each value `0..=max` of this 1-d array of non-negative
    /// integers, with at least `minlength` bins (NumPy's `bincount`). A negative value is an
    /// error, nothing counted.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<u8>::from_vec(vec![1, 3, 1, 0, 3, 3])?;
    /// assert_eq!(x.bincount(0)?.to_vec()?, [1, 2, 0, 3]);
    /// assert_eq!(x.bincount(6)?.to_vec()?, [1, 2, 0, 3, 0, 0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn bincount(&self, minlength: usize) -> Result<Array<i64>> {
        expect_1d(self, "bincount")?;
        let stream = Stream::current_for(self.device())?;
        if T::DTYPE == DType::U8 {
            return count_bytes(self, minlength, &stream);
        }
        let (values, nbins) = checked_values(self, minlength)?;
        let mut counts = Array::<i64>::empty_on(nbins, &stream)?;
        counts.buffer().zero(&stream)?;
        if values.len() > 0 {
            let cfg = LaunchConfig::new(grid_for(self.device(), values.len()), THREADS).stream(&stream);
            // SAFETY: `count_values` is unchecked: every value lies in `0..nbins` (`checked_values`)
            // and `counts` holds `nbins`; shared bins are used only when `nbins <= SHARED_BINS`.
            unsafe { kernels::count_values::launch(&cfg, &values, &mut counts) }?;
        }
        Ok(counts)
    }

    /// The sum of `weights[i]` over the `i` with `self[i] == v`, for each value `v` in `0..=max`
    /// (at least `minlength` bins): NumPy's `bincount(x, weights)`. `weights` has this array's
    /// shape; the sums are `f64` (atomic adds, in an order that varies between runs: last-bit
    /// differences).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<i64>::from_vec(vec![0, 2, 2])?;
    /// let w = Array::<f64>::from_vec(vec![0.5, 1.0, 2.0])?;
    /// assert_eq!(x.bincount_weighted(&w, 0)?.to_vec()?, [0.5, 0.0, 3.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn bincount_weighted(&self, weights: &Array<f64>, minlength: usize) -> Result<Array<f64>> {
        expect_1d(self, "bincount")?;
        if weights.shape() != self.shape() {
            return Err(Error::InvalidShape {
                op: "bincount",
                detail: format!("weights of shape {:?} for values of shape {:?}: give one weight per value", weights.shape(), self.shape()),
            });
        }
        let stream = Stream::current_for(self.device())?;
        let (values, nbins) = checked_values(self, minlength)?;
        let weights = if weights.is_c_contiguous() { weights.clone() } else { weights.copy()? };
        let mut sums = Array::<f64>::empty_on(nbins, &stream)?;
        sums.buffer().zero(&stream)?;
        if values.len() > 0 {
            let cfg = LaunchConfig::new(grid_for(self.device(), values.len()), THREADS).stream(&stream);
            kernels::sum_weights::launch(&cfg, &values, &weights, &mut sums)?;
        }
        Ok(sums)
    }
}

impl<T: Float> Array<T> {
    /// NumPy's `histogram` with `bins` equal bins over `range` (default: the data's smallest and
    /// largest values; a range of width 0 is widened by 0.5 on each side, as NumPy does): the
    /// count in each bin and the `bins + 1` edges. Values outside the range and NaN are not
    /// counted; the last bin includes its right edge. The edges and the bin of each value are
    /// computed as NumPy computes them for this element type, so the counts are NumPy's.
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f64>::from_vec(vec![0.0, 0.5, 1.0, 1.5, 2.0, 9.0])?;
    /// let (counts, edges) = x.histogram(2, Some((0.0, 2.0)))?;
    /// assert_eq!(counts.to_vec()?, [2, 3]);
    /// assert_eq!(edges.to_vec()?, [0.0, 1.0, 2.0]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn histogram(&self, bins: usize, range: Option<(f64, f64)>) -> Result<(Array<i64>, Array<T>)> {
        if !matches!(T::DTYPE, DType::F32 | DType::F64) {
            return Err(Error::Unsupported {
                what: format!("histogram of {} arrays (it takes f32 and f64: convert with astype::<f32>() first)", T::DTYPE.rust_name()),
            });
        }
        if bins == 0 {
            return Err(Error::InvalidValue { op: "histogram", detail: "bins must be at least 1".into() });
        }
        let x = if self.is_c_contiguous() { self.reshape(self.len())? } else { self.ravel()?.copy()? };
        let (mut lo, mut hi) = match range {
            Some((lo, hi)) => {
                if !(lo.is_finite() && hi.is_finite()) || lo > hi {
                    return Err(Error::InvalidValue {
                        op: "histogram",
                        detail: format!("range ({lo}, {hi}): give a finite range with lo <= hi"),
                    });
                }
                (lo, hi)
            }
            None if x.is_empty() => (0.0, 1.0),
            None => {
                let lo = x.min().run()?.to_vec()?[0].to_f64();
                let hi = x.max().run()?.to_vec()?[0].to_f64();
                if !(lo.is_finite() && hi.is_finite()) {
                    return Err(Error::InvalidValue {
                        op: "histogram",
                        detail: format!("the data's range ({lo}, {hi}) is not finite (NaN or infinities): give a range"),
                    });
                }
                (lo, hi)
            }
        };
        if lo == hi {
            lo -= 0.5;
            hi += 0.5;
        }
        // NumPy's edges: linspace in f64, then rounded to the element type.
        let step = (hi - lo) / bins as f64;
        let edges_f64: Vec<f64> = (0..=bins).map(|i| if i == bins { hi } else { lo + i as f64 * step }).collect();
        let edges_host: Vec<T> = edges_f64.iter().map(|&e| T::from_f64(e)).collect();
        let stream = Stream::current_for(self.device())?;
        let mut edges = Array::<T>::empty_on(bins + 1, &stream)?;
        edges.copy_from_slice(&edges_host)?;
        let mut counts = Array::<i64>::empty_on(bins, &stream)?;
        counts.buffer().zero(&stream)?;
        if !x.is_empty() {
            let norm = bins as f64 / (hi - lo);
            let cfg = LaunchConfig::new(grid_for(self.device(), x.len()), THREADS).stream(&stream);
            // SAFETY: `histogram_uniform` is unchecked: a counted value lies in `[lo, hi]`, so its
            // bin is clamped to `0..bins` (`counts` holds `bins`, `edges` `bins + 1`); shared bins
            // are used only when `bins <= SHARED_BINS`.
            unsafe { kernels::histogram_uniform::launch(&cfg, &x, &edges, T::from_f64(lo), T::from_f64(hi), T::from_f64(norm), &mut counts) }?;
        }
        Ok((counts, edges))
    }
}

impl<T: Scalar> Array<T> {
    /// The number of non-zero elements (`true`, non-zero numbers, NaN included) along `axis`, or
    /// in the whole array with `None` (NumPy's `count_nonzero`): an `i64` array (0-d for `None`).
    ///
    /// ```
    /// use cuprum_runtime::{Array, Device};
    /// let _cpu = Device::cpu().use_scoped()?;
    /// let x = Array::<f32>::from_shape_vec([2, 3], vec![0.0, 1.0, -2.0, 0.0, 0.0, f32::NAN])?;
    /// assert_eq!(x.count_nonzero(None)?.item()?, 3);
    /// assert_eq!(x.count_nonzero(Some(1))?.to_vec()?, [2, 1]);
    /// # Ok::<(), cuprum_runtime::Error>(())
    /// ```
    pub fn count_nonzero(&self, axis: Option<isize>) -> Result<Array<i64>> {
        // "Non-zero" to bool (`astype`), then bool to 0/1 and a sum.
        let ones = self.astype::<bool>()?.astype::<i64>()?;
        let axes = match axis {
            None => Axes::All,
            Some(a) => Axes::One(a),
        };
        ones.sum().axes(axes).run()
    }
}

fn expect_1d<T: Int>(x: &Array<T>, op: &'static str) -> Result<()> {
    if x.ndim() == 1 {
        return Ok(());
    }
    Err(Error::InvalidShape { op, detail: format!("expected a 1-d array, got shape {:?} (ravel it first)", x.shape()) })
}

/// `x` as contiguous `i64` values, checked to be non-negative, and the number of bins:
/// `max(x) + 1`, at least `minlength`.
fn checked_values<T: Int>(x: &Array<T>, minlength: usize) -> Result<(Array<i64>, usize)> {
    if x.is_empty() {
        return Ok((Array::<i64>::empty_on(0usize, &Stream::current_for(x.device())?)?, minlength));
    }
    let min = x.min().run()?.to_vec()?[0].to_f64();
    if min < 0.0 {
        return Err(Error::InvalidValue {
            op: "bincount",
            detail: format!("the array holds a negative value ({min}); bincount counts non-negative integers"),
        });
    }
    // Already `i64` and contiguous: the same elements, no copy.
    let values = if T::DTYPE == DType::I64 && x.is_c_contiguous() { x.view::<i64>()? } else { x.astype::<i64>()? };
    let top = values.max().run()?.to_vec()?[0];
    let nbins = usize::try_from(top).ok().and_then(|t| t.checked_add(1)).ok_or_else(|| Error::InvalidValue {
        op: "bincount",
        detail: format!("the largest value {top} needs more bins than memory holds"),
    })?;
    Ok((values, nbins.max(minlength)))
}

/// `bincount` of a `u8` array: one pass into 256 bins, then cut after the last non-zero one.
fn count_bytes<T: Int>(x: &Array<T>, minlength: usize, stream: &Stream) -> Result<Array<i64>> {
    let x = if x.is_c_contiguous() { x.clone() } else { x.copy()? };
    // The same bytes as `u8` and, their 16-byte-aligned middle (buffers start 16-byte aligned on
    // every device), as `u32` words in whole groups of four, the kernel's 16-byte loads
    // (`from_parts` checks each layout against the buffer).
    let bytes = Array::<u8>::from_parts(x.buffer().clone(), vec![x.len()], vec![1], x.offset())?;
    let start = x.offset();
    let head = ((16 - start % 16) % 16).min(x.len());
    let nwords = (x.len() - head) / 16 * 4;
    let words = Array::<u32>::from_parts(x.buffer().clone(), vec![nwords], vec![1], (start + head) / 4)?;
    let tail_start = head + nwords * 4;
    let nbins = minlength.max(256);
    let mut counts = Array::<i64>::empty_on(nbins, stream)?;
    counts.buffer().zero(stream)?;
    if !x.is_empty() {
        // Six blocks per multiprocessor: what its 32 KiB histogram lets stay resident.
        let blocks = (x.device().multiprocessor_count().max(1) as usize * 6).min((nwords / 4).div_ceil(THREADS as usize).max(1));
        let cfg = LaunchConfig::new(blocks as u32, THREADS).stream(stream);
        // SAFETY: `count_bytes` is unchecked: `THREADS` (256) per block, so the shared
        // histogram's indices `byte * 32 + lane` are below 8192; `counts` holds at least 256;
        // `words` and `bytes` are read below their lengths (`head` and `tail_start` are at most
        // `bytes.len()`).
        unsafe { kernels::count_bytes::launch(&cfg, &words, &bytes, head as u64, tail_start as u64, &mut counts) }?;
    }
    if minlength >= 256 {
        // Every byte has its bin already: no need to look for the last non-zero one.
        return Ok(counts);
    }
    let host = counts.slice(0, ..256isize)?.to_vec()?;
    let used = host.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
    counts.slice(0, ..used.max(minlength) as isize)
}
