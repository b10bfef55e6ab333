//! Conversions and copies: `astype`, `fill`, `assign`, and the device-side copy behind
//! `Array::copy`.

use super::{builtin, launch_into, launch_new, unary};
use crate::array::Array;
use crate::element::{ElemType, Element};
use crate::elementwise::{self, Arg, ArrayArg, Options};
use crate::error::{Error, Result};
use crate::{DType, Scalar};

impl<T: Scalar> Array<T> {
    /// A new C-contiguous array of element type `U` with the elements converted as Rust's `as`
    /// does (integers wrap or sign-extend, floats to integers saturate and NaN becomes 0, to
    /// floats round to nearest, `bool` to numbers is 0/1); to `bool` it is "non-zero" (NumPy's
    /// rule, as Rust has no `as bool`). The same dtype is a copy. Complex numbers convert only to
    /// `bool` for now (an error otherwise).
    pub fn astype<U: Scalar>(&self) -> Result<Array<U>> {
        let (from, to) = (T::DTYPE, U::DTYPE);
        if from == to {
            return unary::<T, U>(builtin!(copy), self);
        }
        if to == DType::Bool {
            return unary::<T, U>(builtin!(nonzero), self);
        }
        if from.is_complex() || to.is_complex() {
            return Err(Error::Unsupported {
                what: format!("astype from {from} to {to}: casts involving complex numbers are not implemented yet (only to bool)"),
            });
        }
        let cast = match from {
            DType::Bool => builtin!(cast_bool),
            DType::I8 => builtin!(cast_i8),
            DType::I16 => builtin!(cast_i16),
            DType::I32 => builtin!(cast_i32),
            DType::I64 => builtin!(cast_i64),
            DType::U8 => builtin!(cast_u8),
            DType::U16 => builtin!(cast_u16),
            DType::U32 => builtin!(cast_u32),
            DType::U64 => builtin!(cast_u64),
            DType::F16 => builtin!(cast_f16),
            DType::BF16 => builtin!(cast_bf16),
            DType::F32 => builtin!(cast_f32),
            DType::F64 => builtin!(cast_f64),
            DType::F8E4M3 => builtin!(cast_f8e4m3),
            DType::F8E5M2 => builtin!(cast_f8e5m2),
            DType::C32 | DType::C64 => unreachable!("complex casts are rejected above"),
        };
        launch_new::<U>(cast, &[to], &[Arg::input(self)])
    }

    /// Sets every element to `value`; any layout (a strided view writes only its elements). A
    /// broadcast view (stride 0) is an error.
    pub fn fill(&mut self, value: T) -> Result<()> {
        if self.device().is_cpu() {
            return self.write_host("fill", |_| value);
        }
        launch_into(builtin!(copy), &[T::DTYPE], &[Arg::scalar(elementwise::Value::of(value)), Arg::output(self)])
    }

    /// Copies `src` (broadcast to this array's shape) into this array, in any layout.
    pub fn assign(&mut self, src: &Array<T>) -> Result<()> {
        if self.device().is_cpu() && src.device().is_cpu() {
            // Read whole before any write: `src` may be a view of this array's buffer.
            let values = src.broadcast_to(self.shape())?.to_vec()?;
            return self.write_host("assign", |k| values[k]);
        }
        launch_into(builtin!(copy), &[T::DTYPE], &[Arg::input(src), Arg::output(self)])
    }
}

/// The dtype whose copy kernel copies elements of type `elem` bit for bit: its own for a scalar;
/// for a struct of 1, 2, 4, 8 or 16 bytes the integer of that size (`u8`, `u16`, `i32`, `i64`:
/// the signed ones have precompiled copy instances) or, for 16 bytes, `Complex<f64>` (a plain
/// 16-byte load and store). Every element of an array sits at a multiple of its size
/// from the buffer's start (the pool's blocks are 256-byte aligned), so that type's alignment
/// holds even when the struct's own is smaller. `None` for other sizes.
pub(crate) fn copy_dtype(elem: ElemType) -> Option<DType> {
    match elem {
        ElemType::Scalar(d) => Some(d),
        ElemType::Struct(s) => match s.size {
            1 => Some(DType::U8),
            2 => Some(DType::U16),
            4 => Some(DType::I32),
            8 => Some(DType::I64),
            16 => Some(DType::C64),
            _ => None,
        },
    }
}

impl<T: Element> Array<T> {
    /// The device-side copy behind [`Array::copy`] (and the `to_vec` of a non-contiguous view),
    /// when [`copy_dtype`] has a dtype for `T` (`None` for a struct of another size).
    pub(crate) fn copy_on_device(&self) -> Option<Result<Array<T>>> {
        if self.device().is_cpu() {
            // The host gathers the elements itself (`to_vec`): no kernel to launch.
            return None;
        }
        let dtype = copy_dtype(T::ELEM)?;
        Some(self.copy_as(dtype))
    }

    /// A C-contiguous copy made by the copy kernel of `dtype`, whose size is `T`'s: both arrays
    /// are described to the launch as arrays of `dtype` (same addresses, shape and strides).
    fn copy_as(&self, dtype: DType) -> Result<Array<T>> {
        let b = builtin!(copy);
        let stream = elementwise::output_stream(&Options::default(), &[Arg::input(self)])?;
        let out = Array::<T>::empty_on(self.shape(), &stream)?;
        let elem = ElemType::Scalar(dtype);
        let args = [
            Arg::In(ArrayArg { elem, ..ArrayArg::of(self) }),
            Arg::Out(ArrayArg { elem, ..ArrayArg::of(&out) }),
        ];
        elementwise::launch(b, &[dtype], &args, &Options::default())?;
        Ok(out)
    }
}

