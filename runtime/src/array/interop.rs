//! `ndarray` interop: device arrays to and from `ndarray` arrays and views of any dimension
//! (`cuprum::ndarray` is the version these take).

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

    /// A host copy as an `ndarray` array of dimension `D` (`Ix1`, `Ix2`, ...; `IxDyn` is
    /// [`to_ndarray`](Self::to_ndarray)). Errors: the array has another number of dimensions.
    pub fn to_ndarray_dim<D: Dimension>(&self) -> Result<ndarray::Array<T, D>> {
        let ndim = self.shape().len();
        self.to_ndarray()?.into_dimensionality::<D>().map_err(|_| Error::InvalidShape {
            op: "to_ndarray_dim",
            detail: format!("the array has {ndim} dimensions, the requested type {}", D::NDIM.map_or("any".to_string(), |n| n.to_string())),
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

impl<T: Scalar> Array<T> {
    /// CuPy's `a.get()`: a host copy as an `ndarray::ArrayD` ([`to_ndarray`](Self::to_ndarray)).
    pub fn get(&self) -> Result<ArrayD<T>> {
        self.to_ndarray()
    }

    /// CuPy's `a.set(host)`: copies the `ndarray` array `host`, of exactly this array's shape,
    /// into this array (any layout of either; a broadcast view is refused as by `assign`). An
    /// error for another shape, before anything is written.
    pub fn set<S, D>(&mut self, host: &ArrayBase<S, D>) -> Result<()>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        if host.shape() != self.shape() {
            return Err(Error::ShapeMismatch {
                context: "set (the host array's shape)".into(),
                expected: self.shape().to_vec(),
                found: host.shape().to_vec(),
            });
        }
        if self.is_c_contiguous() {
            if let Some(s) = host.as_slice() {
                return self.copy_from_slice(s);
            }
            let v: Vec<T> = host.iter().copied().collect();
            return self.copy_from_slice(&v);
        }
        let data: Vec<T> = host.iter().copied().collect();
        let stream = Stream::current_for(self.device())?;
        let staged = Array::from_shape_vec_on(host.shape().to_vec(), &data, &stream)?;
        self.assign(&staged)
    }
}

/// `Array::try_from(&host)`: [`Array::from_ndarray`] (an upload on the current device, which can
/// fail).
impl<T: Scalar, S: Data<Elem = T>, D: Dimension> TryFrom<&ArrayBase<S, D>> for Array<T> {
    type Error = Error;
    fn try_from(a: &ArrayBase<S, D>) -> Result<Array<T>> {
        Array::from_ndarray(a)
    }
}

/// `ArrayD::try_from(&device)`: [`Array::to_ndarray`] (a download, which can fail).
impl<T: Scalar> TryFrom<&Array<T>> for ArrayD<T> {
    type Error = Error;
    fn try_from(a: &Array<T>) -> Result<ArrayD<T>> {
        a.to_ndarray()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;

    #[test]
    fn conversions_round_trip_on_the_cpu_device() {
        Device::cpu().set_current().unwrap();
        let host = ndarray::arr2(&[[1.5f32, -2.0, 3.25], [4.0, 5.5, -6.0]]);
        let dev = Array::try_from(&host).unwrap();
        assert_eq!(dev.shape(), &[2, 3]);
        let back: ndarray::Array2<f32> = dev.to_ndarray_dim().unwrap();
        assert_eq!(back, host);
        let dynamic = ArrayD::try_from(&dev).unwrap();
        assert_eq!(dynamic.shape(), &[2, 3]);
        let e = dev.to_ndarray_dim::<ndarray::Ix1>().unwrap_err();
        assert!(e.to_string().contains("2 dimensions"), "{e}");
        // A transposed view uploads in its logical (C) order.
        let t = Array::<f32>::try_from(&host.t()).unwrap();
        assert_eq!(t.to_ndarray_dim::<ndarray::Ix2>().unwrap(), host.t());
    }

    #[test]
    fn get_and_set_are_cupys() {
        let _cpu = Device::cpu().use_scoped().unwrap();
        let host = ndarray::arr2(&[[1.5f32, -2.0, 3.25], [4.0, 5.5, -6.0]]);
        let mut dev = Array::<f32>::zeros([2, 3]).unwrap();
        dev.set(&host).unwrap();
        assert_eq!(dev.get().unwrap(), host.clone().into_dyn());
        // into a transposed view, from a transposed host view
        let t = Array::<f32>::zeros([2, 3]).unwrap();
        let mut tv = t.transpose();
        tv.set(&host.t()).unwrap();
        assert_eq!(t.get().unwrap(), host.clone().into_dyn());
        let e = dev.set(&host.t()).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
        assert_eq!(dev.get().unwrap(), host.into_dyn(), "nothing written");
    }
}
