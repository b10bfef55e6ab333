//! A batched matrix product on a GPU: one cuBLAS call (`cublasGemmEx` for one product,
//! `cublasGemmStridedBatchedEx` for several; their `_64` form when an extent or a leading
//! dimension passes `i32`).
//!
//! cuBLAS is column-major and the arrays are row-major, so the row-major `C = A B` is computed as
//! the column-major `C^T = B^T A^T`: `b` is cuBLAS's first operand and `a` its second. Each
//! operand is used where it lies when its layout is a stack of matrices cuBLAS can read: each
//! matrix row-major (column stride 1: transpose flag `N`) or column-major (row stride 1, as a
//! transposed view of a contiguous array: flag `T`) with a leading dimension, and the matrices of
//! the batch one stride apart (0 for an operand broadcast over the batch). Any other layout
//! (negative strides, gaps between batch axes, a broadcast matrix) is first copied to a
//! C-contiguous array by the copy kernel. The result is a new C-contiguous array.
//!
//! Types: f32 and f64 in their own precision (f32 through TF32 tensor cores only with
//! `CUPY_TF32=1`), f16 and bf16 with f32 accumulation, complex64 and complex128; cuBLAS has no
//! GEMM for the integer types, which are an error here (docs/runtime.md, Matrix products).

use std::ffi::c_void;

use cudarc::cublas::sys::{self, cublasComputeType_t as Compute, cublasOperation_t as Op, cudaDataType as Data};

use crate::array::Array;
use crate::env;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::{DType, Number};

use super::cublas;

/// cuBLAS's element type, compute type and whether alpha and beta are double precision, for
/// `dtype`; an error naming it when cuBLAS has no GEMM for it.
pub(super) fn types(dtype: DType) -> Result<(Data, Compute, bool)> {
    let f32_compute = || -> Result<Compute> {
        Ok(if env::tf32()? { Compute::CUBLAS_COMPUTE_32F_FAST_TF32 } else { Compute::CUBLAS_COMPUTE_32F })
    };
    Ok(match dtype {
        DType::F32 => (Data::CUDA_R_32F, f32_compute()?, false),
        DType::F64 => (Data::CUDA_R_64F, Compute::CUBLAS_COMPUTE_64F, true),
        DType::F16 => (Data::CUDA_R_16F, Compute::CUBLAS_COMPUTE_32F, false),
        DType::BF16 => (Data::CUDA_R_16BF, Compute::CUBLAS_COMPUTE_32F, false),
        DType::C32 => (Data::CUDA_C_32F, f32_compute()?, false),
        DType::C64 => (Data::CUDA_C_64F, Compute::CUBLAS_COMPUTE_64F, true),
        other => {
            return Err(Error::Unsupported {
                what: format!(
                    "a matrix product of {other:?} arrays on a GPU: cuBLAS multiplies only f16, bf16, \
                     f32, f64 and complex matrices. Convert first (`astype::<f64>()` is exact for \
                     integers below 2^53 in magnitude) or compute on the CPU device"
                ),
            });
        }
    })
}

/// An operand as cuBLAS reads it.
struct Form {
    ptr: u64,
    op: Op,
    ld: i64,
    stride: i64,
}

/// The single stride between the matrices of a batch of extents `shape` and strides `strides`
/// (0 when there is one matrix, or one broadcast over all); `None` when the batch axes are not
/// one stride apart.
fn batch_stride(shape: &[usize], strides: &[isize]) -> Option<i64> {
    let dims: Vec<(usize, isize)> = shape.iter().copied().zip(strides.iter().copied()).filter(|&(d, _)| d > 1).collect();
    let Some(&(_, last)) = dims.last() else {
        return Some(0);
    };
    let nested = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
    (nested && last >= 0).then_some(last as i64)
}

/// How cuBLAS reads `x`, a stack of `rows x cols` matrices, as the operand `op(X)` of the
/// column-major product with `op` applied to its transpose (see the module's text): `N` for
/// row-major matrices, `T` (`C` with `conj`) for column-major ones. `conj` (complex only) needs
/// the column-major form. `None` when the layout has neither.
fn form<T: Number>(x: &Array<T>, rows: usize, cols: usize, conj: bool) -> Option<Form> {
    let nd = x.ndim();
    let (sr, sc) = (x.strides()[nd - 2], x.strides()[nd - 1]);
    let stride = batch_stride(&x.shape()[..nd - 2], &x.strides()[..nd - 2])?;
    let (r1, c1) = (rows.max(1) as isize, cols.max(1) as isize);
    let row_major = !conj && (cols == 1 || sc == 1) && (rows == 1 || sr >= c1);
    let col_major = (rows == 1 || sr == 1) && (cols == 1 || sc >= r1);
    let (op, ld) = if row_major {
        (Op::CUBLAS_OP_N, if rows == 1 { c1 } else { sr })
    } else if col_major {
        (if conj { Op::CUBLAS_OP_C } else { Op::CUBLAS_OP_T }, if cols == 1 { r1 } else { sc })
    } else {
        return None;
    };
    Some(Form { ptr: x.device_ptr(), op, ld: ld as i64, stride })
}

/// `x`'s form, after a copy when its layout has none: C-contiguous, or for `conj` the
/// column-major matrices of a C-contiguous copy of its transpose. The copy is returned with the
/// form, to be kept alive until the call is queued.
fn form_or_copy<T: Number>(x: &Array<T>, rows: usize, cols: usize, conj: bool) -> Result<(Form, Option<Array<T>>)> {
    if let Some(f) = form(x, rows, cols, conj) {
        return Ok((f, None));
    }
    let nd = x.ndim();
    let copy = if conj { x.swap_axes(nd - 2, nd - 1)?.copy()?.swap_axes(nd - 2, nd - 1)? } else { x.copy()? };
    let f = form(&copy, rows, cols, conj).ok_or_else(|| Error::Unsupported {
        what: format!("a matrix product: the copy of an operand of shape {:?} has no layout cuBLAS reads", x.shape()),
    })?;
    Ok((f, Some(copy)))
}

/// `out = a b` on a GPU, for `a` `[batch.., m, k]` and `b` `[batch.., k, n]` (the same batch
/// shape, broadcast views allowed) and `out` a new C-contiguous `[batch.., m, n]`, none of `m`,
/// `n`, `k` and the batch empty; with `conj`, `conj(a) b`. Queued on `stream`.
pub(super) fn gemm<T: Number>(a: &Array<T>, b: &Array<T>, out: &Array<T>, conj: bool, stream: &Stream) -> Result<()> {
    let (data, compute, double) = types(T::DTYPE)?;
    let nd = out.ndim();
    let (m, n) = (out.shape()[nd - 2], out.shape()[nd - 1]);
    let k = a.shape()[nd - 1];
    let batch: usize = out.shape()[..nd - 2].iter().product();
    let conj = conj && matches!(T::DTYPE, DType::C32 | DType::C64);
    // cuBLAS's first operand is b (n x k as it reads it), its second a (k x m).
    let (fb, _keep_b) = form_or_copy(b, k, n, false)?;
    let (fa, _keep_a) = form_or_copy(a, m, k, conj)?;
    let c = out.device_ptr();
    let (one32, zero32) = ([1.0f32, 0.0], [0.0f32, 0.0]);
    let (one64, zero64) = ([1.0f64, 0.0], [0.0f64, 0.0]);
    let (alpha, beta): (*const c_void, *const c_void) = if double {
        (one64.as_ptr().cast(), zero64.as_ptr().cast())
    } else {
        (one32.as_ptr().cast(), zero32.as_ptr().cast())
    };
    let algo = sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
    let (mc, nc, kc) = (n as i64, m as i64, k as i64);
    let small = [mc, nc, kc, fa.ld, fb.ld, batch as i64].iter().all(|&v| v <= i32::MAX as i64);
    let h = cublas::handle(stream)?;
    // SAFETY: every pointer is the first element of a live array of this device (the inputs, the
    // copies kept above, the output) whose layout `form` described exactly: each matrix lies
    // within its array at the leading dimension given, the batch at its stride; the output holds
    // `batch * m * n` elements, leading dimension n. alpha and beta are host scalars of the
    // compute type's precision (`double`; a complex one reads two values), read before the call
    // returns (the default host pointer mode). The handle is locked and set to `stream`.
    let status = unsafe {
        if batch == 1 && small {
            sys::cublasGemmEx(
                h.raw(), fb.op, fa.op, mc as i32, nc as i32, kc as i32, alpha,
                fb.ptr as *const c_void, data, fb.ld as i32,
                fa.ptr as *const c_void, data, fa.ld as i32,
                beta, c as *mut c_void, data, mc as i32, compute, algo,
            )
        } else if small {
            sys::cublasGemmStridedBatchedEx(
                h.raw(), fb.op, fa.op, mc as i32, nc as i32, kc as i32, alpha,
                fb.ptr as *const c_void, data, fb.ld as i32, fb.stride,
                fa.ptr as *const c_void, data, fa.ld as i32, fa.stride,
                beta, c as *mut c_void, data, mc as i32, (m * n) as i64, batch as i32, compute, algo,
            )
        } else {
            sys::cublasGemmStridedBatchedEx_64(
                h.raw(), fb.op, fa.op, mc, nc, kc, alpha,
                fb.ptr as *const c_void, data, fb.ld, fb.stride,
                fa.ptr as *const c_void, data, fa.ld, fa.stride,
                beta, c as *mut c_void, data, mc, (m * n) as i64, batch as i64, compute, algo,
            )
        }
    };
    let call = if batch == 1 && small { "cublasGemmEx" } else { "cublasGemmStridedBatchedEx" };
    cublas::check(call, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_strides_collapse_when_nested() {
        assert_eq!(batch_stride(&[], &[]), Some(0));
        assert_eq!(batch_stride(&[1, 1], &[7, 3]), Some(0));
        assert_eq!(batch_stride(&[4, 5], &[60, 12]), Some(12));
        assert_eq!(batch_stride(&[4, 5], &[0, 0]), Some(0));
        assert_eq!(batch_stride(&[4, 1, 5], &[60, 9, 12]), Some(12));
        assert_eq!(batch_stride(&[4, 5], &[0, 12]), None);
        assert_eq!(batch_stride(&[4, 5], &[61, 12]), None);
        assert_eq!(batch_stride(&[4], &[-12]), None);
    }

    #[test]
    fn integer_products_are_refused_on_a_gpu() {
        let e = types(DType::I32).unwrap_err().to_string();
        assert!(e.contains("I32") && e.contains("CPU device"), "{e}");
        assert!(types(DType::BF16).is_ok());
    }
}
