//! Selection: `where_` (NumPy's `where`) and `clip`.

use super::{builtin, launch_new};
use crate::array::Array;
use crate::elementwise::{Arg, Input};
use crate::error::Result;
use crate::{Real, Scalar};

/// `cond ? x : y` elementwise (NumPy's `where`), broadcast; `x` and `y` are arrays or scalars.
pub fn where_<'a, 'b, T: Scalar>(cond: &Array<bool>, x: impl Into<Input<'a, T>>, y: impl Into<Input<'b, T>>) -> Result<Array<T>> {
    launch_new::<T>(builtin!(select), &[T::DTYPE], &[Arg::input(cond), x.into().arg(), y.into().arg()])
}

impl<T: Real> Array<T> {
    /// Each element limited to `[lo, hi]` (arrays or scalars, broadcast): NumPy's
    /// `minimum(maximum(x, lo), hi)`, so `hi` wins when `lo > hi`; a NaN stays NaN.
    pub fn clip<'a, 'b>(&self, lo: impl Into<Input<'a, T>>, hi: impl Into<Input<'b, T>>) -> Result<Array<T>> {
        launch_new::<T>(builtin!(clip), &[T::DTYPE], &[Arg::input(self), lo.into().arg(), hi.into().arg()])
    }
}
