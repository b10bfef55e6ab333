//! The flash attention rows: the `#[rawkernel]`s of `examples/kernels/attention.rs`
//! (FlashAttention-2's design on `mma_m16n8k16`) and of `examples/kernels_sm90a/attention_wgmma.rs`
//! (FlashAttention-3's design on `wgmma`, with ping-pong; on compute capability 9.0 only) in bf16
//! on the shapes of issue 37, B4 H32 S4096 D128 and B16 H16 S2048 D64, causal and not, in TFLOP/s
//! (`4 B H S^2 D` flops, half of it when causal). Each shape is first checked on 16 sampled rows against the f64 host reference
//! (examples/attention_lib.rs). The ceiling, torch's SDPA (cuDNN and FlashAttention-2 backends),
//! cannot run inside this binary: `benches/attention_torch.py` prints it for the same shapes, and
//! the ratio is taken against that script's figures, run on the same GPU in the same session.

use cuprum::prelude::bf16;
use cuprum_runtime::{Array, Device, Result, Stream};

use crate::{Row, median};

#[allow(dead_code)]
#[path = "../../examples/attention_lib.rs"]
mod attention_lib;

#[allow(dead_code)]
#[path = "../../examples/attention_wgmma_lib.rs"]
pub(crate) mod attention_wgmma_lib;

use attention_lib::{Shape, check, check_with, flash_attention, inputs};
use attention_wgmma_lib::flash_attention_wgmma;

/// The four rows of each kernel (the FlashAttention-3 ones on compute capability 9.0 alone).
pub fn rows(stream: &Stream) -> Result<Vec<Row>> {
    let (big, small) = (Shape { batch: 4, heads: 32, seq: 4096, dim: 128 }, Shape { batch: 16, heads: 16, seq: 2048, dim: 64 });
    // (FA2 row, FA3 row, shape, causal)
    let cases: [(&'static str, &'static str, Shape, bool); 4] = [
        ("attention fwd bf16 B4 H32 S4096 D128", "attention fa3 fwd bf16 B4 H32 S4096 D128", big, false),
        ("attention fwd bf16 B4 H32 S4096 D128 causal", "attention fa3 fwd bf16 B4 H32 S4096 D128 causal", big, true),
        ("attention fwd bf16 B16 H16 S2048 D64", "attention fa3 fwd bf16 B16 H16 S2048 D64", small, false),
        ("attention fwd bf16 B16 H16 S2048 D64 causal", "attention fa3 fwd bf16 B16 H16 S2048 D64 causal", small, true),
    ];
    let hopper = Device::current()?.compute_capability() == (9, 0);
    let mut rows = Vec::new();
    for (name, fa3_name, shape, causal) in cases {
        let report = check::<bf16>(shape, causal, 0x00a7_7e17, 16)?;
        let [q, k, v] = inputs::<bf16>(shape, 0x5eed);
        let up = |x: &[bf16]| Array::from_slice(x)?.reshape(shape.dims());
        let (dq, dk, dv) = (up(&q)?, up(&k)?, up(&v)?);
        let mut out = up(&q)?;
        let mut f = || flash_attention(&dq, &dk, &dv, &mut out, causal);
        let t: Vec<f64> = (0..13).map(|_| crate::event_ms(stream, &mut f)).collect::<Result<_>>()?;
        let ms = median(t[3..].to_vec());
        rows.push(Row {
            name,
            value: shape.flops(causal) / (ms * 1e-3) / 1e12,
            unit: "TFLOP/s",
            ceiling_name: "torch SDPA cuDNN (benches/attention_torch.py)",
            ceiling: f64::NAN,
            target: None,
            note: format!(
                "mma.sync m16n8k16, FA2 design; {ms:.3} ms, median of 10; ratio against benches/attention_torch.py's cuDNN figure for the same shape (issue 37 goal >= 0.90; cuDNN 676 / causal 590 TFLOP/s at B4 H32 S4096 D128 on an H200, 2026-11-29); worst |error| on 16 rows {:.1e} (tolerance {:.1e})",
                report.worst, report.tolerance
            ),
        });
        if !hopper {
            continue;
        }
        let fa3 = |x: &Array<bf16>, y: &Array<bf16>, z: &Array<bf16>, o: &mut Array<bf16>, c: bool| flash_attention_wgmma(x, y, z, o, c, true);
        let report = check_with::<bf16>(shape, causal, 0x00a7_7e17, 16, fa3)?;
        let mut f = || flash_attention_wgmma(&dq, &dk, &dv, &mut out, causal, true);
        let t: Vec<f64> = (0..13).map(|_| crate::event_ms(stream, &mut f)).collect::<Result<_>>()?;
        let ms = median(t[3..].to_vec());
        rows.push(Row {
            name: fa3_name,
            value: shape.flops(causal) / (ms * 1e-3) / 1e12,
            unit: "TFLOP/s",
            ceiling_name: "torch SDPA cuDNN (benches/attention_torch.py)",
            ceiling: f64::NAN,
            target: None,
            note: format!(
                "wgmma m64n128k16 (Q K^T with K-major B, P V with P from registers), FA3 design: TMA producer, 2 consumer warpgroups in ping-pong; {ms:.3} ms, median of 10; ratio against benches/attention_torch.py's cuDNN figure for the same shape (issue 37 goal >= 0.90); worst |error| on 16 rows {:.1e} (tolerance {:.1e})",
                report.worst, report.tolerance
            ),
        });
    }
    Ok(rows)
}

