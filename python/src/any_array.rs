//! [`AnyArray`]: a cuprum array of any dtype, the form in which arrays cross the boundary with
//! Python (an argument before its dtype is checked, a [`Tensor`](crate::Tensor)'s contents).

use std::any::Any;

use cuprum::runtime::dlpack::ffi::{DLManagedTensor, DLManagedTensorVersioned};
use cuprum::runtime::{Array, DType, Device, Result, Scalar};
use pyo3::PyResult;
use pyo3::exceptions::PyTypeError;

use crate::dtype::python_name;

/// What [`AnyArray`] needs of an `Array<T>` whatever its `T`.
trait DynArray: Send + Sync + 'static {
    fn dtype(&self) -> DType;
    fn shape(&self) -> &[usize];
    fn strides(&self) -> &[isize];
    fn device(&self) -> &Device;
    fn data_ptr(&self) -> u64;
    fn is_c_contiguous(&self) -> bool;
    fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned;
    fn to_dlpack(&self) -> *mut DLManagedTensor;
    fn copy(&self) -> Result<AnyArray>;
    fn view(&self) -> AnyArray;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Scalar + Send + Sync + 'static> DynArray for Array<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn shape(&self) -> &[usize] {
        Array::shape(self)
    }
    fn strides(&self) -> &[isize] {
        Array::strides(self)
    }
    fn device(&self) -> &Device {
        Array::device(self)
    }
    fn data_ptr(&self) -> u64 {
        self.device_ptr()
    }
    fn is_c_contiguous(&self) -> bool {
        Array::is_c_contiguous(self)
    }
    fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        Array::to_dlpack_versioned(self)
    }
    fn to_dlpack(&self) -> *mut DLManagedTensor {
        Array::to_dlpack(self)
    }
    fn copy(&self) -> Result<AnyArray> {
        Ok(AnyArray::new(Array::copy(self)?))
    }
    fn view(&self) -> AnyArray {
        AnyArray::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A cuprum array whose dtype is known at run time: an `Array<T>` for one scalar `T`.
pub struct AnyArray(Box<dyn DynArray>);

impl AnyArray {
    /// Erases the dtype of `array` (no copy: the same view).
    pub fn new<T: Scalar + Send + Sync + 'static>(array: Array<T>) -> AnyArray {
        AnyArray(Box::new(array))
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        self.0.dtype()
    }

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        self.0.shape()
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[isize] {
        self.0.strides()
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.0.shape().len()
    }

    /// The device the elements live on.
    pub fn device(&self) -> &Device {
        self.0.device()
    }

    /// The address of the first element.
    pub fn data_ptr(&self) -> u64 {
        self.0.data_ptr()
    }

    /// Whether the elements are in row-major order with no gaps.
    pub fn is_c_contiguous(&self) -> bool {
        self.0.is_c_contiguous()
    }

    /// A C-contiguous copy on the same device (on the current stream).
    pub fn copy(&self) -> Result<AnyArray> {
        self.0.copy()
    }

    /// A new versioned DLPack managed tensor viewing the array (kept alive until its deleter).
    pub(crate) fn to_dlpack_versioned(&self) -> *mut DLManagedTensorVersioned {
        self.0.to_dlpack_versioned()
    }

    /// A new legacy DLPack managed tensor viewing the array (kept alive until its deleter).
    pub(crate) fn to_dlpack(&self) -> *mut DLManagedTensor {
        self.0.to_dlpack()
    }

    /// The array as `Array<T>` (a view, no copy), or `None` when its dtype is not `T`'s.
    pub fn downcast<T: Scalar + 'static>(&self) -> Option<Array<T>> {
        self.0.as_any().downcast_ref::<Array<T>>().cloned()
    }

    /// The array as `Array<T>` (a view, no copy); a Python `TypeError` naming both dtypes when its
    /// dtype is not `T`'s.
    pub fn typed<T: Scalar + 'static>(&self) -> PyResult<Array<T>> {
        self.downcast::<T>().ok_or_else(|| {
            PyTypeError::new_err(format!(
                "expected an array of dtype {}, got {} (convert it first, e.g. x.to(torch.{0}) or x.astype(numpy.{0}))",
                python_name(T::DTYPE),
                python_name(self.dtype())
            ))
        })
    }
}

/// Another view of the same elements (no copy), as `Array::clone`.
impl Clone for AnyArray {
    fn clone(&self) -> AnyArray {
        self.0.view()
    }
}

impl std::fmt::Debug for AnyArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyArray({}, shape {:?}, strides {:?})", python_name(self.dtype()), self.shape(), self.strides())
    }
}
