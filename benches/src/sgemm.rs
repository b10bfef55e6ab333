//! The SGEMM row: the `#[rawkernel]` of `examples/kernels/sgemm.rs` at 4096^3 (f32, column-major,
//! C = A B), next to cuBLAS's `cublasSgemm` on the same arrays in the same run (FP32 arithmetic:
//! the handle's default math mode, which does not use TF32 for `cublasSgemm` unless
//! `NVIDIA_TF32_OVERRIDE=1` is set). The two are timed alternately (CUDA events, median of 10
//! after 3 warm-up calls each), so both see the same clocks.
//!
//! cuBLAS is loaded at run time (cudarc's dynamic loading: `libcublas.so`, `.so.13`, `.so.12`, ...
//! from the library path). Where it is not found the row is printed without a ceiling and says
//! so; where only PyTorch's wheels carry it, put their folder on the path, e.g.
//! `LD_LIBRARY_PATH=$(dirname "$(find / -name 'libcublas.so.*' 2>/dev/null | head -1)")`.

use cudarc::cublas::{result as blas, sys as blas_sys};
use cuprum_runtime::LaunchConfig;
use cuprum_runtime::{Array, Error, Result, Stream};

use crate::{Row, median};

#[path = "../../examples/kernels/sgemm.rs"]
mod kernel;

/// The row, and cuBLAS's figure (also listed with the ceilings) when cuBLAS was found.
pub fn rows(stream: &Stream) -> Result<(Row, Option<f64>)> {
    let n = 4096usize;
    let flop = 2.0 * (n as f64).powi(3);
    // Inputs in [-0.5, 0.5) from a fixed LCG (the row needs no randomness, only non-trivial data).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 40) as f32) / (1u64 << 24) as f32 - 0.5
    };
    let a = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<f32>>())?;
    let b = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<f32>>())?;
    let mut c = Array::<f32>::zeros(n * n)?;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let nu = n as u32;
    let cfg = LaunchConfig::new((nu.div_ceil(128), nu.div_ceil(128)), 256);
    let ours = |c: &mut Array<f32>| kernel::sgemm::launch(&cfg, nu, nu, nu, alpha, &a, &b, beta, c);

    let time = |f: &mut dyn FnMut() -> Result<()>| crate::event_ms(stream, f);
    let tflops = |ms: f64| flop / (ms * 1e-3) / 1e12;

    // SAFETY: a look-up of the library by name; nothing is called.
    let cublas = if unsafe { blas_sys::is_culib_present() } {
        Some(Cublas::new(stream)?)
    } else {
        None
    };
    let Some(blas) = cublas else {
        let t: Vec<f64> = (0..13)
            .map(|_| time(&mut || ours(&mut c)))
            .collect::<Result<_>>()?;
        let row = Row {
            name: "sgemm 4096^3 f32 (examples/kernels/sgemm.rs)",
            value: tflops(median(t[3..].to_vec())),
            unit: "TFLOP/s",
            ceiling_name: "cuBLAS SGEMM (not found)",
            ceiling: f64::NAN,
            target: None,
            note: "libcublas not on the library path: no ceiling (benches/src/sgemm.rs)".into(),
        };
        return Ok((row, None));
    };
    let mut reference = Array::<f32>::zeros(n * n)?;
    let theirs = |c: &mut Array<f32>| blas.sgemm(n, alpha, &a, &b, beta, c);

    // Correctness first: the kernel's C against cuBLAS's, relative to the sum of |a_ip b_pj|,
    // which is about n / 16 for these inputs.
    ours(&mut c)?;
    theirs(&mut reference)?;
    let (got, want) = (c.to_vec()?, reference.to_vec()?);
    let worst = got
        .iter()
        .zip(&want)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max) as f64;
    let scale = n as f64 / 16.0;
    if worst.is_nan() || worst / scale > 1e-5 {
        return Err(Error::Unsupported {
            what: format!(
                "the SGEMM kernel differs from cuBLAS: max |difference| {worst:.3e} (scale {scale})"
            ),
        });
    }

    let (mut t_ours, mut t_theirs) = (Vec::new(), Vec::new());
    for i in 0..13 {
        let x = time(&mut || ours(&mut c))?;
        let y = time(&mut || theirs(&mut reference))?;
        if i >= 3 {
            t_ours.push(x);
            t_theirs.push(y);
        }
    }
    let (ours_tf, theirs_tf) = (tflops(median(t_ours)), tflops(median(t_theirs)));
    let row = Row {
        name: "sgemm 4096^3 f32 (examples/kernels/sgemm.rs)",
        value: ours_tf,
        unit: "TFLOP/s",
        ceiling_name: "cuBLAS SGEMM (FP32, no TF32)",
        ceiling: theirs_tf,
        target: Some((">=", 0.8)),
        note: format!(
            "2 n^3 flops, median of 10 timed alternately with cuBLAS; max |C - C_cuBLAS| {worst:.1e}"
        ),
    };
    Ok((row, Some(theirs_tf)))
}

/// A cuBLAS handle on the bench's stream, in the default (FP32) math mode.
pub(crate) struct Cublas {
    handle: blas_sys::cublasHandle_t,
}

impl Cublas {
    pub(crate) fn new(stream: &Stream) -> Result<Cublas> {
        let err = |call: &'static str| {
            move |e: blas::CublasError| Error::Unsupported {
                what: format!("{call}: {e:?}"),
            }
        };
        let handle = blas::create_handle().map_err(err("cublasCreate"))?;
        let cublas = Cublas { handle };
        // SAFETY: a live handle and the bench's live stream (which outlives the handle: both are
        // used only inside `rows`).
        unsafe { blas::set_stream(handle, stream.handle() as _) }
            .map_err(err("cublasSetStream"))?;
        // SAFETY: a live handle.
        unsafe { blas_sys::cublasSetMathMode(handle, blas_sys::cublasMath_t::CUBLAS_DEFAULT_MATH) }
            .result()
            .map_err(err("cublasSetMathMode"))?;
        Ok(cublas)
    }

    /// C = alpha A B + beta C, n x n, column-major.
    fn sgemm(
        &self,
        n: usize,
        alpha: f32,
        a: &Array<f32>,
        b: &Array<f32>,
        beta: f32,
        c: &mut Array<f32>,
    ) -> Result<()> {
        assert!(a.len() >= n * n && b.len() >= n * n && c.len() >= n * n);
        let ni = n as i32;
        let op = blas_sys::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the three device arrays hold n * n f32 each (asserted), column-major with
        // leading dimension n; alpha and beta are host scalars (the default pointer mode).
        unsafe {
            blas::sgemm(
                self.handle,
                op,
                op,
                ni,
                ni,
                ni,
                &alpha,
                a.device_ptr() as *const f32,
                ni,
                b.device_ptr() as *const f32,
                ni,
                &beta,
                c.device_ptr() as *mut f32,
                ni,
            )
        }
        .map_err(|e| Error::Unsupported {
            what: format!("cublasSgemm: {e:?}"),
        })
    }
}

impl Cublas {
    /// The handle, for calls this file does not wrap (`gemm_bf16.rs`).
    pub(crate) fn handle(&self) -> blas_sys::cublasHandle_t {
        self.handle
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once.
        let _ = unsafe { blas::destroy_handle(self.handle) };
    }
}
