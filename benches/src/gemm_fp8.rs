//! The FP8 GEMM row (issue 37): the `#[rawkernel]` of `examples/kernels_sm90a/gemm_fp8.rs`
//! (`wgmma_m64n256k32` on `f8e4m3`, fed by TMA, warp-specialised, persistent) at 8192^3, C (bf16)
//! = scale_a scale_b A B with B given transposed, on a compute capability 9.0 GPU.
//!
//! Its ceiling is cuBLASLt's FP8 GEMM as `torch._scaled_mm` calls it (e4m3 x e4m3, per-tensor
//! scales, bf16 out): cuprum's cuBLAS binding has no cuBLASLt matmul, so `benches/fp8_torch.py`
//! measures it in the same run on the same shape and prints `CUPRUM_BENCH_SCALED_MM_TFLOPS=<x>`;
//! with that variable set, the row takes it as its ceiling (without it, the ceiling is NaN and the
//! note says so). The kernel's C is checked first against an f64 host product on sampled entries.

use cuprum::prelude::{bf16, f8e4m3};
use cuprum_runtime::{Array, Error, LaunchConfig, Result, Stream, Swizzle, TensorMap};

use crate::{Row, median};

#[path = "../../examples/kernels_sm90a/gemm_fp8.rs"]
mod kernel;

/// The variable benches/fp8_torch.py prints: `torch._scaled_mm`'s TFLOP/s at 8192^3.
const CEILING_VAR: &str = "CUPRUM_BENCH_SCALED_MM_TFLOPS";

/// The row, on a compute capability 9.0 GPU (none elsewhere: the kernel is built for sm_90a).
pub fn rows(stream: &Stream) -> Result<Vec<Row>> {
    let device = stream.device();
    if device.compute_capability() != (9, 0) {
        return Ok(Vec::new());
    }
    let n = 8192usize;
    let nu = n as u32;
    let flop = 2.0 * (n as f64).powi(3);
    // Inputs over e4m3's range from a fixed LCG (non-trivial data; the row needs no randomness),
    // and the scales that undo it, as a per-tensor quantiser would give them.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        f8e4m3::from_f32((((state >> 40) as f32) / (1u64 << 23) as f32 - 1.0) * 448.0)
    };
    let a: Vec<f8e4m3> = (0..n * n).map(|_| next()).collect();
    let bt: Vec<f8e4m3> = (0..n * n).map(|_| next()).collect();
    let (scale_a, scale_b) = (1.0 / 448.0f32, 1.0 / 448.0f32);
    let da = Array::from_slice(&a)?.reshape([n, n])?;
    let db = Array::from_slice(&bt)?.reshape([n, n])?;
    let mut c = Array::<bf16>::zeros(n * n)?;
    let ma = TensorMap::new(&da, [kernel::BM, kernel::BK], Swizzle::B128)?;
    let mb = TensorMap::new(&db, [kernel::BN, kernel::BK], Swizzle::B128)?;
    let tiles = (nu / kernel::BM) * (nu / kernel::BN);
    let cfg = LaunchConfig::new(tiles.min(device.multiprocessor_count()), kernel::THREADS).shared_mem(kernel::SHARED_BYTES);
    let ours = |c: &mut Array<bf16>| kernel::gemm_fp8::launch(&cfg, nu, nu, nu, &ma, &mb, scale_a, scale_b, c);

    ours(&mut c)?;
    let got = c.to_vec()?;
    let alpha = scale_a as f64 * scale_b as f64;
    let mut worst = 0.0f64;
    for s in 0..500usize {
        let (i, j) = ((s * 7919) % n, (s * 104_729) % n);
        let terms = (0..n).map(|p| a[i * n + p].to_f64() * bt[j * n + p].to_f64() * alpha);
        let (want, size) = terms.fold((0.0, 1e-30), |(w, s), t| (w + t, s + t.abs()));
        worst = worst.max((got[i * n + j].to_f64() - want).abs() / size);
    }
    if worst.is_nan() || worst > 1e-2 {
        return Err(Error::Unsupported {
            what: format!("the FP8 GEMM kernel differs from the host product: worst error {worst:.3e} of the sum of |terms|"),
        });
    }
    let t: Vec<f64> = (0..13)
        .map(|_| crate::event_ms(stream, &mut || ours(&mut c)))
        .collect::<Result<_>>()?;
    let value = flop / (median(t[3..].to_vec()) * 1e-3) / 1e12;
    let ceiling = std::env::var(CEILING_VAR).ok().and_then(|v| v.trim().parse::<f64>().ok());
    Ok(vec![Row {
        name: "gemm_fp8 8192^3 (examples/kernels_sm90a/gemm_fp8.rs)",
        value,
        unit: "TFLOP/s",
        ceiling_name: "torch._scaled_mm FP8 (cuBLASLt; benches/fp8_torch.py, same run)",
        ceiling: ceiling.unwrap_or(f64::NAN),
        target: Some((">=", 0.8)),
        note: format!(
            "wgmma m64n256k32 e4m3 + TMA, warp-specialised, persistent, bf16 out with per-tensor scales; median of 10; worst error on \
             500 sampled entries {worst:.1e} of the sum of |terms|{}",
            if ceiling.is_some() {
                ""
            } else {
                "; no ceiling: run benches/fp8_torch.py first and set CUPRUM_BENCH_SCALED_MM_TFLOPS"
            }
        ),
    }])
}
