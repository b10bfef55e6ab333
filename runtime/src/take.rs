//! `take`: NumPy's `take(a, indices, axis)`, a gather along one axis (or of the flattened array)
//! with an array of indices, on the built-in kernel `take` of `kernels/gather.rs`.
//!
//! Out-of-range indices are NumPy's `mode='raise'`: the indices' minimum and maximum are computed
//! on the device (two array reductions, one synchronisation each) and checked against the axis
//! before the gather is launched, so a bad index is an [`Error::InvalidSlice`] naming it and
//! nothing is written. (CuPy wraps instead, without a check: `mode='wrap'`; cuprum does not.)

use crate::array::Array;
use crate::array::shape::normalize_axis;
use crate::error::{Error, Result};
use crate::{DType, Int, Scalar};

/// The built-in gather kernel.
#[allow(dead_code)]
#[path = "../kernels/gather.rs"]
mod kernels;

impl<T: Scalar> Array<T> {
    /// The elements at `indices` along `axis` (NumPy's `a.take(indices, axis)`; negative axis and
    /// negative indices count from the end): the result's shape is `shape[..axis] +
    /// indices.shape() + shape[axis+1..]`. `axis = None` takes from the flattened array (C
    /// order), as NumPy's default. Indices are any integer type (converted to `i64`, NumPy's
    /// `intp`, unless they are `i64` already), on the array's device, in any layout. Errors,
    /// before anything is written: an index outside `-n..n` for an axis of extent `n` (the
    /// message gives the smallest or largest), an axis out of range, devices that differ.
    pub fn take<I: Int>(&self, indices: &Array<I>, axis: Option<isize>) -> Result<Array<T>> {
        // The kernel takes i64 indices (NumPy's `intp`); other integers are converted first
        // (`u64` beyond `i64::MAX` wraps to a negative index, reported out of range).
        let converted;
        let indices: &Array<i64> = if I::DTYPE == DType::I64 {
            converted = indices.view::<i64>()?;
            &converted
        } else {
            converted = indices.astype::<i64>()?;
            &converted
        };
        let (src, ax) = match axis {
            None => (self.ravel()?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        if indices.device() != self.device() {
            return Err(Error::DeviceMismatch {
                context: "take (the indices)".into(),
                expected: self.device().ordinal(),
                found: indices.device().ordinal(),
            });
        }
        let shape = src.shape();
        let n = shape[ax];
        let pre: usize = shape[..ax].iter().product();
        let post: usize = shape[ax + 1..].iter().product();
        let m = indices.len();
        let mut out_shape = shape[..ax].to_vec();
        out_shape.extend_from_slice(indices.shape());
        out_shape.extend_from_slice(&shape[ax + 1..]);
        if m > 0 {
            let lo = indices.min().run()?.item()?;
            let hi = indices.max().run()?.item()?;
            let n_i = n as i64;
            if lo < -n_i || hi >= n_i {
                let bad = if lo < -n_i { lo } else { hi };
                return Err(Error::InvalidSlice {
                    detail: format!(
                        "take: index {bad} is out of range for axis {ax} of extent {n} (valid: \
                         {}..{n})",
                        -n_i
                    ),
                });
            }
        }
        if pre * m * post == 0 {
            return Array::empty_like_shape(self, out_shape);
        }
        // `a` as [pre, n, post] (a view when the layout allows, else a C-contiguous copy), the
        // indices as [1, m, 1] broadcast to the output's [pre, m, post].
        let a3 = match src.reshape([pre, n, post]) {
            Ok(v) => v,
            Err(_) => src.copy()?.reshape([pre, n, post])?,
        };
        let flat = if indices.is_c_contiguous() {
            indices.reshape([1, m, 1])?
        } else {
            indices.copy()?.reshape([1, m, 1])?
        };
        let j = flat.broadcast_to([pre, m, post])?;
        let out = kernels::take::call(&j, &a3, n as i64, m as i64, post as i64)?;
        out.reshape(out_shape)
    }

    /// An uninitialised (empty: it has no element) array of `shape` on `proto`'s device.
    fn empty_like_shape(proto: &Array<T>, shape: Vec<usize>) -> Result<Array<T>> {
        Array::empty_on(shape, &crate::stream::Stream::current_for(proto.device())?)
    }
}
