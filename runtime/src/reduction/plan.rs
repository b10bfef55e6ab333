//! Planning a reduction launch (no GPU involved): axes as NumPy normalizes them, the output
//! shape, the iteration space split into output axes and reduced axes, both collapsed, and the
//! strategy (`rows`, `warps` or `cols`, see `include/cuprum/reduction.h`) with its grid.
//!
//! Collapsing: extent-1 axes are dropped; unless the kernel has raw arguments (whose loop index
//! must keep its meaning), each group of axes is ordered by the first input's strides, largest
//! first, as a reduction may visit its elements in any order (its reduce function is taken to be
//! associative and commutative, as CuPy's); then neighbouring axes merge wherever every operand's
//! strides allow. A transposed or permuted C-contiguous input thus becomes the same one or two
//! axes as the original.

use crate::error::{Error, Result};

/// The most axes each of the output and reduced groups may keep after collapsing
/// (`CUPRUM_MAX_NDIM`).
pub const MAX_NDIM: usize = 8;
/// Threads per block (`CUPRUM_REDUCE_THREADS`).
pub const THREADS: u32 = 256;
/// Blocks of `THREADS` resident per SM when registers allow (2048 threads per SM on sm_80/90).
const BLOCKS_PER_SM: u64 = 8;
/// Indices and offsets below this use the 32-bit variants (with room for the rounding of split
/// chunks to whole vectors).
const INDEX_LIMIT: u64 = (1 << 31) - (1 << 24);
/// Elements per block part below which a `rows` reduction is not split further.
const MIN_ROW_PART: u64 = 16 * 1024;
/// Elements per thread part below which a `cols` reduction is not split further.
const MIN_COL_PART: u64 = 64;

/// Which axes a reduction reduces (NumPy's `axis`): all of them (`None`), one, or several;
/// negative axes count from the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Axes {
    #[default]
    All,
    One(isize),
    Many(Vec<isize>),
}

impl From<isize> for Axes {
    fn from(a: isize) -> Axes {
        Axes::One(a)
    }
}

impl From<Vec<isize>> for Axes {
    fn from(a: Vec<isize>) -> Axes {
        Axes::Many(a)
    }
}

impl From<&[isize]> for Axes {
    fn from(a: &[isize]) -> Axes {
        Axes::Many(a.to_vec())
    }
}

impl<const N: usize> From<[isize; N]> for Axes {
    fn from(a: [isize; N]) -> Axes {
        Axes::Many(a.to_vec())
    }
}

impl From<Option<isize>> for Axes {
    fn from(a: Option<isize>) -> Axes {
        a.map_or(Axes::All, Axes::One)
    }
}

/// The launch strategy (the kernel variant without its index width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// A block per output; the row split over `splits` blocks when outputs are few (with one
    /// output: the full reduction across the grid).
    Rows,
    /// A warp per output.
    Warps,
    /// A thread per output, the reduced range split over `splits` blocks when outputs are few.
    Cols,
}

/// The mask of reduced axes of an `ndim`-dimensional loop: an error for an axis out of range
/// or given twice.
pub fn reduced_mask(ndim: usize, axes: &Axes) -> Result<Vec<bool>> {
    let mut mask = vec![false; ndim];
    let list: &[isize] = match axes {
        Axes::All => {
            mask.iter_mut().for_each(|m| *m = true);
            return Ok(mask);
        }
        Axes::One(a) => std::slice::from_ref(a),
        Axes::Many(v) => v,
    };
    for &a in list {
        let k = crate::array::shape::normalize_axis(a, ndim)?;
        if std::mem::replace(&mut mask[k], true) {
            return Err(Error::InvalidShape {
                op: "reduction",
                detail: format!(
                    "axis {a} is repeated in {list:?} (axis {k} of {ndim}); give each axis once"
                ),
            });
        }
    }
    Ok(mask)
}

/// The output shape: the loop shape without the reduced axes, or with them as extent 1 when
/// `keepdims`.
pub fn output_shape(shape: &[usize], mask: &[bool], keepdims: bool) -> Vec<usize> {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(&d, &m)| match (m, keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// An error when the reduction has outputs but no element to reduce into them and no identity
/// to give them (NumPy's "zero-size array to reduction operation ... which has no identity").
pub fn check_empty(kernel: &str, shape: &[usize], mask: &[bool], has_identity: bool) -> Result<()> {
    let size = |reduced: bool| -> usize {
        shape.iter().zip(mask).filter(|(_, m)| **m == reduced).map(|(d, _)| *d).product()
    };
    let (outs, red) = (size(false), size(true));
    if outs > 0 && red == 0 && !has_identity {
        return Err(Error::Reduction {
            kernel: kernel.to_string(),
            detail: format!(
                "the reduced axes of the loop shape {shape:?} hold no element and the kernel has no \
                 identity, so its {outs} output(s) have no value; give the reduction an identity or \
                 reduce over non-empty axes"
            ),
        });
    }
    Ok(())
}

/// The strides of one array operand over the collapsed axes (zeros past the used axes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperandStrides {
    pub ostrides: [i64; MAX_NDIM],
    pub rstrides: [i64; MAX_NDIM],
}

/// What the planner needs to know about the device.
#[derive(Clone, Copy, Debug)]
pub struct DeviceShape {
    pub multiprocessors: u32,
    /// Blocks of `THREADS` resident per SM for the kernel (its occupancy); 0: assume
    /// `BLOCKS_PER_SM`. Split reductions fill whole waves of resident blocks.
    pub blocks_per_sm: u32,
}

/// A planned launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Number of outputs and of reduced elements per output.
    pub outs: u64,
    pub red: u64,
    /// Collapsed output and reduced extents.
    pub odims: Vec<u64>,
    pub rdims: Vec<u64>,
    /// The strides of every strided (non-raw) input, in order, over the collapsed axes.
    pub inputs: Vec<OperandStrides>,
    /// The output's strides over the collapsed output axes.
    pub out: OperandStrides,
    /// Every strided input has one reduced axis, of stride 1 (vector loads possible).
    pub contiguous: bool,
    pub strategy: Strategy,
    /// Parts per output (`rows`) or per column (`cols`); 1: no partials.
    pub splits: u32,
    /// 64-bit indexing.
    pub wide: bool,
    pub grid: (u32, u32),
    pub block: u32,
}

impl Plan {
    /// The kernel variant (`mangle` name) of this plan.
    pub fn variant(&self) -> &'static str {
        match (self.strategy, self.wide) {
            (Strategy::Rows, false) => "rows",
            (Strategy::Warps, false) => "warps",
            (Strategy::Cols, false) => "cols",
            (Strategy::Rows, true) => "rows64",
            (Strategy::Warps, true) => "warps64",
            (Strategy::Cols, true) => "cols64",
        }
    }

    /// Partial slots and counters the launch needs in scratch memory.
    pub fn scratch(&self) -> (u64, u64) {
        if self.splits <= 1 {
            return (0, 0);
        }
        let s = self.splits as u64;
        match self.strategy {
            Strategy::Rows => (self.outs * s, self.outs),
            Strategy::Cols => (self.outs * s, self.grid.0 as u64),
            Strategy::Warps => (0, 0),
        }
    }
}

/// One axis of the loop: its extent and each operand's stride.
#[derive(Clone, Debug)]
struct Axis {
    extent: u64,
    strides: Vec<i64>,
}

/// Drops extent-1 axes, orders by the first operand's |stride| (largest first) when `reorder`,
/// and merges neighbours whose strides allow it for every operand.
fn collapse(mut axes: Vec<Axis>, reorder: bool) -> Vec<Axis> {
    axes.retain(|a| a.extent != 1);
    if reorder {
        axes.sort_by(|a, b| b.strides[0].unsigned_abs().cmp(&a.strides[0].unsigned_abs()));
    }
    let mut out: Vec<Axis> = Vec::with_capacity(axes.len());
    for a in axes {
        if let Some(last) = out.last_mut() {
            let merges = last
                .strides
                .iter()
                .zip(&a.strides)
                .all(|(&outer, &inner)| outer == inner * a.extent as i64);
            if merges {
                last.extent *= a.extent;
                last.strides = a.strides;
                continue;
            }
        }
        out.push(a);
    }
    out
}

/// The largest |offset| an operand reaches over the axes (sum of |stride| * (extent - 1)).
fn span(axes: &[Axis], k: usize) -> u64 {
    axes.iter()
        .map(|a| a.strides[k].unsigned_abs().saturating_mul(a.extent.saturating_sub(1)))
        .fold(0u64, u64::saturating_add)
}

/// Plans a reduction over a loop of `shape` (the inputs' broadcast shape).
///
/// - `inputs`: per strided input, its strides over `shape` (broadcast: 0 on stretched axes);
///   at least one;
/// - `mask`: the reduced axes ([`reduced_mask`]);
/// - `out_strides`: the output's strides, one per non-reduced axis of `shape` in order;
/// - `reorder`: whether axes may be reordered (false with raw arguments);
/// - `has_identity`: whether an empty reduction has a value.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    kernel: &str,
    shape: &[usize],
    inputs: &[&[isize]],
    mask: &[bool],
    out_strides: &[isize],
    reorder: bool,
    has_identity: bool,
    dev: DeviceShape,
) -> Result<Plan> {
    debug_assert!(!inputs.is_empty());
    let n_ops = inputs.len() + 1;
    let mut oaxes = Vec::new();
    let mut raxes = Vec::new();
    let mut out_k = 0;
    for (k, (&extent, &reduced)) in shape.iter().zip(mask).enumerate() {
        let mut strides: Vec<i64> = inputs.iter().map(|s| s[k] as i64).collect();
        if reduced {
            strides.push(0);
            raxes.push(Axis { extent: extent as u64, strides });
        } else {
            strides.push(out_strides[out_k] as i64);
            out_k += 1;
            oaxes.push(Axis { extent: extent as u64, strides });
        }
    }
    let outs: u64 = oaxes.iter().map(|a| a.extent).product();
    let red: u64 = raxes.iter().map(|a| a.extent).product();
    check_empty(kernel, shape, mask, has_identity)?;
    let oaxes = collapse(oaxes, reorder);
    let raxes = if red == 0 { Vec::new() } else { collapse(raxes, reorder) };
    for (what, axes) in [("output", &oaxes), ("reduced", &raxes)] {
        if axes.len() > MAX_NDIM {
            return Err(Error::Unsupported {
                what: format!(
                    "a reduction whose {what} axes keep {} dimensions after merging the contiguous \
                     ones (at most {MAX_NDIM}); copy the input to a contiguous array first",
                    axes.len()
                ),
            });
        }
    }
    let mut ops = vec![OperandStrides::default(); n_ops];
    for (j, a) in oaxes.iter().enumerate() {
        for (k, op) in ops.iter_mut().enumerate() {
            op.ostrides[j] = a.strides[k];
        }
    }
    for (j, a) in raxes.iter().enumerate() {
        for (k, op) in ops.iter_mut().enumerate() {
            op.rstrides[j] = a.strides[k];
        }
    }
    let out = ops.pop().expect("the output operand");
    let contiguous = red > 0 && raxes.len() == 1 && raxes[0].strides[..inputs.len()].iter().all(|&s| s == 1);

    // 32-bit indexing when every index and offset fits.
    let wide = outs.saturating_mul(red.max(1)) >= INDEX_LIMIT
        || (0..n_ops).any(|k| span(&oaxes, k).saturating_add(span(&raxes, k)) >= INDEX_LIMIT);

    let sms = dev.multiprocessors.max(1) as u64;
    let per_sm = if dev.blocks_per_sm > 0 { u64::from(dev.blocks_per_sm) } else { BLOCKS_PER_SM };
    let target_blocks = sms * per_sm;
    let target_threads = target_blocks * THREADS as u64;
    // The innermost stride of the first input within each group: which one is contiguous.
    let inner = |axes: &[Axis]| axes.last().map_or(u64::MAX, |a| a.strides[0].unsigned_abs());
    let along_rows = inner(&raxes) <= 1 || inner(&raxes) < inner(&oaxes);
    let (strategy, splits) = if outs <= 1 || (along_rows && red >= 4096) {
        let s = if outs >= target_blocks {
            1
        } else if outs <= 1 {
            // One output: whole waves of resident blocks (1 to 4, parts of at least 8K
            // elements), so that no wave runs part-empty and blocks finishing early leave room
            // to the next wave.
            let parts = red / (MIN_ROW_PART / 2);
            if parts >= target_blocks { target_blocks * (parts / target_blocks).min(4) } else { parts.max(1) }
        } else {
            (target_blocks / outs.max(1)).min(red / MIN_ROW_PART).max(1)
        };
        (Strategy::Rows, s)
    } else if along_rows && red >= 64 {
        (Strategy::Warps, 1)
    } else {
        let s = if outs >= target_threads { 1 } else { (target_threads / outs).min(red / MIN_COL_PART).clamp(1, 65535) };
        (Strategy::Cols, s)
    };
    let block = THREADS;
    let grid = match strategy {
        Strategy::Rows => (splits as u32, outs.clamp(1, 65535) as u32),
        Strategy::Warps => {
            let per_block = (THREADS / 32) as u64;
            (outs.div_ceil(per_block).min(sms * 64).max(1) as u32, 1)
        }
        Strategy::Cols => (outs.div_ceil(THREADS as u64).clamp(1, i32::MAX as u64) as u32, splits as u32),
    };
    Ok(Plan {
        outs,
        red,
        odims: oaxes.iter().map(|a| a.extent).collect(),
        rdims: raxes.iter().map(|a| a.extent).collect(),
        inputs: ops,
        out,
        contiguous,
        strategy,
        splits: splits as u32,
        wide,
        grid,
        block,
    })
}
