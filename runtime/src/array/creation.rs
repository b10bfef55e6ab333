//! NumPy's creation routines: `empty`, `zeros`, `full`, `ones`, `arange`, `linspace`, the arrays
//! made from host data (`from_shape_vec`, `from_slice`, ...) or over a buffer (`from_parts`),
//! `empty_like`, `zeros_like`, `ones_like`, `full_like`, `eye`, `identity`, `array`, `asarray`,
//! `ascontiguousarray`, `diag` and `diagflat`.
//!
//! The `*_like` functions make a C-contiguous array of the prototype's shape on the
//! prototype's device (on that device's current stream), as NumPy's do with their default
//! `order='K'` for a contiguous prototype.

use std::marker::PhantomData;
use std::sync::Arc;

use super::shape::{self, Layout};
use super::{Array, IntoShape, as_bytes};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::memory::DeviceBuffer;
use crate::stream::Stream;
use crate::{Float, Number, Real, Scalar};

impl<T: Element> Array<T> {
    /// An uninitialised C-contiguous array on `stream`'s device, allocated for `stream`.
    pub fn empty_on(shape: impl IntoShape, stream: &Stream) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = shape::size_of(&shape)?;
        let bytes = n
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::InvalidShape {
                op: "array creation",
                detail: format!("{shape:?} of {} is too many bytes", T::ELEM.rust_name()),
            })?;
        let buf = DeviceBuffer::alloc(bytes, stream)?;
        Ok(Array {
            buf: Arc::new(buf),
            layout: Layout::c_contiguous(shape),
            _t: PhantomData,
        })
    }

    /// An uninitialised C-contiguous array on the current device (its contents are whatever
    /// the memory held).
    pub fn empty(shape: impl IntoShape) -> Result<Array<T>> {
        Array::empty_on(shape, &Stream::current()?)
    }

    /// An array of `shape` with the C-order elements `data`, on `stream`'s device.
    pub fn from_shape_vec_on(
        shape: impl IntoShape,
        data: &[T],
        stream: &Stream,
    ) -> Result<Array<T>> {
        let shape = shape.into_shape();
        let n = shape::size_of(&shape)?;
        if n != data.len() {
            return Err(Error::InvalidShape {
                op: "from_shape_vec",
                detail: format!(
                    "shape {shape:?} has {n} elements but {} values were given",
                    data.len()
                ),
            });
        }
        let a = Array::empty_on(shape, stream)?;
        a.buf.write_bytes(0, as_bytes(data), stream)?;
        Ok(a)
    }

    /// An array of `shape` with the C-order elements `data`, on the current device.
    pub fn from_shape_vec(shape: impl IntoShape, data: Vec<T>) -> Result<Array<T>> {
        Array::from_shape_vec_on(shape, &data, &Stream::current()?)
    }

    /// A 1-D array with a copy of `data`.
    pub fn from_slice(data: &[T]) -> Result<Array<T>> {
        Array::from_shape_vec_on([data.len()], data, &Stream::current()?)
    }

    /// A 1-D array with the elements of `data`.
    pub fn from_vec(data: Vec<T>) -> Result<Array<T>> {
        Array::from_slice(&data)
    }

    /// An array of `shape` whose bytes are all zero (a memset): 0, `false`, `0+0i`, and for a
    /// struct every field zero.
    pub fn zeros(shape: impl IntoShape) -> Result<Array<T>> {
        let stream = Stream::current()?;
        let a = Array::empty_on(shape, &stream)?;
        a.buf.zero(&stream)?;
        Ok(a)
    }

    /// An array with the buffer, shape, strides (in elements) and offset given; an error if
    /// the layout reaches outside the buffer.
    pub fn from_parts(
        buffer: Arc<DeviceBuffer>,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> Result<Array<T>> {
        if shape.len() != strides.len() {
            return Err(Error::InvalidShape {
                op: "from_parts",
                detail: format!("shape {shape:?} and strides {strides:?} differ in length"),
            });
        }
        shape::size_of(&shape)?;
        let cap = buffer.len_bytes() / std::mem::size_of::<T>();
        if let Some((lo, hi)) = shape::index_range(&shape, &strides, offset as isize)
            && (lo < 0 || hi as usize >= cap)
        {
            return Err(Error::InvalidSlice {
                detail: format!(
                    "shape {shape:?}, strides {strides:?} and offset {offset} reach elements \
                     {lo}..={hi}, outside the buffer of {cap} elements"
                ),
            });
        }
        Ok(Array {
            buf: buffer,
            layout: Layout::new(shape, strides, offset),
            _t: PhantomData,
        })
    }
}

impl<T: Scalar> Array<T> {
    /// An array of `shape` filled with `value`, filled on the device: a memset when the value's
    /// bytes are all zero, else the built-in fill kernel.
    pub fn full(shape: impl IntoShape, value: T) -> Result<Array<T>> {
        let stream = Stream::current()?;
        let mut a = Array::empty_on(shape, &stream)?;
        if as_bytes(std::slice::from_ref(&value))
            .iter()
            .all(|&b| b == 0)
        {
            a.buf.zero(&stream)?;
        } else {
            a.fill(value)?;
        }
        Ok(a)
    }
}

impl<T: Number> Array<T> {
    /// An array of `shape` filled with ones.
    pub fn ones(shape: impl IntoShape) -> Result<Array<T>> {
        Array::full(shape, T::one())
    }

    /// `[0, 1, ..., n-1]`.
    pub fn arange(n: usize) -> Result<Array<T>> {
        let v: Vec<T> = (0..n).map(|i| T::from_i64(i as i64)).collect();
        Array::from_vec(v)
    }
}

impl<T: Real> Array<T> {
    /// `start, start + step, ...` up to but excluding `stop` (NumPy's `arange(start, stop,
    /// step)`: `ceil((stop - start) / step)` elements). Values are computed in `f64` and
    /// converted, so integer values beyond 2^53 are not exact.
    pub fn arange_step(start: T, stop: T, step: T) -> Result<Array<T>> {
        let (a, b, s) = (start.to_f64(), stop.to_f64(), step.to_f64());
        if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
            return Err(Error::InvalidShape {
                op: "arange_step",
                detail: format!(
                    "start {start:?}, stop {stop:?}, step {step:?}: the step must be non-zero \
                     and all three finite"
                ),
            });
        }
        let n = ((b - a) / s).ceil().max(0.0);
        if n > (isize::MAX as f64) {
            return Err(Error::InvalidShape {
                op: "arange_step",
                detail: format!("{n} elements are too many"),
            });
        }
        let n = n as usize;
        let v: Vec<T> = (0..n).map(|i| T::from_f64(a + i as f64 * s)).collect();
        Array::from_vec(v)
    }
}

impl<T: Float> Array<T> {
    /// `num` evenly spaced values from `start` to `stop`, both included (NumPy's `linspace`).
    pub fn linspace(start: T, stop: T, num: usize) -> Result<Array<T>> {
        let (a, b) = (start.to_f64(), stop.to_f64());
        let v: Vec<T> = match num {
            0 => Vec::new(),
            1 => vec![start],
            _ => {
                let step = (b - a) / (num - 1) as f64;
                (0..num)
                    .map(|i| {
                        if i == num - 1 {
                            stop
                        } else {
                            T::from_f64(a + i as f64 * step)
                        }
                    })
                    .collect()
            }
        };
        Array::from_vec(v)
    }
}

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

    /// `x` as a new array (NumPy's `array`, whose `copy=True` is the default): an [`Array`] is
    /// copied (C-contiguous, on its device), host data is copied to the current device.
    // NumPy's name, which a CuPy user looks for, is worth clippy's objection to `Array::array`.
    #[allow(clippy::self_named_constructors)]
    pub fn array(x: impl AsArray<T>) -> Result<Array<T>> {
        x.into_new_array()
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
    /// The device array: a view of an [`Array`], a copy of host data.
    fn into_array(self) -> Result<Array<T>>;

    /// A device array that shares no memory with `self` ([`Array::array`]).
    fn into_new_array(self) -> Result<Array<T>>
    where
        Self: Sized,
    {
        self.into_array()
    }
}

impl<T: Element> AsArray<T> for &Array<T> {
    fn into_array(self) -> Result<Array<T>> {
        Ok(self.clone())
    }

    fn into_new_array(self) -> Result<Array<T>> {
        self.copy()
    }
}

impl<T: Element> AsArray<T> for Array<T> {
    fn into_array(self) -> Result<Array<T>> {
        Ok(self)
    }

    fn into_new_array(self) -> Result<Array<T>> {
        self.copy()
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
