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
//! GEMM for the integer types, which `integer.rs` multiplies (docs/runtime.md, Matrix products).

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
        Ok(if env::tf32()? {
            Compute::CUBLAS_COMPUTE_32F_FAST_TF32
        } else {
            Compute::CUBLAS_COMPUTE_32F
        })
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
                    "a matrix product of {other:?} arrays through cuBLAS, which multiplies only f16, bf16, \
                     f32, f64 and complex matrices (integers have their own kernel)"
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
    let dims: Vec<(usize, isize)> = shape
        .iter()
        .copied()
        .zip(strides.iter().copied())
        .filter(|&(d, _)| d > 1)
        .collect();
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
        (
            if conj { Op::CUBLAS_OP_C } else { Op::CUBLAS_OP_T },
            if cols == 1 { r1 } else { sc },
        )
    } else {
        return None;
    };
    Some(Form {
        ptr: x.device_ptr(),
        op,
        ld: ld as i64,
        stride,
    })
}

/// `x`'s form, after a copy when its layout has none: C-contiguous, or for `conj` the
/// column-major matrices of a C-contiguous copy of its transpose. The copy is returned with the
/// form, to be kept alive until the call is queued.
fn form_or_copy<T: Number>(x: &Array<T>, rows: usize, cols: usize, conj: bool) -> Result<(Form, Option<Array<T>>)> {
    if let Some(f) = form(x, rows, cols, conj) {
        return Ok((f, None));
    }
    let nd = x.ndim();
    let copy = if conj {
        x.swap_axes(nd - 2, nd - 1)?.copy()?.swap_axes(nd - 2, nd - 1)?
    } else {
        x.copy()?
    };
    let f = form(&copy, rows, cols, conj).ok_or_else(|| Error::Unsupported {
        what: format!(
            "a matrix product: the copy of an operand of shape {:?} has no layout cuBLAS reads",
            x.shape()
        ),
    })?;
    Ok((f, Some(copy)))
}

/// One cuBLAS product as `gemm` makes it: the column-major `C^T = op(first) op(second)` with
/// `first` read from `b` and `second` from `a` (see the module's text), cuBLAS's `m` (the
/// product's `n`), `n` (its `m`) and `k`, the batch, the output's address (leading dimension
/// `m`, matrices `m n` apart), and the copies the operands' forms read, kept until the call is
/// queued.
struct Call<T: Number> {
    first: Form,
    second: Form,
    m: i64,
    n: i64,
    k: i64,
    batch: i64,
    c: u64,
    _copies: [Option<Array<T>>; 2],
}

/// The cuBLAS call that computes `out = a b` (with `conj`, `conj(a) b`), for `a` `[batch.., m,
/// k]` and `b` `[batch.., k, n]` (the same batch shape, broadcast views allowed) and `out` a new
/// C-contiguous `[batch.., m, n]`.
fn plan<T: Number>(a: &Array<T>, b: &Array<T>, out: &Array<T>, conj: bool) -> Result<Call<T>> {
    let nd = out.ndim();
    let (m, n) = (out.shape()[nd - 2], out.shape()[nd - 1]);
    let k = a.shape()[nd - 1];
    let batch: usize = out.shape()[..nd - 2].iter().product();
    let conj = conj && matches!(T::DTYPE, DType::C32 | DType::C64);
    // cuBLAS's first operand is b (n x k as it reads it), its second a (k x m).
    let (first, copy_b) = form_or_copy(b, k, n, false)?;
    let (second, copy_a) = form_or_copy(a, m, k, conj)?;
    Ok(Call {
        first,
        second,
        m: n as i64,
        n: m as i64,
        k: k as i64,
        batch: batch as i64,
        c: out.device_ptr(),
        _copies: [copy_b, copy_a],
    })
}

/// `out = a b` on a GPU, for `a` `[batch.., m, k]` and `b` `[batch.., k, n]` (the same batch
/// shape, broadcast views allowed) and `out` a new C-contiguous `[batch.., m, n]`, none of `m`,
/// `n`, `k` and the batch empty; with `conj`, `conj(a) b`. Queued on `stream`.
pub(super) fn gemm<T: Number>(a: &Array<T>, b: &Array<T>, out: &Array<T>, conj: bool, stream: &Stream) -> Result<()> {
    let (data, compute, double) = types(T::DTYPE)?;
    let call = plan(a, b, out, conj)?;
    let (fb, fa) = (&call.first, &call.second);
    let (mc, nc, kc, batch) = (call.m, call.n, call.k, call.batch);
    let c = call.c;
    let (one32, zero32) = ([1.0f32, 0.0], [0.0f32, 0.0]);
    let (one64, zero64) = ([1.0f64, 0.0], [0.0f64, 0.0]);
    let (alpha, beta): (*const c_void, *const c_void) = if double {
        (one64.as_ptr().cast(), zero64.as_ptr().cast())
    } else {
        (one32.as_ptr().cast(), zero32.as_ptr().cast())
    };
    let algo = sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
    let small = [mc, nc, kc, fa.ld, fb.ld, batch].iter().all(|&v| v <= i32::MAX as i64);
    let h = cublas::handle(stream)?;
    // SAFETY: every pointer is the first element of a live array of this device (the inputs, the
    // copies `call` keeps, the output) whose layout `form` described exactly: each matrix lies
    // within its array at the leading dimension given, the batch at its stride; the output holds
    // `batch * m * n` elements, leading dimension `mc`. alpha and beta are host scalars of the
    // compute type's precision (`double`; a complex one reads two values), read before the call
    // returns (the default host pointer mode). The handle is locked and set to `stream`.
    let status = unsafe {
        if batch == 1 && small {
            sys::cublasGemmEx(
                h.raw(),
                fb.op,
                fa.op,
                mc as i32,
                nc as i32,
                kc as i32,
                alpha,
                fb.ptr as *const c_void,
                data,
                fb.ld as i32,
                fa.ptr as *const c_void,
                data,
                fa.ld as i32,
                beta,
                c as *mut c_void,
                data,
                mc as i32,
                compute,
                algo,
            )
        } else if small {
            sys::cublasGemmStridedBatchedEx(
                h.raw(),
                fb.op,
                fa.op,
                mc as i32,
                nc as i32,
                kc as i32,
                alpha,
                fb.ptr as *const c_void,
                data,
                fb.ld as i32,
                fb.stride,
                fa.ptr as *const c_void,
                data,
                fa.ld as i32,
                fa.stride,
                beta,
                c as *mut c_void,
                data,
                mc as i32,
                mc * nc,
                batch as i32,
                compute,
                algo,
            )
        } else {
            sys::cublasGemmStridedBatchedEx_64(
                h.raw(),
                fb.op,
                fa.op,
                mc,
                nc,
                kc,
                alpha,
                fb.ptr as *const c_void,
                data,
                fb.ld,
                fb.stride,
                fa.ptr as *const c_void,
                data,
                fa.ld,
                fa.stride,
                beta,
                c as *mut c_void,
                data,
                mc,
                mc * nc,
                batch,
                compute,
                algo,
            )
        }
    };
    let name = if batch == 1 && small {
        "cublasGemmEx"
    } else {
        "cublasGemmStridedBatchedEx"
    };
    cublas::check(name, status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

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

    /// Element `(i, j)` of `op(X)` for the form `f` of matrix `q` of the batch, as cuBLAS reads
    /// it (column-major at leading dimension `ld`).
    ///
    /// # Safety
    ///
    /// `f` describes host memory of `T` (an array of the CPU device) holding that element.
    unsafe fn read<T: Copy>(f: &Form, q: i64, i: i64, j: i64, conj: impl Fn(T) -> T) -> T {
        let (r, c) = if f.op == Op::CUBLAS_OP_N { (i, j) } else { (j, i) };
        // SAFETY: the caller's.
        let v = unsafe { *(f.ptr as *const T).offset((q * f.stride + r + c * f.ld) as isize) };
        if f.op == Op::CUBLAS_OP_C { conj(v) } else { v }
    }

    /// The call `plan` makes, run by a host emulation of `cublasGemmStridedBatchedEx` (alpha 1,
    /// beta 0) over arrays of the CPU device, whose `device_ptr` is a host address.
    fn emulate<T: Number>(a: &Array<T>, b: &Array<T>, conj: bool, cj: impl Fn(T) -> T + Copy) -> Vec<T> {
        let nd = a.ndim();
        let mut shape = a.shape()[..nd - 1].to_vec();
        shape.push(b.shape()[nd - 1]);
        let out = Array::<T>::zeros(shape).unwrap();
        let call = plan(a, b, &out, conj).unwrap();
        let mut c = vec![T::zero(); (call.batch * call.m * call.n) as usize];
        for q in 0..call.batch {
            for i in 0..call.m {
                for j in 0..call.n {
                    let mut acc = T::zero();
                    for p in 0..call.k {
                        // SAFETY: the forms describe the CPU device's arrays `plan` read (or its
                        // copies, which `call` keeps), at indices cuBLAS would read.
                        let (x, y) = unsafe { (read(&call.first, q, i, p, cj), read(&call.second, q, p, j, cj)) };
                        acc += x * y;
                    }
                    c[(q * call.m * call.n + i + j * call.m) as usize] = acc;
                }
            }
        }
        c
    }

    /// The naive product of C-order stacks (`a` `[q, m, k]`, `b` `[q, k, n]`), `f` applied to `a`.
    fn naive<T: Number>(a: &[T], b: &[T], q: usize, m: usize, k: usize, n: usize, f: impl Fn(T) -> T) -> Vec<T> {
        let mut c = Vec::new();
        for s in 0..q {
            for i in 0..m {
                for j in 0..n {
                    let mut acc = T::zero();
                    for p in 0..k {
                        acc += f(a[s * m * k + i * k + p]) * b[s * k * n + p * n + j];
                    }
                    c.push(acc);
                }
            }
        }
        c
    }

    /// The operands' forms (transpose flags, leading dimensions, batch strides, copies) make
    /// cuBLAS compute NumPy's product: checked by emulating the call on the CPU device's arrays
    /// for every kind of layout, since the GPU itself is not available to every test run.
    #[test]
    fn forms_give_the_product() {
        let _cpu = crate::Device::cpu().use_scoped().unwrap();
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % 19) as f64 - 9.5
        };
        let (m, k, n, q) = (3usize, 4usize, 5usize, 6usize);
        let mut arr = |shape: &[usize]| {
            let len = shape.iter().product();
            Array::from_shape_vec(shape.to_vec(), (0..len).map(|_| next()).collect::<Vec<f64>>()).unwrap()
        };
        let a = arr(&[q, m, k]);
        let b = arr(&[q, k, n]);
        let at = arr(&[q, k, m]).swap_axes(1, 2).unwrap();
        let bt = arr(&[q, n, k]).swap_axes(1, 2).unwrap();
        let a2 = arr(&[m, k]).broadcast_to([q, m, k]).unwrap();
        let arev = arr(&[q, m, k]).slice(2, crate::Slice::new(None, None, -1)).unwrap();
        let bgap = arr(&[q, k, 2 * n]).slice(2, crate::Slice::new(None, None, 2)).unwrap();
        let bperm = arr(&[k, q, n]).permute(&[1, 0, 2]).unwrap();
        let a1 = arr(&[q, 1, k]);
        let b1 = arr(&[q, k, 1]);
        let acol = arr(&[k, q * 3])
            .slice(1, ..q as isize)
            .unwrap()
            .permute(&[1, 0])
            .unwrap()
            .expand_dims(1)
            .unwrap();
        let cases: Vec<(&str, &Array<f64>, &Array<f64>)> = vec![
            ("contiguous", &a, &b),
            ("transposed", &at, &b),
            ("both transposed", &at, &bt),
            ("broadcast batch", &a2, &bt),
            ("reversed columns (copied)", &arev, &b),
            ("column gaps", &a, &bgap),
            ("permuted batch (rows q n apart)", &a, &bperm),
            ("row and column vectors", &a1, &b1),
            ("a strided row", &acol, &b),
        ];
        for (what, x, y) in cases {
            let (hx, hy) = (x.to_vec().unwrap(), y.to_vec().unwrap());
            let (mm, kk, nn) = (x.shape()[1], x.shape()[2], y.shape()[2]);
            let want = naive(&hx, &hy, q, mm, kk, nn, |v| v);
            assert_eq!(emulate(x, y, false, |v| v), want, "{what}");
        }
        // conj(a) b: the conjugate transpose of a column-major copy.
        let cx: Vec<Complex<f64>> = (0..q * m * k).map(|_| Complex::new(next(), next())).collect();
        let cy: Vec<Complex<f64>> = (0..q * k * n).map(|_| Complex::new(next(), next())).collect();
        let x = Array::from_shape_vec([q, m, k], cx.clone()).unwrap();
        let y = Array::from_shape_vec([q, k, n], cy.clone()).unwrap();
        let want = naive(&cx, &cy, q, m, k, n, |v| v.conj());
        assert_eq!(emulate(&x, &y, true, |v: Complex<f64>| v.conj()), want, "conj");
        let x1 = Array::from_shape_vec([1, k], cx[..k].to_vec()).unwrap();
        let y1 = Array::from_shape_vec([k, 1], cy[..k].to_vec()).unwrap();
        assert_eq!(
            emulate(&x1, &y1, true, |v: Complex<f64>| v.conj()),
            naive(&cx[..k], &cy[..k], 1, 1, k, 1, |v| v.conj()),
            "vdot"
        );
    }

    #[test]
    fn cublas_takes_the_float_types_only() {
        let e = types(DType::I32).unwrap_err().to_string();
        assert!(e.contains("I32") && e.contains("cuBLAS"), "{e}");
        for d in [DType::F16, DType::BF16, DType::F32, DType::F64, DType::C32, DType::C64] {
            assert!(types(d).is_ok(), "{d:?}");
        }
    }
}
