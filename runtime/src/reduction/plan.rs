//! Planning a reduction launch (no GPU involved): axes as NumPy normalizes them, the output
//! shape, the iteration space split into output axes and reduced axes, both collapsed, and the
//! strategy (`rows`, `warps` or `cols`, see `abi/include/cuprum/reduction.h`) with its grid.
//!
//! Collapsing: extent-1 axes are dropped; unless the kernel has raw arguments (whose loop index
//! must keep its meaning), each group of axes is ordered by the first input's strides, largest
//! first, as a reduction may visit its elements in any order (its reduce function is taken to be
//! associative and commutative, as CuPy's); then neighbouring axes merge wherever every operand's
//! strides allow. A transposed or permuted C-contiguous input thus becomes the same one or two
//! axes as the original.

use cuprum_abi::ReductionVariant;

use crate::error::{Error, Result};
use crate::inline_list::InlineList;

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
    /// Every axis (the default).
    #[default]
    All,
    /// One axis.
    One(isize),
    /// Several axes.
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
    reduced_mask_into(axes, &mut mask)?;
    Ok(mask)
}

/// [`reduced_mask`] into `mask` (all false, one entry per axis).
pub(crate) fn reduced_mask_into(axes: &Axes, mask: &mut [bool]) -> Result<()> {
    let ndim = mask.len();
    let list: &[isize] = match axes {
        Axes::All => {
            mask.iter_mut().for_each(|m| *m = true);
            return Ok(());
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
    Ok(())
}

/// The output shape: the loop shape without the reduced axes, or with them as extent 1 when
/// `keepdims`.
pub fn output_shape(shape: &[usize], mask: &[bool], keepdims: bool) -> Vec<usize> {
    output_dims(shape, mask, keepdims).collect()
}

/// The extents of [`output_shape`].
pub(crate) fn output_dims<'a>(shape: &'a [usize], mask: &'a [bool], keepdims: bool) -> impl Iterator<Item = usize> + 'a {
    shape.iter().zip(mask).filter_map(move |(&d, &m)| match (m, keepdims) {
        (false, _) => Some(d),
        (true, true) => Some(1),
        (true, false) => None,
    })
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
    /// Strides (elements) along the collapsed output axes.
    pub ostrides: [i64; MAX_NDIM],
    /// Strides (elements) along the collapsed reduced axes.
    pub rstrides: [i64; MAX_NDIM],
}

/// What the planner needs to know about the device.
#[derive(Clone, Copy, Debug)]
pub struct DeviceShape {
    /// The number of streaming multiprocessors.
    pub multiprocessors: u32,
    /// Blocks of `THREADS` resident per SM for the kernel (its occupancy); 0: assume
    /// `BLOCKS_PER_SM`. Split reductions fill whole waves of resident blocks.
    pub blocks_per_sm: u32,
    /// The compute capability ((0, 0): the CPU device, or a test): picks the tuned geometry of a
    /// reduction to one value (`reduction::full`, docs/tuning.md).
    pub cc: (u32, u32),
}

/// A planned launch (the tests' view of [`plan_with`]'s plan, with the operands' strides).
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanSummary {
    /// Number of outputs.
    pub outs: u64,
    /// Number of reduced elements per output.
    pub red: u64,
    /// Collapsed output extents.
    pub odims: Vec<u64>,
    /// Collapsed reduced extents.
    pub rdims: Vec<u64>,
    /// The strides of every strided (non-raw) input, in order, over the collapsed axes.
    pub inputs: Vec<OperandStrides>,
    /// The output's strides over the collapsed output axes.
    pub out: OperandStrides,
    /// Every strided input has one reduced axis, of stride 1 or 0 (vector loads possible).
    pub contiguous: bool,
    /// With `contiguous`, bit k: strided input k has stride 0 along the reduced axis.
    pub broadcast: u32,
    /// How outputs map onto blocks, warps or threads.
    pub strategy: Strategy,
    /// Parts per output (`rows`) or per column (`cols`); 1: no partials.
    pub splits: u32,
    /// 64-bit indexing.
    pub wide: bool,
    /// The grid (x, y) in blocks.
    pub grid: (u32, u32),
    /// Threads per block.
    pub block: u32,
}

#[cfg(test)]
impl PlanSummary {
    /// The kernel variant of this plan.
    pub fn variant(&self) -> ReductionVariant {
        variant(self.strategy, self.wide)
    }

    /// Partial slots and counters the launch needs in scratch memory.
    pub fn scratch(&self) -> (u64, u64) {
        scratch(self.strategy, self.splits, self.outs, self.grid)
    }
}

fn variant(strategy: Strategy, wide: bool) -> ReductionVariant {
    match (strategy, wide) {
        (Strategy::Rows, false) => ReductionVariant::Rows,
        (Strategy::Warps, false) => ReductionVariant::Warps,
        (Strategy::Cols, false) => ReductionVariant::Cols,
        (Strategy::Rows, true) => ReductionVariant::Rows64,
        (Strategy::Warps, true) => ReductionVariant::Warps64,
        (Strategy::Cols, true) => ReductionVariant::Cols64,
    }
}

fn scratch(strategy: Strategy, splits: u32, outs: u64, grid: (u32, u32)) -> (u64, u64) {
    if splits <= 1 {
        return (0, 0);
    }
    let s = splits as u64;
    match strategy {
        Strategy::Rows => (outs * s, outs),
        Strategy::Cols => (outs * s, grid.0 as u64),
        Strategy::Warps => (0, 0),
    }
}

/// One group of collapsed axes (output or reduced), without heap memory: the extents and, per
/// collapsed axis, the loop axis whose strides it has (merged axes take their innermost axis'
/// strides).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Group {
    n: usize,
    dims: [u64; MAX_NDIM],
    /// As `u32`: a group of 104 bytes is moved inline (with `usize` axes, each move of the two
    /// groups of a plan was a `memcpy` call, a tenth of a reduction's host work).
    axis: [u32; MAX_NDIM],
}

impl Group {
    pub fn dims(&self) -> &[u64] {
        &self.dims[..self.n]
    }

    fn axes(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.axis[..self.n].iter().map(|&ax| ax as usize)
    }

    /// Operand strides over the group (zeros past the used axes).
    fn strides(&self, stride: impl Fn(usize) -> i64) -> [i64; MAX_NDIM] {
        let mut s = [0i64; MAX_NDIM];
        for (s, ax) in s.iter_mut().zip(self.axes()) {
            *s = stride(ax);
        }
        s
    }

    /// The largest |offset| an operand reaches over the group (sum of |stride| * (extent - 1)).
    fn span(&self, stride: impl Fn(usize) -> i64) -> u64 {
        self.axes()
            .zip(self.dims())
            .map(|(ax, &d)| stride(ax).unsigned_abs().saturating_mul(d.saturating_sub(1)))
            .fold(0u64, u64::saturating_add)
    }
}

/// Collapses the loop axes `axes` (in loop order) of extents `shape`: drops extent-1 axes,
/// orders by operand 0's |stride| (largest first, stable) when `reorder`, and merges each axis
/// into the one before it when every operand's outer stride is the inner stride times the inner
/// extent. `stride(op, axis)` for operands `0..n_ops`. Returns the group and its axis count
/// (which may pass [`MAX_NDIM`]: then the group holds the first ones).
fn collapse(shape: &[usize], axes: &mut [usize], n_ops: usize, stride: &impl Fn(usize, usize) -> i64, reorder: bool) -> (Group, usize) {
    let mut kept = 0;
    for k in 0..axes.len() {
        if shape[axes[k]] != 1 {
            axes[kept] = axes[k];
            kept += 1;
        }
    }
    let axes = &mut axes[..kept];
    if reorder {
        let key = |ax: usize| stride(0, ax).unsigned_abs();
        for i in 1..axes.len() {
            let mut j = i;
            while j > 0 && key(axes[j - 1]) < key(axes[j]) {
                axes.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    let mut g = Group::default();
    let mut n = 0usize;
    let mut last: Option<usize> = None;
    for &ax in axes.iter() {
        let Ok(ax32) = u32::try_from(ax) else {
            // More loop axes than a u32 counts: reported as too many dimensions.
            return (g, MAX_NDIM + 1);
        };
        let d = shape[ax] as u64;
        let merges = last.is_some_and(|b| (0..n_ops).all(|k| stride(k, b) == stride(k, ax) * d as i64));
        if merges {
            if n <= MAX_NDIM {
                g.dims[n - 1] *= d;
                g.axis[n - 1] = ax32;
            }
        } else {
            if n < MAX_NDIM {
                g.dims[n] = d;
                g.axis[n] = ax32;
            }
            n += 1;
        }
        last = Some(ax);
    }
    g.n = n.min(MAX_NDIM);
    (g, n)
}

/// Plans a reduction over a loop of `shape` (the inputs' broadcast shape).
///
/// - `inputs`: per strided input, its strides over `shape` (broadcast: 0 on stretched axes);
///   at least one;
/// - `mask`: the reduced axes ([`reduced_mask`]);
/// - `out_strides`: the output's strides, one per non-reduced axis of `shape` in order;
/// - `reorder`: whether axes may be reordered (false with raw arguments);
/// - `has_identity`: whether an empty reduction has a value.
#[cfg(test)]
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
) -> Result<PlanSummary> {
    debug_assert!(!inputs.is_empty());
    // The output's stride along each loop axis (0 on reduced axes).
    let mut out_k = 0;
    let out_axis: Vec<i64> = mask
        .iter()
        .map(|&m| {
            if m {
                0
            } else {
                out_k += 1;
                out_strides[out_k - 1] as i64
            }
        })
        .collect();
    let n_in = inputs.len();
    let stride = |k: usize, ax: usize| if k < n_in { inputs[k][ax] as i64 } else { out_axis[ax] };
    let p = plan_with(kernel, shape, n_in, &stride, mask, reorder, has_identity, dev)?;
    Ok(PlanSummary {
        outs: p.outs,
        red: p.red,
        odims: p.o.dims().to_vec(),
        rdims: p.r.dims().to_vec(),
        inputs: (0..n_in).map(|k| p.operand(|ax| stride(k, ax))).collect(),
        out: p.operand(|ax| stride(n_in, ax)),
        contiguous: p.contiguous,
        broadcast: p.broadcast,
        strategy: p.strategy,
        splits: p.splits,
        wide: p.wide,
        grid: p.grid,
        block: p.block,
    })
}

/// A plan without the operands' strides and without heap memory: what a launch uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaunchPlan {
    pub outs: u64,
    pub red: u64,
    pub o: Group,
    pub r: Group,
    pub contiguous: bool,
    pub broadcast: u32,
    pub strategy: Strategy,
    pub splits: u32,
    pub wide: bool,
    pub grid: (u32, u32),
    pub block: u32,
}

impl LaunchPlan {
    /// The strides of the operand whose stride along each loop axis is `stride`.
    pub fn operand(&self, stride: impl Fn(usize) -> i64) -> OperandStrides {
        OperandStrides { ostrides: self.o.strides(&stride), rstrides: self.r.strides(&stride) }
    }

    /// The kernel variant of this plan.
    pub fn variant(&self) -> ReductionVariant {
        variant(self.strategy, self.wide)
    }

    /// Partial slots and counters the launch needs in scratch memory.
    pub fn scratch(&self) -> (u64, u64) {
        scratch(self.strategy, self.splits, self.outs, self.grid)
    }
}

/// The plan (`plan`, in the tests) without heap memory for up to 32 loop axes: operands `0..n_in` are the strided
/// inputs and `n_in` the output, `stride(operand, loop axis)` their strides (the output's 0
/// on reduced axes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_with(
    kernel: &str,
    shape: &[usize],
    n_in: usize,
    stride: &impl Fn(usize, usize) -> i64,
    mask: &[bool],
    reorder: bool,
    has_identity: bool,
    dev: DeviceShape,
) -> Result<LaunchPlan> {
    let n_ops = n_in + 1;
    let outs: u64 = shape.iter().zip(mask).filter(|(_, m)| !**m).map(|(&d, _)| d as u64).product();
    let red: u64 = shape.iter().zip(mask).filter(|(_, m)| **m).map(|(&d, _)| d as u64).product();
    check_empty(kernel, shape, mask, has_identity)?;
    let mut axes: InlineList<usize, 32> = InlineList::new();
    for (k, _) in mask.iter().enumerate().filter(|(_, m)| !**m) {
        axes.push(k);
    }
    let (o, on) = collapse(shape, &mut axes, n_ops, stride, reorder);
    let (r, rn) = if red == 0 {
        (Group::default(), 0)
    } else {
        let mut axes: InlineList<usize, 32> = InlineList::new();
        for (k, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
            axes.push(k);
        }
        collapse(shape, &mut axes, n_ops, stride, reorder)
    };
    for (what, n) in [("output", on), ("reduced", rn)] {
        if n > MAX_NDIM {
            return Err(Error::Unsupported {
                what: format!(
                    "a reduction whose {what} axes keep {n} dimensions after merging the contiguous \
                     ones (at most {MAX_NDIM}); copy the input to a contiguous array first"
                ),
            });
        }
    }
    // Vector loads along the one reduced axis: each strided input of stride 1 along it, or of
    // stride 0 (one value per output, `broadcast`: read once and repeated in each vector).
    let along = |k: usize| stride(k, r.axis[0] as usize);
    let contiguous = red > 0 && r.n == 1 && n_in <= 32 && (0..n_in).all(|k| matches!(along(k), 0 | 1));
    let broadcast = if contiguous { (0..n_in).filter(|&k| along(k) == 0).fold(0u32, |m, k| m | 1 << k) } else { 0 };

    // 32-bit indexing when every index and offset fits.
    let wide = outs.saturating_mul(red.max(1)) >= INDEX_LIMIT
        || (0..n_ops).any(|k| o.span(|ax| stride(k, ax)).saturating_add(r.span(|ax| stride(k, ax))) >= INDEX_LIMIT);

    let sms = dev.multiprocessors.max(1) as u64;
    let per_sm = if dev.blocks_per_sm > 0 { u64::from(dev.blocks_per_sm) } else { BLOCKS_PER_SM };
    let target_blocks = sms * per_sm;
    let target_threads = target_blocks * THREADS as u64;
    // The innermost stride of the first input within each group: which one is contiguous.
    let inner = |g: &Group| g.axes().next_back().map_or(u64::MAX, |ax| stride(0, ax).unsigned_abs());
    let along_rows = inner(&r) <= 1 || inner(&r) < inner(&o);
    // Fewer outputs than a warp, each a long strided row: a thread per output (`cols`) would
    // leave almost every lane idle and keep too few loads in flight (k-means' masked sums, 4
    // outputs of 10^7 f64 along a middle axis: 7 ms, 0.05 of the copy ceiling); a block per
    // output, split across blocks, reads them with every thread.
    let few_long = outs < 32 && red >= 4096;
    // One output: the tuned geometry (`full`: its default is 256 threads, up to 4 waves, parts
    // of at least MIN_ROW_PART elements).
    let full = (outs <= 1 && red > 0).then(|| super::full::geometry(dev.cc, red));
    let (strategy, splits) = if outs <= 1 || (along_rows && red >= 4096) || few_long {
        let s = if outs >= target_blocks {
            1
        } else if let Some(g) = full {
            // One output: whole waves of resident blocks (1 to 4 by default, parts of at least
            // 16K elements), so that no wave runs part-empty and blocks finishing early leave
            // room to the next wave (measured on the H200: 2^28 f32 at 4 waves 1.02x the copy
            // ceiling, 1 wave 0.995x; 2^24 at 1 wave 0.70x, 2 waves 0.63x).
            let parts = red / g.min_part;
            if parts >= target_blocks { target_blocks * (parts / target_blocks).min(g.waves) } else { parts.max(1) }
        } else if outs <= 1 {
            1
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
    let block = match (strategy, full) {
        (Strategy::Rows, Some(g)) => g.block,
        _ => THREADS,
    };
    let grid = match strategy {
        Strategy::Rows => (splits as u32, outs.clamp(1, 65535) as u32),
        Strategy::Warps => {
            let per_block = (THREADS / 32) as u64;
            (outs.div_ceil(per_block).min(sms * 64).max(1) as u32, 1)
        }
        Strategy::Cols => (outs.div_ceil(THREADS as u64).clamp(1, i32::MAX as u64) as u32, splits as u32),
    };
    Ok(LaunchPlan {
        outs,
        red,
        o,
        r,
        contiguous,
        broadcast,
        strategy,
        splits: splits as u32,
        wide,
        grid,
        block,
    })
}
