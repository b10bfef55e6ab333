//! `ndarray` interop: device arrays to and from `ndarray` arrays and views of any dimension.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use super::Array;
use crate::Scalar;
use crate::error::{Error, Result};
use crate::stream::Stream;

impl<T: Scalar> Array<T> {
    /// A host copy as an `ndarray::ArrayD` with the same shape (C order). Waits for the copy.
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        let v = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), v).map_err(|e| Error::InvalidShape {
            op: "to_ndarray",
            detail: e.to_string(),
        })
    }

    /// A device copy of an `ndarray` array or view (any layout, any dimension), on the current
    /// device.
    pub fn from_ndarray<S, D>(a: &ArrayBase<S, D>) -> Result<Array<T>>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        let shape = a.shape().to_vec();
        let stream = Stream::current()?;
        match a.as_slice() {
            // Standard (C-order, contiguous) layout: upload directly.
            Some(s) => Array::from_shape_vec_on(shape, s, &stream),
            None => {
                let v: Vec<T> = a.iter().copied().collect();
                Array::from_shape_vec_on(shape, &v, &stream)
            }
        }
    }
}
