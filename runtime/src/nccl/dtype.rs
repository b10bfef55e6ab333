//! cuprum's dtypes as NCCL's `ncclDataType_t`: the ten NCCL has; every other element type is an
//! error naming them, before anything is launched.

use std::ffi::c_int;

use cudarc::nccl::sys::ncclDataType_t;

use crate::DType;
use crate::elem_type::ElemType;
use crate::error::{Error, Result};

/// The dtypes NCCL moves and reduces, as the error text names them.
pub const SUPPORTED: &str = "i8, u8, i32, u32, i64, u64, f16, bf16, f32 and f64";

/// NCCL's data type for arrays of `elem` (the `int` NCCL's functions take); `op` names the
/// collective for the error.
pub(super) fn nccl_dtype(elem: ElemType, op: &str) -> Result<c_int> {
    use ncclDataType_t::*;
    let t = match elem {
        ElemType::Scalar(DType::I8) => ncclInt8,
        ElemType::Scalar(DType::U8) => ncclUint8,
        ElemType::Scalar(DType::I32) => ncclInt32,
        ElemType::Scalar(DType::U32) => ncclUint32,
        ElemType::Scalar(DType::I64) => ncclInt64,
        ElemType::Scalar(DType::U64) => ncclUint64,
        ElemType::Scalar(DType::F16) => ncclFloat16,
        ElemType::Scalar(DType::BF16) => ncclBfloat16,
        ElemType::Scalar(DType::F32) => ncclFloat32,
        ElemType::Scalar(DType::F64) => ncclFloat64,
        other => {
            return Err(Error::Unsupported {
                what: format!(
                    "NCCL's {op} of {} arrays: NCCL has {SUPPORTED}; convert with `astype` first (bool as u8, \
                     a complex array as its real and imaginary parts{})",
                    other.rust_name(),
                    // NCCL 2.28 has no 8-bit floats; their bytes travel exactly as u8.
                    if other.dtype().is_some_and(|d| d.is_fp8()) {
                        "; an 8-bit float array broadcast, gathered or sent as is moves exactly as its bytes: \
                         `array.view::<u8>()`, and back with `view::<f8e4m3>()`; reduce it in f16, bf16 or f32"
                    } else {
                        ""
                    }
                ),
            });
        }
    };
    Ok(t as c_int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nccl_dtype_maps_to_nccl_s_number() {
        // nccl.h: ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5,
        // ncclFloat16 6, ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9.
        let expected = [
            (DType::I8, 0),
            (DType::U8, 1),
            (DType::I32, 2),
            (DType::U32, 3),
            (DType::I64, 4),
            (DType::U64, 5),
            (DType::F16, 6),
            (DType::F32, 7),
            (DType::F64, 8),
            (DType::BF16, 9),
        ];
        for (d, n) in expected {
            assert_eq!(nccl_dtype(ElemType::Scalar(d), "all_reduce").unwrap(), n, "{d:?}");
        }
    }

    #[test]
    fn other_dtypes_are_refused_naming_the_supported_ones() {
        for d in [DType::Bool, DType::I16, DType::U16, DType::C32, DType::C64, DType::F8E4M3, DType::F8E5M2] {
            let e = nccl_dtype(ElemType::Scalar(d), "all_reduce").unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, Error::Unsupported { .. }), "{d:?}: {e:?}");
            assert!(text.contains(SUPPORTED) && text.contains("all_reduce"), "{d:?}: {text}");
            assert_eq!(text.contains("view::<u8>()"), d.is_fp8(), "{d:?}: {text}");
        }
    }
}
