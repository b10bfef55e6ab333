//! DLPack's Python capsules (the DLPack Python specification): taking the tensor out of a
//! producer's capsule, and making the capsule of a result.
//!
//! A capsule named `dltensor_versioned` holds a `DLManagedTensorVersioned` (DLPack 1.x), one named
//! `dltensor` a legacy `DLManagedTensor`. The consumer that takes the tensor renames the capsule
//! `used_dltensor_versioned` / `used_dltensor`; a capsule destroyed under its first name was never
//! consumed, and its destructor calls the tensor's deleter.

use std::ffi::CStr;
use cuprum::runtime::dlpack::{self, ffi::DLManagedTensor, ffi::DLManagedTensorVersioned};
use std::ffi::c_void;

use cuprum::runtime::{Array, DType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::ffi;

use crate::any_array::AnyArray;

const VERSIONED: &CStr = c"dltensor_versioned";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const LEGACY: &CStr = c"dltensor";
const USED_LEGACY: &CStr = c"used_dltensor";

/// Takes the tensor out of a DLPack capsule as a cuprum array (zero-copy): the array owns the
/// tensor from then on (its deleter runs when the last view is dropped) and the capsule is
/// renamed "used". On an error the capsule is left as it was (its destructor frees the tensor).
pub(crate) fn import(capsule: &Bound<'_, PyAny>) -> PyResult<AnyArray> {
    let obj = capsule.as_ptr();
    // SAFETY: `obj` is a live Python object (borrowed from `capsule`, GIL held);
    // `PyCapsule_IsValid` accepts any object and sets no exception.
    if unsafe { ffi::PyCapsule_IsValid(obj, VERSIONED.as_ptr()) } == 1 {
        // SAFETY: the capsule is valid under this name, so `GetPointer` returns its non-null
        // pointer, which the DLPack Python spec says is a `DLManagedTensorVersioned`.
        let t = unsafe { ffi::PyCapsule_GetPointer(obj, VERSIONED.as_ptr()) }.cast::<DLManagedTensorVersioned>();
        // SAFETY: `t` is the producer's live, unconsumed tensor (the capsule still has its first name).
        let dtype = dlpack::dtype_of(unsafe { &(*t).dl_tensor }).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        // SAFETY: as above; on Ok the array owns the tensor, on Err nothing was taken.
        let array = unsafe { from_versioned(dtype, t) }?;
        // SAFETY: the name is a static C string, as SetName requires (the capsule keeps the pointer).
        unsafe { ffi::PyCapsule_SetName(obj, USED_VERSIONED.as_ptr()) };
        return Ok(array);
    }
    // SAFETY: as above.
    if unsafe { ffi::PyCapsule_IsValid(obj, LEGACY.as_ptr()) } == 1 {
        // SAFETY: valid under this name: a `DLManagedTensor` (the legacy capsule).
        let t = unsafe { ffi::PyCapsule_GetPointer(obj, LEGACY.as_ptr()) }.cast::<DLManagedTensor>();
        // SAFETY: the producer's live, unconsumed tensor.
        let dtype = dlpack::dtype_of(unsafe { &(*t).dl_tensor }).map_err(|e| PyTypeError::new_err(e.to_string()))?;
        // SAFETY: as above; on Ok the array owns the tensor, on Err nothing was taken.
        let array = unsafe { from_legacy(dtype, t) }?;
        // SAFETY: a static C string.
        unsafe { ffi::PyCapsule_SetName(obj, USED_LEGACY.as_ptr()) };
        return Ok(array);
    }
    Err(PyTypeError::new_err(format!(
        "__dlpack__ returned {}, not an unused DLPack capsule (named \"dltensor_versioned\" or \"dltensor\")",
        capsule.get_type().name()?
    )))
}

/// The error of a tensor cuprum cannot take (device, dtype, strides, offset): a `ValueError` with
/// cuprum's message.
fn refused(e: cuprum::Error) -> PyErr {
    PyValueError::new_err(format!("cannot take this array: {e}"))
}

/// `Array::from_dlpack_versioned` for the Rust type of `dtype`.
///
/// # Safety
/// `t` is a live, unconsumed tensor; on `Ok` the array owns it, on `Err` the caller still does.
unsafe fn from_versioned(dtype: DType, t: *mut DLManagedTensorVersioned) -> PyResult<AnyArray> {
    crate::with_dtype!(dtype, |T| {
        // SAFETY: the caller's contract.
        unsafe { Array::<T>::from_dlpack_versioned(t) }.map(AnyArray::new).map_err(refused)
    })
}

/// `Array::from_dlpack` for the Rust type of `dtype`.
///
/// # Safety
/// As [`from_versioned`].
unsafe fn from_legacy(dtype: DType, t: *mut DLManagedTensor) -> PyResult<AnyArray> {
    crate::with_dtype!(dtype, |T| {
        // SAFETY: the caller's contract.
        unsafe { Array::<T>::from_dlpack(t) }.map(AnyArray::new).map_err(refused)
    })
}

/// A new DLPack capsule viewing `array`: versioned (`dltensor_versioned`, DLPack 1.x) or legacy
/// (`dltensor`). The array's buffer stays alive until the consumer calls the tensor's deleter, or
/// until the capsule is destroyed unconsumed.
pub(crate) fn export(py: Python<'_>, array: &AnyArray, versioned: bool) -> PyResult<Py<PyAny>> {
    let (ptr, name, destructor): (*mut c_void, &CStr, ffi::PyCapsule_Destructor) = if versioned {
        (array.to_dlpack_versioned().cast(), VERSIONED, destroy_versioned)
    } else {
        (array.to_dlpack().cast(), LEGACY, destroy_legacy)
    };
    // SAFETY: `ptr` is a new managed tensor that only this capsule refers to; the name is static.
    let capsule = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor)) };
    if capsule.is_null() {
        // No capsule owns the tensor: free it here.
        // SAFETY: `ptr` is the tensor made above, never handed out.
        unsafe { delete(ptr, versioned) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `capsule` is a new (owned) reference returned by `PyCapsule_New`.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) }.unbind())
}

/// Calls the deleter of a managed tensor (versioned or legacy).
///
/// # Safety
/// `ptr` is a live managed tensor of that kind that nobody else will delete or use.
unsafe fn delete(ptr: *mut c_void, versioned: bool) {
    if versioned {
        let t = ptr.cast::<DLManagedTensorVersioned>();
        // SAFETY: the caller's contract: `t` is live and ours to delete.
        if let Some(deleter) = unsafe { (*t).deleter } {
            // SAFETY: as above; the deleter is the one the tensor was made with.
            unsafe { deleter(t) };
        }
    } else {
        let t = ptr.cast::<DLManagedTensor>();
        // SAFETY: as above.
        if let Some(deleter) = unsafe { (*t).deleter } {
            // SAFETY: as above.
            unsafe { deleter(t) };
        }
    }
}

/// The destructor of a `dltensor_versioned` capsule: frees the tensor if no consumer took it
/// (the capsule still has its first name).
unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls a capsule's destructor with the capsule, GIL held; `IsValid` sets no error.
    if unsafe { ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) } == 1 {
        // SAFETY: valid under this name: the tensor `export` put there, not consumed.
        let ptr = unsafe { ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr()) };
        // SAFETY: unconsumed, so nobody else deletes it; the capsule dies now.
        unsafe { delete(ptr, true) };
    }
}

/// The destructor of a `dltensor` capsule (as [`destroy_versioned`]).
unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: as in `destroy_versioned`.
    if unsafe { ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) } == 1 {
        // SAFETY: as in `destroy_versioned`.
        let ptr = unsafe { ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()) };
        // SAFETY: as in `destroy_versioned`.
        unsafe { delete(ptr, false) };
    }
}
