//! The host side of the flash attention example: the checked launch of the `#[rawkernel]`s of
//! `kernels/attention.rs` ([`flash_attention`]), an f64 reference of one output row, and a whole
//! checked run ([`check`]: fresh random inputs, the output poisoned with NaN, sampled rows against
//! the reference; [`check_with`] for another launch). `examples/attention.rs` (the example),
//! `examples/tests/attention.rs` (its tests) and `benches/src/attention.rs` (the bench rows)
//! include this file, as the FlashAttention-3 example's files do (with
//! `examples/attention_wgmma_lib.rs`).

#[path = "kernels/attention.rs"]
pub mod kernels;

use cuprum::prelude::{bf16, f16};
use cuprum::runtime::{Array, Element, Error, LaunchConfig, Result};

/// The shape `[B, H, S, D]` of `Q`, `K`, `V` and `O`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// B
    pub batch: usize,
    /// H
    pub heads: usize,
    /// S, the sequence length (queries and keys).
    pub seq: usize,
    /// D, the head dimension (64 or 128).
    pub dim: usize,
}

impl Shape {
    /// The four extents, as the arrays' shape.
    pub fn dims(&self) -> [usize; 4] {
        [self.batch, self.heads, self.seq, self.dim]
    }

    /// Elements of one array.
    pub fn len(&self) -> usize {
        self.batch * self.heads * self.seq * self.dim
    }

    /// Floating-point operations of the forward pass: `4 B H S^2 D` (two products of `S^2 D`
    /// multiply-adds per head), half of it when causal.
    pub fn flops(&self, causal: bool) -> f64 {
        let f = 4.0 * (self.batch * self.heads) as f64 * (self.seq as f64).powi(2) * self.dim as f64;
        if causal { f / 2.0 } else { f }
    }
}

/// The element types the kernels take: `bf16` and `f16`.
pub trait AttentionElement: Element + Copy {
    /// The type's name, for messages.
    const NAME: &'static str;
    /// The unit roundoff of rounding to the type (to nearest): `2^-8` for bf16, `2^-11` for f16.
    const UNIT_ROUNDOFF: f64;
    /// `x` rounded to the type.
    fn from_f64(x: f64) -> Self;
    /// The value, exactly.
    fn to_f64(self) -> f64;
    /// The kernel of this element type, launched as is.
    #[allow(clippy::too_many_arguments)]
    fn launch_kernel(cfg: &LaunchConfig, s: u32, d: u32, causal: bool, scale_log2: f32, q: &Array<Self>, k: &Array<Self>, v: &Array<Self>, o: &mut Array<Self>) -> Result<()>;
}

impl AttentionElement for bf16 {
    const NAME: &'static str = "bf16";
    const UNIT_ROUNDOFF: f64 = 1.0 / 256.0;
    fn from_f64(x: f64) -> Self {
        bf16::from_f64(x)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn launch_kernel(cfg: &LaunchConfig, s: u32, d: u32, causal: bool, scale_log2: f32, q: &Array<Self>, k: &Array<Self>, v: &Array<Self>, o: &mut Array<Self>) -> Result<()> {
        kernels::attention_bf16::launch(cfg, s, d, causal, scale_log2, q, k, v, o)
    }
}

impl AttentionElement for f16 {
    const NAME: &'static str = "f16";
    const UNIT_ROUNDOFF: f64 = 1.0 / 2048.0;
    fn from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn launch_kernel(cfg: &LaunchConfig, s: u32, d: u32, causal: bool, scale_log2: f32, q: &Array<Self>, k: &Array<Self>, v: &Array<Self>, o: &mut Array<Self>) -> Result<()> {
        kernels::attention_f16::launch(cfg, s, d, causal, scale_log2, q, k, v, o)
    }
}

/// `O = softmax(Q K^T / sqrt(D)) V` (causal: query `i` sees keys `j <= i`) for arrays of shape
/// `[B, H, S, D]`, C-contiguous, on the current stream. `D` must be 64 or 128; `S` is any length.
/// Every problem is an `Error` and nothing is written: another rank than 4, `K`, `V` or `O` of
/// another shape than `Q`, another `D`, a grid the device cannot launch (`B * H` above `2^31 - 1`,
/// `S` above `64 * 65535`); the launch adds its own checks (devices, contiguity, `O` overlapping an
/// input). Empty arrays launch nothing.
pub fn flash_attention<T: AttentionElement>(q: &Array<T>, k: &Array<T>, v: &Array<T>, o: &mut Array<T>, causal: bool) -> Result<()> {
    let shape = match *q.shape() {
        [batch, heads, seq, dim] => Shape { batch, heads, seq, dim },
        _ => {
            return Err(Error::InvalidShape {
                op: "flash_attention",
                detail: format!("q has shape {:?}; Q, K, V and O must be [B, H, S, D] arrays", q.shape()),
            });
        }
    };
    for (name, found) in [("k", k.shape()), ("v", v.shape()), ("o", o.shape())] {
        if found != q.shape() {
            return Err(Error::ShapeMismatch {
                context: format!("flash_attention ({name} must have q's shape [B, H, S, D])"),
                expected: q.shape().to_vec(),
                found: found.to_vec(),
            });
        }
    }
    if shape.dim != 64 && shape.dim != 128 {
        return Err(Error::Unsupported {
            what: format!("flash_attention with head dimension D = {}: the kernels take D = 64 or 128", shape.dim),
        });
    }
    let (bh, blocks) = (shape.batch * shape.heads, shape.seq.div_ceil(kernels::BM as usize));
    if bh == 0 || shape.seq == 0 {
        return Ok(());
    }
    if bh > i32::MAX as usize || blocks > 65_535 {
        return Err(Error::Unsupported {
            what: format!(
                "flash_attention of shape {:?}: the grid is B * H = {bh} blocks (at most 2^31 - 1) by S / 64 = {blocks} (at most 65535); split the batch or the sequence",
                shape.dims()
            ),
        });
    }
    let cfg = LaunchConfig::new((bh as u32, blocks as u32), kernels::THREADS);
    let scale_log2 = (std::f64::consts::LOG2_E / (shape.dim as f64).sqrt()) as f32;
    T::launch_kernel(&cfg, shape.seq as u32, shape.dim as u32, causal, scale_log2, q, k, v, o)
}

/// Row `i` of head `bh` (`b * H + h`) of the output, in f64 from the exact inputs.
pub fn reference_row<T: AttentionElement>(shape: Shape, causal: bool, q: &[T], k: &[T], v: &[T], bh: usize, i: usize) -> Vec<f64> {
    let (s, d) = (shape.seq, shape.dim);
    let at = |x: &[T], row: usize, c: usize| x[(bh * s + row) * d + c].to_f64();
    let keys = if causal { i + 1 } else { s };
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> = (0..keys).map(|j| (0..d).map(|c| at(q, i, c) * at(k, j, c)).sum::<f64>() * scale).collect();
    let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
    let l: f64 = w.iter().sum();
    (0..d).map(|c| (0..keys).map(|j| w[j] * at(v, j, c)).sum::<f64>() / l).collect()
}

/// What [`check`] found.
#[derive(Clone, Copy, Debug)]
pub struct Report {
    /// The largest `|O - reference|` over the rows compared.
    pub worst: f64,
    /// The bound it is held to.
    pub tolerance: f64,
    /// Rows compared.
    pub rows: usize,
}

/// A small generator for the inputs (splitmix64): reproducible from the printed seed.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random inputs of `shape` from `seed`: `Q` in `[-6, 6)` (scores of standard deviation about
/// 1.2 in natural units after the `1 / sqrt(D)` scale, so that the softmax is far from uniform and
/// the running maximum changes from tile to tile), `K` and `V` in `[-1, 1)`.
pub fn inputs<T: AttentionElement>(shape: Shape, seed: u64) -> [Vec<T>; 3] {
    let mut r = Mix(seed);
    let mut fill = |lo: f64, hi: f64| (0..shape.len()).map(|_| T::from_f64(r.range(lo, hi))).collect::<Vec<T>>();
    [fill(-6.0, 6.0), fill(-1.0, 1.0), fill(-1.0, 1.0)]
}

/// One checked run: fresh inputs from `seed`, `O` poisoned with NaN, [`flash_attention`], every
/// output element finite (each row was stored), then `rows` sampled rows (or all, if fewer: the
/// first and last rows of the first and last heads always among them) against
/// [`reference_row`].
///
/// The tolerance: the kernel's scores and sums are f32 (relative errors near `1e-6`), but the
/// probabilities `p_j` enter `P V` rounded to `T` (relative error at most `u`, the unit
/// roundoff) while the row sum `l` is of the unrounded `p_j`: that moves `O` by at most
/// `u sum_j p_j |v_j| / l <= u max|V|`; rounding `O` to `T` adds at most `u |O| <= u max|V|`.
/// So `|O - reference| <= 2 u max|V|` plus the f32 terms, held to `2.5 u max|V|`. A key wrongly
/// masked or admitted (a tail, the causal diagonal, a skipped tile) moves a row by a weight of
/// order one times `|v|`, far above it.
pub fn check<T: AttentionElement>(shape: Shape, causal: bool, seed: u64, rows: usize) -> Result<Report> {
    check_with(shape, causal, seed, rows, flash_attention::<T>)
}

/// [`check`] of another launch of the same computation (`launch(q, k, v, o, causal)`): the
/// FlashAttention-3 kernels of examples/attention_wgmma_lib.rs.
pub fn check_with<T: AttentionElement>(
    shape: Shape,
    causal: bool,
    seed: u64,
    rows: usize,
    launch: impl FnOnce(&Array<T>, &Array<T>, &Array<T>, &mut Array<T>, bool) -> Result<()>,
) -> Result<Report> {
    let [q, k, v] = inputs::<T>(shape, seed);
    let dims = shape.dims();
    let up = |x: &[T]| Array::from_slice(x)?.reshape(dims);
    let (dq, dk, dv) = (up(&q)?, up(&k)?, up(&v)?);
    let mut dout = Array::from_vec(vec![T::from_f64(f64::NAN); shape.len()])?.reshape(dims)?;
    launch(&dq, &dk, &dv, &mut dout, causal)?;
    let out = dout.to_vec()?;
    if let Some(at) = out.iter().position(|x| !x.to_f64().is_finite()) {
        return Err(Error::InvalidValue {
            op: "flash_attention check",
            detail: format!("output element {at} of shape {dims:?} is {} (a row left unwritten or a NaN computed)", out[at].to_f64()),
        });
    }
    let (bh, s, d) = (shape.batch * shape.heads, shape.seq, shape.dim);
    let mut picked: Vec<(usize, usize)> = Vec::new();
    if bh * s <= rows {
        picked.extend((0..bh).flat_map(|h| (0..s).map(move |i| (h, i))));
    } else {
        for h in [0, bh - 1] {
            picked.extend([(h, 0), (h, s - 1)]);
        }
        let mut r = Mix(seed ^ 0x5eed);
        while picked.len() < rows {
            picked.push(((r.next() % bh as u64) as usize, (r.next() % s as u64) as usize));
        }
    }
    let vmax = v.iter().map(|x| x.to_f64().abs()).fold(0.0, f64::max);
    let tolerance = 2.5 * T::UNIT_ROUNDOFF * vmax;
    let mut worst = 0.0f64;
    for &(h, i) in &picked {
        let want = reference_row(shape, causal, &q, &k, &v, h, i);
        for (c, w) in want.iter().enumerate() {
            let got = out[(h * s + i) * d + c].to_f64();
            let err = (got - w).abs();
            if err > tolerance {
                return Err(Error::InvalidValue {
                    op: "flash_attention check",
                    detail: format!(
                        "{} {dims:?} causal={causal}: head {h} row {i} column {c} is {got}, the f64 reference {w} (|error| {err:.3e} > tolerance {tolerance:.3e}; seed {seed})",
                        T::NAME
                    ),
                });
            }
            worst = worst.max(err);
        }
    }
    Ok(Report { worst, tolerance, rows: picked.len() })
}
