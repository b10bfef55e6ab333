//! The bf16 GEMM rows: the `#[rawkernel]`s of `examples/kernels/gemm_bf16.rs` (`mma_m16n8k16` fed
//! by `cp_async` and `ldmatrix`) and, on a compute capability 9.0 GPU, of
//! `examples/kernels_sm90a/gemm_wgmma.rs` (`wgmma_m64n256k16` fed by TMA, warp-specialised) at
//! 8192^3, C (f32) = A B row-major with bf16 inputs, each next to cuBLAS's `cublasGemmEx` on the
//! same arrays (bf16 inputs, f32 output and accumulation), timed alternately in the same run (CUDA
//! events, median of 10 after 3 warm-up calls each). cuBLAS is loaded at run time as for the SGEMM
//! row (`sgemm.rs`).

use cudarc::cublas::{result as blas, sys as blas_sys};
use cuprum::prelude::bf16;
use cuprum_runtime::LaunchConfig;
use cuprum_runtime::{Array, Error, Result, Stream, Swizzle, TensorMap};

use crate::sgemm::Cublas;
use crate::{Row, median};

#[path = "../../examples/kernels/gemm_bf16.rs"]
mod kernel;
// The wgmma kernel with its host side and tuned grid (the tuning rows use those, `tuning.rs`).
#[path = "../../examples/gemm_wgmma_lib.rs"]
pub(crate) mod gemm_wgmma_lib;
use gemm_wgmma_lib::kernels as wgmma_kernel;

/// The kernels of examples/kernels/gemm_bf16.rs the first row may time.
#[allow(dead_code)]
enum Tile {
    /// `gemm_bf16`: 128 x 128 tiles, 4 warps.
    Square,
    /// `gemm_bf16_wide_pf`: 128 x 256 tiles, 8 warps, dynamic shared memory, fragments a k-step
    /// ahead.
    WidePf,
}

/// The kernel of the first row.
const TILE: Tile = Tile::WidePf;

/// The rows, and cuBLAS's figure when cuBLAS was found.
pub fn rows(stream: &Stream) -> Result<(Vec<Row>, Option<f64>)> {
    let n = 8192usize;
    let flop = 2.0 * (n as f64).powi(3);
    // Inputs in [-1, 1) from a fixed LCG (non-trivial data; the row needs no randomness).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        bf16::from_f32(((state >> 40) as f32) / (1u64 << 23) as f32 - 1.0)
    };
    let a = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<bf16>>())?;
    let b = Array::from_slice(&(0..n * n).map(|_| next()).collect::<Vec<bf16>>())?;
    let mut c = Array::<f32>::zeros(n * n)?;
    let nu = n as u32;
    let cfg = LaunchConfig::new((nu / 128, nu / 128), 128u32);
    let wide = LaunchConfig::new((nu / kernel::WBN, nu / kernel::WBM), kernel::WIDE_THREADS).shared_mem(kernel::WIDE_SHARED_BYTES);
    let ours = |c: &mut Array<f32>| match TILE {
        Tile::Square => kernel::gemm_bf16::launch(&cfg, nu, nu, nu, &a, &b, c),
        Tile::WidePf => kernel::gemm_bf16_wide_pf::launch(&wide, nu, nu, nu, &a, &b, c),
    };
    let time = |f: &mut dyn FnMut() -> Result<()>| crate::event_ms(stream, f);
    let tflops = |ms: f64| flop / (ms * 1e-3) / 1e12;
    let name = match TILE {
        Tile::Square => "gemm_bf16 8192^3 (examples/kernels/gemm_bf16.rs)",
        Tile::WidePf => "gemm_bf16_wide_pf 8192^3 (examples/kernels/gemm_bf16.rs)",
    };

    // SAFETY: a look-up of the library by name; nothing is called.
    if !unsafe { blas_sys::is_culib_present() } {
        let t: Vec<f64> = (0..13).map(|_| time(&mut || ours(&mut c))).collect::<Result<_>>()?;
        let row = Row {
            name,
            value: tflops(median(t[3..].to_vec())),
            unit: "TFLOP/s",
            ceiling_name: "cuBLAS bf16 GEMM (not found)",
            ceiling: f64::NAN,
            target: None,
            note: "libcublas not on the library path: no ceiling (benches/src/gemm_bf16.rs)".into(),
        };
        return Ok((vec![row], None));
    }
    let blas = Cublas::new(stream)?;
    let mut reference = Array::<f32>::zeros(n * n)?;
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B (n x k, ld n) by A.
    let theirs = |c: &mut Array<f32>| -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let ni = n as i32;
        let op = blas_sys::cublasOperation_t::CUBLAS_OP_N;
        let bf = blas_sys::cudaDataType::CUDA_R_16BF;
        // SAFETY: the three device arrays hold n * n elements of the declared types, leading
        // dimension n; alpha and beta are host f32 scalars (the default pointer mode, f32 compute).
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
                bf,
                ni,
                a.device_ptr() as *const _,
                bf,
                ni,
                (&beta as *const f32).cast(),
                c.device_ptr() as *mut _,
                blas_sys::cudaDataType::CUDA_R_32F,
                ni,
                blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| Error::Unsupported { what: format!("cublasGemmEx: {e:?}") })
    };

    // Correctness first: the kernel's C against cuBLAS's (the same exact products, summed in
    // different orders in f32; |C| stays below about sqrt(n) for these inputs).
    ours(&mut c)?;
    theirs(&mut reference)?;
    let (got, want) = (c.to_vec()?, reference.to_vec()?);
    let worst = got.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max) as f64;
    if !(worst <= 1e-2) {
        return Err(Error::Unsupported { what: format!("the bf16 GEMM kernel differs from cuBLAS: max |difference| {worst:.3e}") });
    }
    let (ours_tf, theirs_tf) = alternate(&mut || ours(&mut c), &mut || theirs(&mut reference), &time)?;
    let mut rows = vec![Row {
        name,
        value: tflops(ours_tf),
        unit: "TFLOP/s",
        ceiling_name: "cuBLAS bf16 GEMM (cublasGemmEx)",
        ceiling: tflops(theirs_tf),
        // Issue 37: >= 0.70 of cuBLAS for the `mma.sync` path.
        target: Some((">=", 0.70)),
        note: format!("mma.sync m16n8k16, 2 n^3 flops, median of 10 timed alternately with cuBLAS; max |C - C_cuBLAS| {worst:.1e}"),
    }];

    // Hopper: wgmma + TMA, on compute capability 9.0 only (the kernel is built for sm_90a).
    let device = stream.device();
    if device.compute_capability() == (9, 0) {
        let (a2, b2) = (a.reshape([n, n])?, b.reshape([n, n])?);
        let ma = TensorMap::new(&a2, [wgmma_kernel::BM, wgmma_kernel::BK], Swizzle::B128)?;
        let mb = TensorMap::new(&b2, [wgmma_kernel::BK, 64], Swizzle::B128)?;
        let tiles = (nu / wgmma_kernel::BM) * (nu / wgmma_kernel::BN);
        let wcfg = LaunchConfig::new(tiles.min(device.multiprocessor_count()), wgmma_kernel::THREADS).shared_mem(wgmma_kernel::SHARED_BYTES);
        let ours2 = |c: &mut Array<f32>| wgmma_kernel::gemm_wgmma::launch(&wcfg, nu, nu, nu, &ma, &mb, c);
        c.fill(f32::NAN)?;
        ours2(&mut c)?;
        let got = c.to_vec()?;
        let worst = got.iter().zip(&want).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max) as f64;
        if !(worst <= 1e-2) {
            return Err(Error::Unsupported { what: format!("the wgmma GEMM kernel differs from cuBLAS: max |difference| {worst:.3e}") });
        }
        let (ours_tf, theirs_tf) = alternate(&mut || ours2(&mut c), &mut || theirs(&mut reference), &time)?;
        rows.push(Row {
            name: "gemm_wgmma 8192^3 (examples/kernels_sm90a/gemm_wgmma.rs)",
            value: tflops(ours_tf),
            unit: "TFLOP/s",
            ceiling_name: "cuBLAS bf16 GEMM (cublasGemmEx)",
            ceiling: tflops(theirs_tf),
            // Issue 37: >= 0.90 of cuBLAS for the `wgmma` GEMM.
            target: Some((">=", 0.90)),
            note: format!(
                "wgmma m64n256k16 + TMA, warp-specialised, persistent; median of 10 timed alternately with cuBLAS; max |C - C_cuBLAS| {worst:.1e}"
            ),
        });
    }
    Ok((rows, Some(tflops(theirs_tf))))
}

/// The medians (ms) of 10 timings of `ours` and of `theirs`, alternately, after 3 of each.
pub(crate) fn alternate(ours: &mut dyn FnMut() -> Result<()>, theirs: &mut dyn FnMut() -> Result<()>, time: &dyn Fn(&mut dyn FnMut() -> Result<()>) -> Result<f64>) -> Result<(f64, f64)> {
    let (mut t_ours, mut t_theirs) = (Vec::new(), Vec::new());
    for i in 0..13 {
        let x = time(ours)?;
        let y = time(theirs)?;
        if i >= 3 {
            t_ours.push(x);
            t_theirs.push(y);
        }
    }
    Ok((median(t_ours), median(t_theirs)))
}
