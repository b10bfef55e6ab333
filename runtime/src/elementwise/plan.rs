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
/// Items per thread per step (`CUPRUM_EW_UNROLL` in `include/cuprum/elementwise.h`).
pub const UNROLL: u64 = 4;
/// Threads per block unless the caller says otherwise. 256 threads with four 16-byte items each
/// keep 32 KiB or more in flight per SM at the occupancy these kernels reach (2 to 4 blocks per SM
/// at 60-120 registers), above what an H100/H200 needs to saturate memory (bandwidth x latency,
/// about 25 KiB per SM), while leaving the scheduler eight warps per block to hide latency.
pub const DEFAULT_BLOCK: u32 = 256;
/// The largest grid a launch uses (the device limit along x); the kernels stride over the rest.
const MAX_GRID: u64 = (1 << 31) - 1;

/// The launch variant: which entry point of the kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Every array operand C-contiguous with the same layout: a 1-D loop, vector accesses when
    /// aligned.
    Contig,
    /// Strided or broadcast operands, 32-bit index arithmetic.
    S32,
    /// Strided or broadcast operands, 64-bit index arithmetic.
    S64,
}

impl Variant {
    /// The variant's name in symbols (`mangle::ELEMENTWISE_VARIANTS`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Contig => "contig",
            Variant::S32 => "s32",
            Variant::S64 => "s64",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// One operand of the kernel, in parameter order, as the planner sees it.
#[derive(Clone, Copy, Debug)]
pub enum PlanOperand<'a> {
    /// A non-raw array (input, output or output parameter): its shape, strides (elements), device
    /// address of its first element, and element size.
    Array { shape: &'a [usize], strides: &'a [isize], ptr: u64, elem: usize },
    /// A scalar passed by value or a raw argument: not part of the loop.
    Other,
}

/// What the kernel is launched with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
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
/// 16 bytes of the widest (1 when there is none or it is 16 bytes wide). The same number as
/// `cuprum::ew::vec_width` computes in the kernel.
pub fn vec_width(elem_sizes: impl IntoIterator<Item = usize>) -> u32 {
    match elem_sizes.into_iter().max() {
        None | Some(0) => 1,
        Some(m) => (16 / m.min(16)).max(1) as u32,
    }
}

/// Plans a loop over `shape` (the broadcast shape, already checked against every output).
/// `width` is [`vec_width`] of the kernel's parameters.
pub fn plan(shape: &[usize], operands: &[PlanOperand<'_>], width: u32) -> Result<Plan> {
    let size: u64 = shape.iter().map(|&d| d as u64).product();
    // Broadcast strides, then drop extent-1 axes.
    let mut dims: Vec<u64> = Vec::with_capacity(shape.len());
    let mut strides: Vec<Vec<i64>> = vec![Vec::with_capacity(shape.len()); operands.len()];
    for (ax, &d) in shape.iter().enumerate() {
        if d == 1 {
            continue;
        }
        dims.push(d as u64);
        for (op, st) in operands.iter().zip(strides.iter_mut()) {
            if let PlanOperand::Array { shape: s, strides: t, .. } = op {
                let pad = shape.len() - s.len();
                let v = if ax < pad || s[ax - pad] == 1 { 0 } else { t[ax - pad] as i64 };
                st.push(v);
            }
        }
    }
    // Merge adjacent axes whose strides allow it for every operand (inner to outer).
    let mut k = dims.len();
    while k >= 2 {
        let (outer, inner) = (k - 2, k - 1);
        let mergeable = operands.iter().zip(&strides).all(|(op, st)| match op {
            PlanOperand::Array { .. } => st[outer] == st[inner] * dims[inner] as i64,
            PlanOperand::Other => true,
        });
        if mergeable {
            dims[outer] *= dims[inner];
            dims.remove(inner);
            for (op, st) in operands.iter().zip(strides.iter_mut()) {
                if let PlanOperand::Array { .. } = op {
                    st[outer] = st[inner];
                    st.remove(inner);
                }
            }
        }
        k -= 1;
    }
    if dims.len() > MAX_NDIM {
        return Err(Error::Unsupported {
            what: format!(
                "an elementwise loop of {} dimensions after collapsing (shape {shape:?}); at most \
                 {MAX_NDIM} are supported: make some operands contiguous (`.copy()?`) first",
                dims.len()
            ),
        });
    }
    let arrays = || {
        operands.iter().zip(&strides).filter_map(|(op, st)| match op {
            PlanOperand::Array { ptr, elem, .. } => Some((*ptr, *elem, st)),
            PlanOperand::Other => None,
        })
    };
    let contiguous = match dims.len() {
        0 => true,
        1 => arrays().all(|(_, _, st)| st[0] == 1),
        _ => false,
    };
    let keep = |op: &PlanOperand<'_>, st: Vec<i64>| match op {
        PlanOperand::Array { .. } => Some(st),
        PlanOperand::Other => None,
    };
    if contiguous {
        let aligned = arrays().all(|(ptr, elem, _)| ptr % (width as u64 * elem as u64).min(16) == 0);
        let vec = if width > 1 && aligned { width } else { 1 };
        return Ok(Plan {
            variant: Variant::Contig,
            size,
            vec,
            items: size / vec as u64,
            dims: vec![size],
            strides: operands.iter().map(|op| keep(op, vec![1])).collect(),
            bcast: 0,
        });
    }
    // 32-bit indexing when the loop and every operand's offsets fit in i32.
    let fits = size <= i32::MAX as u64
        && arrays().all(|(_, _, st)| {
            let (mut lo, mut hi) = (0i128, 0i128);
            for (d, s) in dims.iter().zip(st) {
                let span = (*d as i128 - 1) * *s as i128;
                if span < 0 { lo += span } else { hi += span }
            }
            lo >= i32::MIN as i128 && hi <= i32::MAX as i128
        });
    let variant = if fits { Variant::S32 } else { Variant::S64 };
    // Vector items along the innermost axis: every operand contiguous or broadcast there, the
    // extent a multiple of the width, and the contiguous ones aligned at every item.
    let last = dims.len() - 1;
    let vec_ok = width > 1
        && dims[last] % width as u64 == 0
        && arrays().all(|(ptr, elem, st)| match st[last] {
            0 => true,
            1 => {
                ptr % (width as u64 * elem as u64).min(16) == 0
                    && st[..last].iter().all(|s| s.rem_euclid(width as i64) == 0)
            }
            _ => false,
        });
    let vec = if vec_ok { width } else { 1 };
    let mut bcast = 0u32;
    let mut out_strides = Vec::with_capacity(operands.len());
    for (p, (op, mut st)) in operands.iter().zip(strides).enumerate() {
        if let PlanOperand::Array { .. } = op {
            if vec > 1 && st[last] == 0 && p < 31 {
                bcast |= 1 << p;
            }
            st[last] *= vec as i64;
        }
        out_strides.push(keep(op, st));
    }
    dims[last] /= vec as u64;
    // A 2-D loop with an operand contiguous along the outer axis (a transposed input or output):
    // visit it by tiles (`TiledBody` in elementwise.h), flagged by bit 31.
    let transposed = dims.len() == 2
        && out_strides.iter().flatten().any(|st| st[0].abs() == 1 && st[1].abs() > 1);
    if vec == 1 && transposed {
        bcast |= TILED;
    }
    Ok(Plan { variant, size, vec, items: size / vec as u64, dims, strides: out_strides, bcast })
}

/// Bit of `Plan::bcast` asking a strided 2-D loop to run by tiles (`TiledBody`).
pub const TILED: u32 = 1 << 31;

impl Plan {
    /// Blocks of `block` threads covering the items (a thread handles [`UNROLL`] items per step;
    /// at most the device's grid limit, the kernels stride over the rest).
    pub fn grid(&self, block: u32) -> u32 {
        let threads = self.items.div_ceil(UNROLL).max(1);
        threads.div_ceil(block.max(1) as u64).clamp(1, MAX_GRID) as u32
    }
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
