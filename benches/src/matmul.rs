//! The `matmul` rows (issue 36): `Array::matmul` (runtime/src/linalg/: cuBLAS through the
//! runtime's handle, with its checks, its output allocation and its stream set-up) at 4096^3 f32
//! and 8192^3 bf16 (bf16 output, f32 accumulation), each next to the same cuBLAS function
//! (`cublasGemmEx`, the same types and compute type) called directly on the bench's own handle
//! into a preallocated output, timed alternately in the same run (CUDA events, median of 10 after
//! 3 warm-up calls each). The products are the same cuBLAS kernels, so the ratio is the
//! wrapper's cost; the target is 0.98. f32 runs in full precision unless `CUPY_TF32=1`, and the
//! direct call then asks for TF32 too. cuBLAS is loaded at run time as for the SGEMM row
//! (`sgemm.rs`).

use cudarc::cublas::{result as blas, sys as blas_sys};
use cuprum::__workspace::env;
use cuprum::prelude::bf16;
use cuprum_runtime::{Array, Error, Result, Stream};

use crate::Row;
use crate::gemm_bf16::alternate;
use crate::sgemm::Cublas;

/// An element type of the rows.
trait Elem: cuprum_runtime::Number {
    const DATA: blas_sys::cudaDataType;
    fn of(v: f32) -> Self;
    fn f(self) -> f32;
}

impl Elem for f32 {
    const DATA: blas_sys::cudaDataType = blas_sys::cudaDataType::CUDA_R_32F;
    fn of(v: f32) -> f32 {
        v
    }
    fn f(self) -> f32 {
        self
    }
}

impl Elem for bf16 {
    const DATA: blas_sys::cudaDataType = blas_sys::cudaDataType::CUDA_R_16BF;
    fn of(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
    fn f(self) -> f32 {
        self.to_f32()
    }
}

/// The rows (none when libcublas is not found: the SGEMM row says so already).
pub fn rows(stream: &Stream) -> Result<Vec<Row>> {
    // SAFETY: a look-up of the library by name; nothing is called.
    if !unsafe { blas_sys::is_culib_present() } {
        return Ok(Vec::new());
    }
    let blas = Cublas::new(stream)?;
    let tf32 = env::tf32()?;
    let f32_compute = if tf32 {
        blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32
    } else {
        blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F
    };
    let f32_name = if tf32 {
        "matmul 4096^3 f32 (CUPY_TF32=1)"
    } else {
        "matmul 4096^3 f32"
    };
    Ok(vec![
        row::<f32>(stream, &blas, 4096, f32_compute, f32_name)?,
        row::<bf16>(
            stream,
            &blas,
            8192,
            blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            "matmul 8192^3 bf16",
        )?,
    ])
}

fn row<T: Elem>(
    stream: &Stream,
    blas: &Cublas,
    n: usize,
    compute: blas_sys::cublasComputeType_t,
    name: &'static str,
) -> Result<Row> {
    let flop = 2.0 * (n as f64).powi(3);
    // Inputs in [-1, 1) from a fixed LCG (non-trivial data; the row needs no randomness).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        T::of(((state >> 40) as f32) / (1u64 << 23) as f32 - 1.0)
    };
    let a = Array::from_shape_vec([n, n], (0..n * n).map(|_| next()).collect::<Vec<T>>())?;
    let b = Array::from_shape_vec([n, n], (0..n * n).map(|_| next()).collect::<Vec<T>>())?;
    let reference = Array::<T>::zeros([n, n])?;
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B (n x k, ld n) by A.
    let theirs = || -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let ni = n as i32;
        let op = blas_sys::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the three device arrays hold n * n elements of T, leading dimension n; alpha
        // and beta are host f32 scalars (the default pointer mode, f32 compute).
        unsafe {
            blas::gemm_ex(
                blas.handle(),
                op,
                op,
                ni,
                ni,
                ni,
                (&alpha as *const f32).cast(),
                b.device_ptr() as *const _,
                T::DATA,
                ni,
                a.device_ptr() as *const _,
                T::DATA,
                ni,
                (&beta as *const f32).cast(),
                reference.device_ptr() as *mut _,
                T::DATA,
                ni,
                compute,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| Error::Unsupported {
            what: format!("cublasGemmEx: {e:?}"),
        })
    };
    // Correctness first: the same cuBLAS computation, so the same values (up to a rounding of the
    // result, relative to |C| or 1, in case cuBLAS picks another kernel for the other handle).
    let ours = a.matmul(&b)?;
    theirs()?;
    let (got, want) = (ours.to_vec()?, reference.to_vec()?);
    let worst = got
        .iter()
        .zip(&want)
        .map(|(x, y)| (x.f() - y.f()).abs() / y.f().abs().max(1.0))
        .fold(0.0f32, f32::max) as f64;
    if worst.is_nan() || worst > 1e-2 {
        return Err(Error::Unsupported {
            what: format!("{name}: Array::matmul differs from cuBLAS: max relative difference {worst:.3e}"),
        });
    }
    drop(ours);
    let time = |f: &mut dyn FnMut() -> Result<()>| crate::event_ms(stream, f);
    let tflops = |ms: f64| flop / (ms * 1e-3) / 1e12;
    let (ours_ms, theirs_ms) = alternate(&mut || a.matmul(&b).map(drop), &mut || theirs(), &time)?;
    Ok(Row {
        name,
        value: tflops(ours_ms),
        unit: "TFLOP/s",
        ceiling_name: "the same cublasGemmEx called directly",
        ceiling: tflops(theirs_ms),
        target: Some((">=", 0.98)),
        note: format!(
            "Array::matmul (output allocated per call) against cuBLAS into a preallocated output, median of 10 timed alternately; max |C - C_cuBLAS| / max(|C|, 1) {worst:.1e}"
        ),
    })
}
