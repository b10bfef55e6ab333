//! Launch planning of an elementwise kernel, as CuPy does it: the loop shape (the broadcast of all
//! non-raw arrays, outputs included), dimension collapsing, the choice of the launch variant
//! (`contig`, `s32`, `s64`) and of vector accesses, and the grid.
//!
//! Collapsing keeps the C-order flat index of every element (the kernel's `index()`), so axes are
//! never reordered: extent-1 axes are dropped and adjacent axes merged when, for every array
//! operand, the outer stride equals the inner stride times the inner extent.
//!
//! Pure functions of shapes, strides and addresses: tested without a GPU.

use crate::error::{Error, Result};

/// The most dimensions a loop may have after collapsing (`CUPRUM_MAX_NDIM`).
pub const MAX_NDIM: usize = 8;
/// Items per thread per step (`CUPRUM_EW_UNROLL` in `abi/include/cuprum/elementwise.h`).
pub const UNROLL: u64 = 4;
/// Threads per block unless the caller says otherwise. 256 threads with four 16-byte items each
/// keep 32 KiB or more in flight per SM at the occupancy these kernels reach (2 to 4 blocks per SM
/// at 60-120 registers), above what an H100/H200 needs to saturate memory (bandwidth x latency,
/// about 25 KiB per SM), while leaving the scheduler eight warps per block to hide latency.
pub const DEFAULT_BLOCK: u32 = 256;
/// The largest grid a launch uses (the device limit along x); the kernels stride over the rest.
const MAX_GRID: u64 = (1 << 31) - 1;

/// The launch variant: which entry point of the kernel runs (`contig`, `s32`, `s64`; the
/// entry points are `cuprum_abi::elementwise`'s).
pub use cuprum_abi::ElementwiseVariant as Variant;

/// One operand of the kernel, in parameter order, as the planner sees it.
#[derive(Clone, Copy, Debug)]
pub enum PlanOperand<'a> {
    /// A non-raw array (input, output or output parameter): its shape, strides (elements), device
    /// address of its first element, and element size.
    Array {
        /// Its shape.
        shape: &'a [usize],
        /// Its strides, in elements.
        strides: &'a [isize],
        /// The device address of its first element.
        ptr: u64,
        /// The element's size in bytes.
        elem: usize,
    },
    /// A scalar passed by value or a raw argument: not part of the loop.
    Other,
}

/// What the kernel is launched with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementwisePlan {
    /// The entry point to launch.
    pub variant: Variant,
    /// Elements in the loop (the kernel's `loop_size()`).
    pub size: u64,
    /// Elements per vector access (1: scalar accesses).
    pub vec: u32,
    /// The collapsed loop shape in items (strided variants; the innermost extent divided by `vec`).
    pub dims: Vec<u64>,
    /// Per operand (parameter order): its collapsed strides in elements, the innermost one scaled
    /// by `vec`; `None` for scalars and raw arguments.
    pub strides: Vec<Option<Vec<i64>>>,
    /// Bit p: operand p's innermost stride is 0 (strided vector loops).
    pub bcast: u32,
    /// Items the loop runs over (`size / vec` for strided variants, whole vectors for `contig`).
    pub items: u64,
}

/// The elements per vector access of a kernel whose non-raw parameters have these element sizes:
/// 16 bytes of the widest; 1 when there is none, when the widest is 16 bytes or more, or when
/// some size is not a power of two (a 6- or 12-byte `#[device]` struct: a vector type's
/// `alignas` must be a power of two). The same number as `cuprum::ew::vec_width` computes in the
/// kernel (`abi/include/cuprum/elementwise.h`); change both together.
pub fn vec_width(elem_sizes: impl IntoIterator<Item = usize>) -> u32 {
    let (mut widest, mut pow2) = (0usize, true);
    for size in elem_sizes {
        widest = widest.max(size);
        pow2 &= size == 0 || size.is_power_of_two();
    }
    if widest == 0 || widest >= 16 || !pow2 { 1 } else { (16 / widest) as u32 }
}

/// Plans a loop over `shape` (the broadcast shape, already checked against every output).
/// `width` is [`vec_width`] of the kernel's parameters.
pub fn plan(shape: &[usize], operands: &[PlanOperand<'_>], width: u32) -> Result<ElementwisePlan> {
    let lp = plan_loop(shape, operands.iter().copied(), width)?;
    Ok(ElementwisePlan {
        variant: lp.variant,
        size: lp.size,
        vec: lp.vec,
        dims: lp.dims().to_vec(),
        strides: operands.iter().map(|op| lp.strides(op).map(|(st, n)| st[..n].to_vec())).collect(),
        bcast: lp.bcast,
        items: lp.items,
    })
}

/// An [`ElementwisePlan`] without its per-operand strides and without heap memory: what a launch
/// uses.
/// An operand's collapsed strides are its broadcast strides at the loop axis each collapsed
/// axis ends with (merged axes take their innermost axis' stride), see [`LoopPlan::strides`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopPlan {
    pub variant: Variant,
    pub size: u64,
    pub vec: u32,
    pub bcast: u32,
    pub items: u64,
    /// Collapsed axes (the `contig` variant: one, of `size` elements).
    ndim: usize,
    /// The collapsed loop shape in items (the innermost extent divided by `vec`).
    dims: [u64; MAX_NDIM],
    /// Per collapsed axis, the (innermost) loop axis whose strides it has.
    axis: [usize; MAX_NDIM],
    /// Axes of the loop shape.
    loop_ndim: usize,
}

/// Operand `op`'s stride (elements) along axis `ax` of an `ndim`-axis loop it broadcasts to: 0 on
/// new leading axes and stretched extent-1 axes.
#[inline]
fn broadcast_stride(ndim: usize, shape: &[usize], strides: &[isize], ax: usize) -> i64 {
    let pad = ndim - shape.len();
    if ax < pad || shape[ax - pad] == 1 { 0 } else { strides[ax - pad] as i64 }
}

impl LoopPlan {
    /// The collapsed loop shape in items.
    pub fn dims(&self) -> &[u64] {
        &self.dims[..self.ndim]
    }

    /// An array operand's collapsed strides in elements (the first `n` of the array), the
    /// innermost scaled by `vec`; `None` for scalars and raw arguments.
    pub fn strides(&self, op: &PlanOperand<'_>) -> Option<([i64; MAX_NDIM], usize)> {
        let PlanOperand::Array { shape, strides, .. } = op else {
            return None;
        };
        let mut st = [0i64; MAX_NDIM];
        if self.variant == Variant::Contig {
            st[0] = 1;
            return Some((st, 1));
        }
        for (s, &ax) in st.iter_mut().zip(&self.axis[..self.ndim]) {
            *s = broadcast_stride(self.loop_ndim, shape, strides, ax);
        }
        st[self.ndim - 1] *= self.vec as i64;
        Some((st, self.ndim))
    }
}

/// [`plan`] without heap memory, over the operands `ops` (in parameter order; iterated several
/// times). Collapsing merges each axis into the one before it (extent-1 axes dropped) when,
/// for every array operand, the outer stride equals the inner stride times the inner extent.
pub(crate) fn plan_loop<'a, I>(shape: &[usize], ops: I, width: u32) -> Result<LoopPlan>
where
    I: Iterator<Item = PlanOperand<'a>> + Clone,
{
    let size: u64 = shape.iter().map(|&d| d as u64).product();
    let nd = shape.len();
    let stride = |op: &PlanOperand<'_>, ax: usize| match op {
        PlanOperand::Array { shape: s, strides: t, .. } => Some(broadcast_stride(nd, s, t, ax)),
        PlanOperand::Other => None,
    };
    let mut dims = [0u64; MAX_NDIM];
    let mut axis = [0usize; MAX_NDIM];
    // Collapsed axes so far (may pass MAX_NDIM: then only counted, for the message).
    let mut n = 0usize;
    let mut last: Option<usize> = None;
    for (ax, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        let merges = last.is_some_and(|b| {
            ops.clone().all(|op| match (stride(&op, b), stride(&op, ax)) {
                (Some(outer), Some(inner)) => outer == inner * d as i64,
                _ => true,
            })
        });
        if merges {
            if n <= MAX_NDIM {
                dims[n - 1] *= d as u64;
                axis[n - 1] = ax;
            }
        } else {
            if n < MAX_NDIM {
                dims[n] = d as u64;
                axis[n] = ax;
            }
            n += 1;
        }
        last = Some(ax);
    }
    if n > MAX_NDIM {
        return Err(Error::Unsupported {
            what: format!(
                "an elementwise loop of {n} dimensions after collapsing (shape {shape:?}); at most \
                 {MAX_NDIM} are supported: make some operands contiguous (`.copy()?`) first"
            ),
        });
    }
    let arrays = || {
        ops.clone().filter_map(|op| match op {
            PlanOperand::Array { ptr, elem, .. } => Some((op, ptr, elem)),
            PlanOperand::Other => None,
        })
    };
    let st = |op: &PlanOperand<'_>, g: usize| stride(op, axis[g]).unwrap_or(0);
    let contiguous = match n {
        0 => true,
        1 => arrays().all(|(op, _, _)| st(&op, 0) == 1),
        _ => false,
    };
    if contiguous {
        let aligned = arrays().all(|(_, ptr, elem)| ptr % (width as u64 * elem as u64).min(16) == 0);
        let vec = if width > 1 && aligned { width } else { 1 };
        dims[0] = size;
        return Ok(LoopPlan {
            variant: Variant::Contig,
            size,
            vec,
            bcast: 0,
            items: size / vec as u64,
            ndim: 1,
            dims,
            axis,
            loop_ndim: nd,
        });
    }
    // 32-bit indexing when the loop and every operand's offsets fit in i32.
    let fits = size <= i32::MAX as u64
        && arrays().all(|(op, _, _)| {
            let (mut lo, mut hi) = (0i128, 0i128);
            for (g, d) in dims[..n].iter().enumerate() {
                let span = (*d as i128 - 1) * st(&op, g) as i128;
                if span < 0 { lo += span } else { hi += span }
            }
            lo >= i32::MIN as i128 && hi <= i32::MAX as i128
        });
    let mut variant = if fits { Variant::S32 } else { Variant::S64 };
    // Vector items along the innermost axis: every operand contiguous or broadcast there, the
    // extent a multiple of the width, and the contiguous ones aligned at every item.
    let last = n - 1;
    let vec_ok = width > 1
        && dims[last] % width as u64 == 0
        && arrays().all(|(op, ptr, elem)| match st(&op, last) {
            0 => true,
            1 => {
                ptr % (width as u64 * elem as u64).min(16) == 0
                    && (0..last).all(|g| st(&op, g).rem_euclid(width as i64) == 0)
            }
            _ => false,
        });
    let vec = if vec_ok { width } else { 1 };
    let mut bcast = 0u32;
    if vec > 1 {
        for (p, op) in ops.clone().enumerate() {
            if p < 31 && stride(&op, axis[last]) == Some(0) {
                bcast |= 1 << p;
            }
        }
    }
    // A 2-D loop with an operand contiguous along the outer axis (a transposed input or output)
    // and 32-bit offsets: the tiled variant (`TiledBody` in elementwise.h); bit p of `bcast` marks
    // operand p as one of those, which the tiles read and write along its contiguous axis and
    // exchange through shared memory. (With 64-bit offsets, `s64` visits it element by element.)
    let outer_contiguous = |op: &PlanOperand<'_>| {
        matches!(op, PlanOperand::Array { .. }) && st(op, 0).abs() == 1 && st(op, 1).abs() > 1
    };
    if fits && vec == 1 && n == 2 && ops.clone().any(|op| outer_contiguous(&op)) {
        variant = Variant::T32;
        for (p, op) in ops.clone().enumerate() {
            if p < 31 && outer_contiguous(&op) {
                bcast |= 1 << p;
            }
        }
    }
    dims[last] /= vec as u64;
    Ok(LoopPlan { variant, size, vec, bcast, items: size / vec as u64, ndim: n, dims, axis, loop_ndim: nd })
}

impl ElementwisePlan {
    /// Blocks of `block` threads covering the items (a thread handles [`UNROLL`] items per step;
    /// at most the device's grid limit, the kernels stride over the rest; a kernel with more
    /// than 4 operands takes fewer items per step and strides over the rest too).
    pub fn grid(&self, block: u32) -> u32 {
        grid(self.items, block)
    }
}

impl LoopPlan {
    /// [`ElementwisePlan::grid`].
    pub fn grid(&self, block: u32) -> u32 {
        grid(self.items, block)
    }
}

/// [`LoopPlan::grid`] of a loop of `items` items.
pub(crate) fn grid_for(items: u64, block: u32) -> u32 {
    grid(items, block)
}

fn grid(items: u64, block: u32) -> u32 {
    let threads = items.div_ceil(UNROLL).max(1);
    threads.div_ceil(block.max(1) as u64).clamp(1, MAX_GRID) as u32
}

/// `n / d` as the `s32` kernels compute it: `[d, m, s]` with `s = ceil(log2 d)` and
/// `m = floor(2^32 (2^s - d) / d) + 1`; then `n / d = (umulhi(n, m) + n) >> s` for every u32 `n`.
pub fn div32(d: u32) -> [u32; 3] {
    let d = d.max(1);
    let s = 32 - (d - 1).leading_zeros();
    let m = ((1u64 << 32) * ((1u64 << s) - d as u64) / d as u64 + 1) as u32;
    [d, m, s]
}

/// The kernel's division with a [`div32`] triple (for tests).
#[cfg(test)]
pub fn div32_apply([_, m, s]: [u32; 3], n: u32) -> u32 {
    let hi = ((n as u64 * m as u64) >> 32) as u32;
    ((hi as u64 + n as u64) >> s) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr<'a>(shape: &'a [usize], strides: &'a [isize]) -> PlanOperand<'a> {
        PlanOperand::Array { shape, strides, ptr: 0x1000, elem: 4 }
    }

    #[test]
    fn magic_division_is_exact() {
        let ds = [1u32, 2, 3, 5, 7, 10, 11, 255, 256, 641, 1000, 16384, 65535, 65537, 1 << 20, 999_999_937, (1 << 31) - 1, 1 << 31, u32::MAX - 1, u32::MAX];
        let ns = [0u32, 1, 2, 3, 7, 100, 65535, 65536, 1 << 24, (1 << 31) - 1, 1 << 31, u32::MAX - 1, u32::MAX];
        for &d in &ds {
            let t = div32(d);
            for &n in &ns {
                assert_eq!(div32_apply(t, n), n / d, "{n} / {d}");
            }
            for k in 0..2000u64 {
                let n = (k * 2_147_483_647u64.wrapping_mul(k + 13)) as u32;
                assert_eq!(div32_apply(t, n), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn all_contiguous_is_one_dimension() {
        let p = plan(&[4, 5, 6], &[arr(&[4, 5, 6], &[30, 6, 1]), PlanOperand::Other, arr(&[4, 5, 6], &[30, 6, 1])], 4).unwrap();
        assert_eq!((p.variant, p.size, p.vec, p.items), (Variant::Contig, 120, 4, 30));
        assert_eq!(p.strides[1], None);
    }
}
