//! NumPy's creation routines beyond `empty`/`zeros`/`full`/`ones`/`arange`/`linspace` (those are
//! in `mod.rs`): `empty_like`, `zeros_like`, `ones_like`, `full_like`, `eye`, `identity`,
//! `asarray`, `ascontiguousarray`, `diag` and `diagflat`.
//!
//! The `*_like` functions make a C-contiguous array of the prototype's shape on the
//! prototype's device (on that device's current stream), as NumPy's do with their default
//! `order='K'` for a contiguous prototype.

use super::Array;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::{Number, Scalar};

impl<T: Element> Array<T> {
    /// An uninitialised array of `proto`'s shape on `proto`'s device (NumPy's `empty_like`).
    pub fn empty_like<U: Element>(proto: &Array<U>) -> Result<Array<T>> {
        Array::empty_on(proto.shape(), &Stream::current_for(proto.device())?)
    }

    /// An array of `proto`'s shape on `proto`'s device whose bytes are zero (NumPy's
    /// `zeros_like`; a memset).
    pub fn zeros_like<U: Element>(proto: &Array<U>) -> Result<Array<T>> {
        let stream = Stream::current_for(proto.device())?;
        let a = Array::empty_on(proto.shape(), &stream)?;
        a.buf.zero(&stream)?;
        Ok(a)
    }

    /// The array itself when it is C-contiguous and at least 1-d (a view, no copy), else a
    /// C-contiguous copy; a 0-d array becomes a 1-d array of one element (NumPy's
    /// `ascontiguousarray`).
    pub fn ascontiguousarray(&self) -> Result<Array<T>> {
        let a = if self.ndim() == 0 {
            self.reshape([1])?
        } else {
            self.clone()
        };
        if a.is_c_contiguous() { Ok(a) } else { a.copy() }
    }

    /// `x` as an array (NumPy's `asarray`): an [`Array`] is returned as a view of itself (no
    /// copy), host data (a slice, a `Vec`, an `ndarray` array) is copied to the current device.
    pub fn asarray(x: impl AsArray<T>) -> Result<Array<T>> {
        x.into_array()
    }
}

impl<T: Scalar> Array<T> {
    /// An array of `proto`'s shape on `proto`'s device filled with `value` (NumPy's
    /// `full_like`).
    pub fn full_like<U: Element>(proto: &Array<U>, value: T) -> Result<Array<T>> {
        let mut a = Array::empty_like(proto)?;
        a.fill(value)?;
        Ok(a)
    }

    /// A 1-d `v` as the `k`-th diagonal of a square 2-d array of zeros of side `len + |k|`; of a
    /// 2-d `v`, its `k`-th diagonal (a view: [`diagonal`](Self::diagonal)(k, 0, 1)). NumPy's
    /// `diag`. Errors: another number of dimensions.
    pub fn diag(v: &Array<T>, k: isize) -> Result<Array<T>> {
        match v.ndim() {
            1 => {
                let n = v.len() + k.unsigned_abs();
                let out = Array::zeros_like_shape(v, [n, n])?;
                out.diagonal(k, 0, 1)?.assign(v)?;
                Ok(out)
            }
            2 => v.diagonal(k, 0, 1),
            nd => Err(Error::InvalidShape {
                op: "diag",
                detail: format!(
                    "the input must be 1-d (to build a diagonal array) or 2-d (to take its \
                     diagonal), it has {nd} dimensions (shape {:?})",
                    v.shape()
                ),
            }),
        }
    }

    /// `v` flattened (C order) on the `k`-th diagonal of a 2-d array of zeros (NumPy's
    /// `diagflat`).
    pub fn diagflat(v: &Array<T>, k: isize) -> Result<Array<T>> {
        Array::diag(&v.ravel()?, k)
    }

    /// Zeros of `shape` on `proto`'s device.
    fn zeros_like_shape<U: Element, const N: usize>(
        proto: &Array<U>,
        shape: [usize; N],
    ) -> Result<Array<T>> {
        let stream = Stream::current_for(proto.device())?;
        let a = Array::empty_on(shape, &stream)?;
        a.buf.zero(&stream)?;
        Ok(a)
    }
}

impl<T: Number> Array<T> {
    /// An array of `proto`'s shape on `proto`'s device filled with ones (NumPy's `ones_like`).
    pub fn ones_like<U: Element>(proto: &Array<U>) -> Result<Array<T>> {
        Array::full_like(proto, T::one())
    }

    /// An `n` x `m` array with ones on the `k`-th diagonal (above the main one for `k > 0`,
    /// below for `k < 0`) and zeros elsewhere, on the current device (NumPy's `eye(n, m, k)`).
    pub fn eye(n: usize, m: usize, k: isize) -> Result<Array<T>> {
        let out = Array::<T>::zeros([n, m])?;
        out.diagonal(k, 0, 1)?.fill(T::one())?;
        Ok(out)
    }

    /// The `n` x `n` identity matrix (NumPy's `identity`).
    pub fn identity(n: usize) -> Result<Array<T>> {
        Array::eye(n, n, 0)
    }
}

/// What [`Array::asarray`] takes: an array (a view of it is returned) or host data (copied to
/// the current device).
pub trait AsArray<T: Element> {
    /// The device array.
    fn into_array(self) -> Result<Array<T>>;
}

impl<T: Element> AsArray<T> for &Array<T> {
    fn into_array(self) -> Result<Array<T>> {
        Ok(self.clone())
    }
}

impl<T: Element> AsArray<T> for Array<T> {
    fn into_array(self) -> Result<Array<T>> {
        Ok(self)
    }
}

impl<T: Element> AsArray<T> for &[T] {
    fn into_array(self) -> Result<Array<T>> {
        Array::from_slice(self)
    }
}

impl<T: Element> AsArray<T> for Vec<T> {
    fn into_array(self) -> Result<Array<T>> {
        Array::from_slice(&self)
    }
}

impl<T: Element> AsArray<T> for &Vec<T> {
    fn into_array(self) -> Result<Array<T>> {
        Array::from_slice(self)
    }
}

impl<T: Element, const N: usize> AsArray<T> for [T; N] {
    fn into_array(self) -> Result<Array<T>> {
        Array::from_slice(&self)
    }
}

impl<T: Scalar, S: ndarray::Data<Elem = T>, D: ndarray::Dimension> AsArray<T>
    for &ndarray::ArrayBase<S, D>
{
    fn into_array(self) -> Result<Array<T>> {
        Array::from_ndarray(self)
    }
}
