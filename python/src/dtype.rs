//! NumPy type strings (the CUDA Array Interface's `typestr`, [`Tensor`](crate::Tensor)'s `dtype`)
//! of cuprum's dtypes, and [`with_dtype!`](crate::with_dtype) to pick a Rust type from a dtype.

use cuprum::runtime::DType;

/// The NumPy type string of `dtype` (little-endian; `|` where byte order does not apply), or
/// `None` for bf16 and the 8-bit floats, which NumPy has no type for.
pub fn typestr(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::BF16 | DType::F8E4M3 | DType::F8E5M2 => return None,
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C32 => "<c8",
        DType::C64 => "<c16",
    })
}

/// The dtype of a NumPy type string (`<f4`, `|b1`; `=` and `>` for one-byte types too), or `None`
/// when cuprum has no such dtype (big-endian data, strings, records).
pub fn from_typestr(s: &str) -> Option<DType> {
    let (order, code) = s.split_at_checked(1)?;
    let readable = match order {
        "<" | "|" => true,
        "=" => cfg!(target_endian = "little"),
        // Big-endian: only one-byte types, which have no byte order.
        ">" => code.ends_with('1'),
        _ => false,
    };
    if !readable {
        return None;
    }
    DType::ALL.into_iter().find(|&d| typestr(d).is_some_and(|t| &t[1..] == code))
}

/// The name a Python user knows a dtype by (NumPy's and torch's: `float32`, `complex64`,
/// `bfloat16`), for messages.
pub fn python_name(dtype: DType) -> &'static str {
    dtype.numpy_name()
}

/// Runs `$body` with the type alias `$T` set to the Rust type of the dtype `$dtype` (a
/// [`DType`]): `with_dtype!(x.dtype(), |T| Tensor::new(x.array::<T>()?.copy()?))`.
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, |$T:ident| $body:expr) => {{
        use $crate::__private::{Complex, DType, bf16, f16, f8e4m3, f8e5m2};
        match $dtype {
            DType::Bool => { type $T = bool; $body }
            DType::I8 => { type $T = i8; $body }
            DType::I16 => { type $T = i16; $body }
            DType::I32 => { type $T = i32; $body }
            DType::I64 => { type $T = i64; $body }
            DType::U8 => { type $T = u8; $body }
            DType::U16 => { type $T = u16; $body }
            DType::U32 => { type $T = u32; $body }
            DType::U64 => { type $T = u64; $body }
            DType::F16 => { type $T = f16; $body }
            DType::BF16 => { type $T = bf16; $body }
            DType::F32 => { type $T = f32; $body }
            DType::F64 => { type $T = f64; $body }
            DType::C32 => { type $T = Complex<f32>; $body }
            DType::C64 => { type $T = Complex<f64>; $body }
            DType::F8E4M3 => { type $T = f8e4m3; $body }
            DType::F8E5M2 => { type $T = f8e5m2; $body }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typestrs_round_trip() {
        for d in DType::ALL {
            match typestr(d) {
                Some(t) => assert_eq!(from_typestr(t), Some(d), "{t}"),
                None => assert!(matches!(d, DType::BF16 | DType::F8E4M3 | DType::F8E5M2), "{d}"),
            }
        }
        assert_eq!(from_typestr(">f4"), None);
        assert_eq!(from_typestr("|u1"), Some(DType::U8));
        assert_eq!(from_typestr("<V2"), None);
    }
}
