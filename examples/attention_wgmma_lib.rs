//! The host side of the FlashAttention-3 example: the checked launch of the `#[rawkernel]`s of
//! `kernels_sm90a/attention_wgmma.rs` ([`flash_attention_wgmma`]), which need a compute
//! capability 9.0 GPU (sm_90a) or the CPU device. The shapes, inputs, reference and checked run
//! are examples/attention_lib.rs's (the FlashAttention-2 example), which every file including
//! this one includes beside it as `attention_lib`. `examples/attention_wgmma.rs` (the example),
//! `examples/tests/attention_wgmma.rs` (its tests) and `benches/src/attention.rs` (the bench
//! rows) include this file.
//!
//! Whether the consumers ping-pong is a tuned site ([`SCHEDULE`], docs/tuning.md), keyed by the
//! head dimension and causality: [`flash_attention_wgmma_tuned`] launches the measured best
//! (`attention_wgmma -- --tune` writes it into `examples/tuning/sm_90.toml`), or ping-pong (the
//! default) without a file.

#[path = "kernels_sm90a/attention_wgmma.rs"]
pub mod kernels;

use super::attention_lib::{AttentionElement, Shape, inputs};
use cuprum::prelude::{bf16, f16};
use cuprum::runtime::tuning::{Site, Table, Trial, Tunable};
use cuprum::runtime::{Array, Device, Error, LaunchConfig, Result, Swizzle, TensorMap};

/// The package's embedded tuning files (`examples/tuning/`).
pub static TABLE: Table = cuprum::runtime::tuning_table!();

/// The tuned schedule of the consumer warpgroups: `pingpong` (they take turns at the tensor
/// cores; the default) or `plain` (both issue as soon as they can).
pub static SCHEDULE: Site = Site::new("attention_wgmma_schedule", &["pingpong", "plain"], &KEYS, "pingpong", &TABLE);

/// The keys: head dimension 64 or 128, causal or not.
const KEYS: [&str; 4] = ["d64", "d64_causal", "d128", "d128_causal"];

/// The problem the tuner times for each key (bf16): issue 37's shapes, B16 H16 S2048 D64 and
/// B4 H32 S4096 D128.
pub const KEY_SHAPES: [Shape; 4] = [
    Shape { batch: 16, heads: 16, seq: 2048, dim: 64 },
    Shape { batch: 16, heads: 16, seq: 2048, dim: 64 },
    Shape { batch: 4, heads: 32, seq: 4096, dim: 128 },
    Shape { batch: 4, heads: 32, seq: 4096, dim: 128 },
];

/// The key of a launch of head dimension `dim` (64 or 128).
pub fn key_of(dim: usize, causal: bool) -> usize {
    2 * usize::from(dim == 128) + usize::from(causal)
}

/// [`flash_attention_wgmma`] with the tuned schedule for the arrays' device (ping-pong without a
/// tuning file, and on the CPU device).
pub fn flash_attention_wgmma_tuned<T: WgmmaAttentionElement>(q: &Array<T>, k: &Array<T>, v: &Array<T>, o: &mut Array<T>, causal: bool) -> Result<()> {
    let dim = q.shape().last().copied().unwrap_or(0);
    let pingpong = SCHEDULE.choose(q.device().compute_capability(), key_of(dim, causal)) == 0;
    flash_attention_wgmma(q, k, v, o, causal, pingpong)
}

/// The tuner's problem for key `key`: bf16 attention of `KEY_SHAPES[key]`.
fn prepare(device: &Device, key: usize) -> Result<Trial> {
    let (shape, causal) = (KEY_SHAPES[key], key % 2 == 1);
    let _on = device.use_scoped()?;
    let [q, k, v] = inputs::<bf16>(shape, 0x5eed);
    let up = |x: &[bf16]| Array::from_slice(x)?.reshape(shape.dims());
    let (dq, dk, dv) = (up(&q)?, up(&k)?, up(&v)?);
    let mut out = up(&q)?;
    Ok(Box::new(move || flash_attention_wgmma_tuned(&dq, &dk, &dv, &mut out, causal)))
}

/// The site with its problem, for the tuner (`attention_wgmma --tune`, the bench's tuning rows).
pub static TUNABLE: Tunable = Tunable { site: &SCHEDULE, package: env!("CARGO_PKG_NAME"), prepare };

/// The element types of the FlashAttention-3 kernels: `bf16` and `f16`.
pub trait WgmmaAttentionElement: AttentionElement {
    /// The kernel of this element type for head dimension `d` (`attention_wgmma_d64_*` for 64,
    /// `attention_wgmma_*` for 128), launched as is.
    #[allow(clippy::too_many_arguments)]
    fn launch_wgmma(
        cfg: &LaunchConfig,
        s: u32,
        d: u32,
        causal: bool,
        pingpong: bool,
        scale_log2: f32,
        maps: [&TensorMap<'_, Self>; 3],
        o: &mut Array<Self>,
    ) -> Result<()>;
}

impl WgmmaAttentionElement for bf16 {
    fn launch_wgmma(cfg: &LaunchConfig, s: u32, d: u32, causal: bool, pingpong: bool, scale_log2: f32, maps: [&TensorMap<'_, Self>; 3], o: &mut Array<Self>) -> Result<()> {
        if d == 64 {
            kernels::attention_wgmma_d64_bf16::launch(cfg, s, d, causal, pingpong, scale_log2, maps[0], maps[1], maps[2], o)
        } else {
            kernels::attention_wgmma_bf16::launch(cfg, s, d, causal, pingpong, scale_log2, maps[0], maps[1], maps[2], o)
        }
    }
}

impl WgmmaAttentionElement for f16 {
    fn launch_wgmma(cfg: &LaunchConfig, s: u32, d: u32, causal: bool, pingpong: bool, scale_log2: f32, maps: [&TensorMap<'_, Self>; 3], o: &mut Array<Self>) -> Result<()> {
        if d == 64 {
            kernels::attention_wgmma_d64_f16::launch(cfg, s, d, causal, pingpong, scale_log2, maps[0], maps[1], maps[2], o)
        } else {
            kernels::attention_wgmma_f16::launch(cfg, s, d, causal, pingpong, scale_log2, maps[0], maps[1], maps[2], o)
        }
    }
}

/// `O = softmax(Q K^T / sqrt(D)) V` (causal: query `i` sees keys `j <= i`) for arrays of shape
/// `[B, H, S, D]`, C-contiguous, on the current stream, by the FlashAttention-3 kernels
/// (`pingpong`: the two consumer warpgroups take turns at the tensor cores). The checks are
/// `attention_lib::flash_attention`'s: another rank than 4, `K`, `V` or `O` of another shape than
/// `Q`, a `D` other than 64 or 128, a grid the device cannot launch (`B * H` above 65535, `S`
/// above `128 * (2^31 - 1)`) are an `Error` and nothing is written; the tensor maps refuse
/// arrays that are not C-contiguous; empty arrays launch nothing. On a GPU it needs compute
/// capability 9.0 (the kernels are built for sm_90a alone: another GPU's launch is an error).
pub fn flash_attention_wgmma<T: WgmmaAttentionElement>(q: &Array<T>, k: &Array<T>, v: &Array<T>, o: &mut Array<T>, causal: bool, pingpong: bool) -> Result<()> {
    let shape = match *q.shape() {
        [batch, heads, seq, dim] => Shape { batch, heads, seq, dim },
        _ => {
            return Err(Error::InvalidShape {
                op: "flash_attention_wgmma",
                detail: format!("q has shape {:?}; Q, K, V and O must be [B, H, S, D] arrays", q.shape()),
            });
        }
    };
    for (name, found) in [("k", k.shape()), ("v", v.shape()), ("o", o.shape())] {
        if found != q.shape() {
            return Err(Error::ShapeMismatch {
                context: format!("flash_attention_wgmma ({name} must have q's shape [B, H, S, D])"),
                expected: q.shape().to_vec(),
                found: found.to_vec(),
            });
        }
    }
    if shape.dim != 64 && shape.dim != 128 {
        return Err(Error::Unsupported {
            what: format!("flash_attention_wgmma with head dimension D = {}: the kernels take D = 64 or 128", shape.dim),
        });
    }
    let (bh, blocks) = (shape.batch * shape.heads, shape.seq.div_ceil(kernels::BM as usize));
    if bh == 0 || shape.seq == 0 {
        return Ok(());
    }
    if bh > 65_535 || blocks > i32::MAX as usize || shape.len() > u32::MAX as usize {
        return Err(Error::Unsupported {
            what: format!(
                "flash_attention_wgmma of shape {:?}: the grid is S / 128 = {blocks} blocks by B * H = {bh} (at most 65535) and the kernel \
                 indexes rows of B H S in 32 bits; split the batch",
                shape.dims()
            ),
        });
    }
    // The kernels read Q, K and V as [B H S, D] matrices, in boxes of 64 rows x 64 columns with
    // the 128-byte swizzle their wgmma reads.
    let rows = [bh * shape.seq, shape.dim];
    let (q2, k2, v2) = (q.reshape(rows)?, k.reshape(rows)?, v.reshape(rows)?);
    let maps = [&q2, &k2, &v2].map(|a| TensorMap::new(a, [64, 64], Swizzle::B128));
    let [mq, mk, mv] = maps;
    let (mq, mk, mv) = (mq?, mk?, mv?);
    let cfg = LaunchConfig::new((blocks as u32, bh as u32), kernels::THREADS).shared_mem(kernels::SHARED_BYTES);
    let scale_log2 = (std::f64::consts::LOG2_E / (shape.dim as f64).sqrt()) as f32;
    T::launch_wgmma(&cfg, shape.seq as u32, shape.dim as u32, causal, pingpong, scale_log2, [&mq, &mk, &mv], o)
}
