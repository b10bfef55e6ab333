//! Tensor cores and asynchronous copies in the kernel language (docs/kernel-language.md, "Tensor
//! cores"): the warp-level matrix multiply-accumulates `mma_*`, the fragment loads `ldmatrix_*`
//! and `cp_async` with its groups. Each is translated to the PTX instruction of the same name
//! (`cuprum/tensor.h`); what they compute is defined here, once, for the prelude's host
//! definitions and for the CPU device (`cpu::tensor`).
//!
//! Fragments are local arrays in PTX's layouts for `mma.sync.aligned.m16n8k*.row.col`: lane `l`
//! of the warp, in group `g = l / 4` with `t = l % 4`, holds
//!
//! | operand | elements (row, column) of the lane |
//! | --- | --- |
//! | `m16n8k16` A `[T; 8]` (16 x 16) | `(g, 2t..2t+2)`, `(g+8, 2t..2t+2)`, `(g, 2t+8..2t+10)`, `(g+8, 2t+8..2t+10)` |
//! | `m16n8k16` B `[T; 4]` (16 x 8) | `(2t..2t+2, g)`, `(2t+8..2t+10, g)` |
//! | `m16n8k8_tf32` A `[f32; 4]` (16 x 8) | `(g, t)`, `(g+8, t)`, `(g, t+4)`, `(g+8, t+4)` |
//! | `m16n8k8_tf32` B `[f32; 2]` (8 x 8) | `(t, g)`, `(t+4, g)` |
//! | `m16n8k32_i8` A `[i8; 16]` (16 x 32) | `(g, 4t..4t+4)`, `(g+8, 4t..4t+4)`, `(g, 4t+16..4t+20)`, `(g+8, 4t+16..4t+20)` |
//! | `m16n8k32_i8` B `[i8; 8]` (32 x 8) | `(4t..4t+4, g)`, `(4t+16..4t+20, g)` |
//! | C and D `[f32; 4]` / `[i32; 4]` (16 x 8) | `(g, 2t..2t+2)`, `(g+8, 2t..2t+2)` |
//!
//! The host definitions of the prelude model one thread: its warp's other lanes hold the same
//! fragments as the caller (as a shuffle returns the caller's value), and the caller is lane 0.

use half::{bf16, f16};

use super::intrinsics::KernelIndex;
use super::traits::Scalar;

/// The 16-bit elements `ldmatrix_*` loads: `f16`, `bf16`, `i16`, `u16`.
pub trait Bits16: Scalar {}
impl Bits16 for f16 {}
impl Bits16 for bf16 {}
impl Bits16 for i16 {}
impl Bits16 for u16 {}

/// The input types of `mma_m16n8k16`: `f16` and `bf16`.
pub trait MmaHalf: Bits16 {
    /// The value, exactly.
    fn to_f64_exact(self) -> f64;
}
impl MmaHalf for f16 {
    fn to_f64_exact(self) -> f64 {
        self.to_f64()
    }
}
impl MmaHalf for bf16 {
    fn to_f64_exact(self) -> f64 {
        self.to_f64()
    }
}

/// `x` rounded to TF32 (10 mantissa bits) to nearest, ties away from zero: PTX
/// `cvt.rna.tf32.f32`. Infinities and NaN are kept.
pub fn round_tf32(x: f32) -> f32 {
    let b = x.to_bits();
    if (b & 0x7f80_0000) == 0x7f80_0000 {
        return x;
    }
    f32::from_bits((b + 0x1000) & 0xffff_e000)
}

/// The warp's tile `d = a * b + c` of `mma_m16n8k16`, lane `lane`'s part: `a[l]`, `b[l]` are lane
/// `l`'s fragments. Products are exact and summed in f64, rounded to f32 once.
pub fn mma_m16n8k16_warp<T: MmaHalf>(a: &[[T; 8]; 32], b: &[[T; 4]; 32], c: [f32; 4], lane: u32) -> [f32; 4] {
    let (mut am, mut bm) = ([[0f64; 16]; 16], [[0f64; 8]; 16]);
    for l in 0..32 {
        let (g, t) = (l / 4, 2 * (l % 4));
        for (k, (r, col)) in
            [(g, t), (g, t + 1), (g + 8, t), (g + 8, t + 1), (g, t + 8), (g, t + 9), (g + 8, t + 8), (g + 8, t + 9)].into_iter().enumerate()
        {
            am[r][col] = a[l][k].to_f64_exact();
        }
        for (k, r) in [t, t + 1, t + 8, t + 9].into_iter().enumerate() {
            bm[r][g] = b[l][k].to_f64_exact();
        }
    }
    tile_f32(lane, c, |r, col| (0..16).map(|k| am[r][k] * bm[k][col]).sum())
}

/// The warp's tile of `mma_m16n8k8_tf32`, lane `lane`'s part; inputs rounded by [`round_tf32`].
pub fn mma_m16n8k8_tf32_warp(a: &[[f32; 4]; 32], b: &[[f32; 2]; 32], c: [f32; 4], lane: u32) -> [f32; 4] {
    let (mut am, mut bm) = ([[0f64; 8]; 16], [[0f64; 8]; 8]);
    for l in 0..32 {
        let (g, t) = (l / 4, l % 4);
        for (k, (r, col)) in [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)].into_iter().enumerate() {
            am[r][col] = round_tf32(a[l][k]) as f64;
        }
        bm[t][g] = round_tf32(b[l][0]) as f64;
        bm[t + 4][g] = round_tf32(b[l][1]) as f64;
    }
    tile_f32(lane, c, |r, col| (0..8).map(|k| am[r][k] * bm[k][col]).sum())
}

/// The warp's tile of `mma_m16n8k32_i8`, lane `lane`'s part; sums wrap as the instruction's do.
pub fn mma_m16n8k32_i8_warp(a: &[[i8; 16]; 32], b: &[[i8; 8]; 32], c: [i32; 4], lane: u32) -> [i32; 4] {
    let (mut am, mut bm) = ([[0i32; 32]; 16], [[0i32; 8]; 32]);
    for l in 0..32 {
        let (g, t) = (l / 4, 4 * (l % 4));
        for j in 0..4 {
            am[g][t + j] = a[l][j] as i32;
            am[g + 8][t + j] = a[l][4 + j] as i32;
            am[g][t + 16 + j] = a[l][8 + j] as i32;
            am[g + 8][t + 16 + j] = a[l][12 + j] as i32;
            bm[t + j][g] = b[l][j] as i32;
            bm[t + 16 + j][g] = b[l][4 + j] as i32;
        }
    }
    let (rows, cols) = lane_tile(lane);
    std::array::from_fn(|i| (0..32).fold(c[i], |s, k| s.wrapping_add(am[rows[i]][k].wrapping_mul(bm[k][cols[i]]))))
}

/// The (row, column) of each of lane `lane`'s four elements of a 16 x 8 C or D tile.
fn lane_tile(lane: u32) -> ([usize; 4], [usize; 4]) {
    let (g, t) = ((lane % 32 / 4) as usize, (2 * (lane % 4)) as usize);
    ([g, g, g + 8, g + 8], [t, t + 1, t, t + 1])
}

fn tile_f32(lane: u32, c: [f32; 4], dot: impl Fn(usize, usize) -> f64) -> [f32; 4] {
    let (rows, cols) = lane_tile(lane);
    std::array::from_fn(|i| (c[i] as f64 + dot(rows[i], cols[i])) as f32)
}

/// Lane `lane`'s part of `ldmatrix` with `rows[l]` the row index lane `l` gave (used for
/// `l < 8 * X`): two elements of each of the `X` matrices, element `(r, c)` of matrix `j` being
/// `at(rows[8 j + r] + c)` (transposed: `at(rows[8 j + c] + r)`).
pub fn ldmatrix_lane<T: Copy, const X: usize, const OUT: usize>(
    rows: &[usize; 32],
    lane: u32,
    trans: bool,
    at: impl Fn(usize) -> T,
) -> [T; OUT] {
    debug_assert_eq!(OUT, 2 * X);
    let l = (lane % 32) as usize;
    std::array::from_fn(|k| {
        let (j, e) = (k / 2, k % 2);
        let (r, c) = (l / 4, 2 * (l % 4) + e);
        if trans { at(rows[8 * j + c] + r) } else { at(rows[8 * j + r] + c) }
    })
}

// ---------------------------------------------------------------------------------------------
// The prelude's host definitions: one thread, whose warp's lanes all hold its values.
// ---------------------------------------------------------------------------------------------

/// `d = a * b + c` on tensor cores for a 16 x 8 x 16 tile with `f16` or `bf16` inputs and f32
/// accumulation: PTX `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` (sm_80+). Every lane of
/// the warp calls it together with its fragments (layouts in the documentation of `runtime/src/lang/tensor.rs`).
pub fn mma_m16n8k16<T: MmaHalf>(a: [T; 8], b: [T; 4], c: [f32; 4]) -> [f32; 4] {
    mma_m16n8k16_warp(&[a; 32], &[b; 32], c, 0)
}

/// `d = a * b + c` for a 16 x 8 x 8 tile with inputs rounded to TF32 and f32 accumulation: PTX
/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (sm_80+).
pub fn mma_m16n8k8_tf32(a: [f32; 4], b: [f32; 2], c: [f32; 4]) -> [f32; 4] {
    mma_m16n8k8_tf32_warp(&[a; 32], &[b; 32], c, 0)
}

/// `d = a * b + c` for a 16 x 8 x 32 tile of `i8` with `i32` accumulation (wrapping): PTX
/// `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` (sm_80+).
pub fn mma_m16n8k32_i8(a: [i8; 16], b: [i8; 8], c: [i32; 4]) -> [i32; 4] {
    mma_m16n8k32_i8_warp(&[a; 32], &[b; 32], c, 0)
}

fn ldmatrix_host<T: Bits16, I: KernelIndex, const X: usize, const OUT: usize>(s: &[T], i: I, trans: bool) -> [T; OUT] {
    let rows = [i.to_usize(); 32];
    ldmatrix_lane::<T, X, OUT>(&rows, 0, trans, |k| s[k])
}

macro_rules! ldmatrix_fns {
    ($($name:ident, $x:literal, $out:literal, $trans:literal, $ptx:literal;)*) => {$(
        /// A warp's load of 8x8 matrices of 16-bit elements from shared memory (a `shared_array` or
        /// `dynamic_shared`) into fragments:
        #[doc = concat!("PTX `", $ptx, "` (sm_75+).")]
        /// Lane `l < 8 * count` gives `i`, the index of row `l % 8` of matrix `l / 8` (8
        /// consecutive elements, a multiple of 8); each lane gets two elements of every matrix,
        /// in an `mma` fragment's layout. On a GPU and on the CPU device, an out-of-range or
        /// misaligned row is reported (`Error::IndexOutOfBounds`, `Error::IndexMisaligned`) and
        /// row 0 is read instead; on the host, an out-of-range row panics as indexing does.
        pub fn $name<T: Bits16, I: KernelIndex>(s: &[T], i: I) -> [T; $out] {
            ldmatrix_host::<T, I, $x, $out>(s, i, $trans)
        }
    )*};
}

macro_rules! ldmatrix_unchecked_fns {
    ($($name:ident, $checked:ident, $out:literal;)*) => {$(
        #[doc = concat!("[`", stringify!($checked), "`] without the checks of the rows (one branch per")]
        /// call, which keeps the GPU's scheduler from overlapping a loop's loads and
        /// multiplications). Host and CPU device: checked all the same.
        ///
        /// # Safety
        ///
        /// On a GPU, every row a lane gives (lanes `0..8 * count`) is 8 elements inside `s`
        /// starting at a multiple of 8: a row outside the array reads other shared memory or
        /// faults, and a misaligned one faults.
        pub unsafe fn $name<T: Bits16, I: KernelIndex>(s: &[T], i: I) -> [T; $out] {
            $checked(s, i)
        }
    )*};
}

ldmatrix_unchecked_fns! {
    ldmatrix_x1_unchecked, ldmatrix_x1, 2;
    ldmatrix_x2_unchecked, ldmatrix_x2, 4;
    ldmatrix_x4_unchecked, ldmatrix_x4, 8;
    ldmatrix_x1_trans_unchecked, ldmatrix_x1_trans, 2;
    ldmatrix_x2_trans_unchecked, ldmatrix_x2_trans, 4;
    ldmatrix_x4_trans_unchecked, ldmatrix_x4_trans, 8;
}

ldmatrix_fns! {
    ldmatrix_x1, 1, 2, false, "ldmatrix.sync.aligned.m8n8.x1.shared.b16";
    ldmatrix_x2, 2, 4, false, "ldmatrix.sync.aligned.m8n8.x2.shared.b16";
    ldmatrix_x4, 4, 8, false, "ldmatrix.sync.aligned.m8n8.x4.shared.b16";
    ldmatrix_x1_trans, 1, 2, true, "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16";
    ldmatrix_x2_trans, 2, 4, true, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16";
    ldmatrix_x4_trans, 4, 8, true, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16";
}

/// Starts an asynchronous copy of 16 bytes (`16 / size_of::<T>()` elements) from `src[si..]` to
/// shared memory `dst[di..]` (a `shared_array` or `dynamic_shared`): PTX
/// `cp.async.cg.shared.global` (sm_80+). Both ends must be 16-byte aligned; out of range or
/// misaligned, nothing is copied and the violation is reported.
/// The copy is complete after [`cp_async_commit`] and a [`cp_async_wait`] that covers its group
/// (and, for other threads to read it, a `sync_threads()`).
///
/// Host: copies at once.
pub fn cp_async<T: Scalar, I: KernelIndex, J: KernelIndex>(dst: &mut [T], di: I, src: &[T], si: J) {
    let n = 16 / size_of::<T>();
    let (di, si) = (di.to_usize(), si.to_usize());
    dst[di..di + n].copy_from_slice(&src[si..si + n]);
}

/// [`cp_async`] without its checks (a branch per call). Host and CPU device: checked all the
/// same.
///
/// # Safety
///
/// On a GPU, `dst[di..di + n]` and `src[si..si + n]` (`n = 16 / size_of::<T>()`) are in range and
/// `di` and `si` are multiples of `n`: otherwise the copy reads or writes memory outside its
/// arguments, or faults. `src` is a slice parameter of the calling function (the compiler says
/// so), whose start the generated code checks for 16-byte alignment when the function is
/// entered: a misaligned one is reported (`Error::IndexMisaligned`) and the function returns.
pub unsafe fn cp_async_unchecked<T: Scalar, I: KernelIndex, J: KernelIndex>(dst: &mut [T], di: I, src: &[T], si: J) {
    cp_async(dst, di, src, si)
}

/// Closes the thread's group of the copies started since the previous one: PTX
/// `cp.async.commit_group` (sm_80+). Host: nothing.
pub fn cp_async_commit() {}

/// Waits until at most `PENDING` of the thread's committed groups are in flight (0 to 7;
/// `cp_async_wait::<0>()` waits for all): PTX `cp.async.wait_group` (sm_80+). Host: nothing.
pub fn cp_async_wait<const PENDING: u32>() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_rounds_to_nearest_ties_away() {
        assert_eq!(round_tf32(1.0), 1.0);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: away from zero.
        assert_eq!(round_tf32(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
        assert_eq!(round_tf32(-(1.0 + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
        assert_eq!(round_tf32(1.0 + 2f32.powi(-12)), 1.0);
        assert!(round_tf32(f32::NAN).is_nan());
        assert_eq!(round_tf32(f32::INFINITY), f32::INFINITY);
    }

    /// Lane l holds A(g, k) = g * 16 + k and B(k, n) = 1 when k == n: D = A's first 8 columns.
    #[test]
    fn m16n8k16_layout_picks_the_documented_elements() {
        let a: [[bf16; 8]; 32] = std::array::from_fn(|l| {
            let (g, t) = (l / 4, 2 * (l % 4));
            let at = |r: usize, c: usize| bf16::from_f32((r * 16 + c) as f32);
            [at(g, t), at(g, t + 1), at(g + 8, t), at(g + 8, t + 1), at(g, t + 8), at(g, t + 9), at(g + 8, t + 8), at(g + 8, t + 9)]
        });
        let b: [[bf16; 4]; 32] = std::array::from_fn(|l| {
            let (g, t) = (l / 4, 2 * (l % 4));
            let at = |k: usize, n: usize| bf16::from_f32((k == n) as u8 as f32);
            [at(t, g), at(t + 1, g), at(t + 8, g), at(t + 9, g)]
        });
        for lane in 0..32u32 {
            let d = mma_m16n8k16_warp(&a, &b, [0.5; 4], lane);
            let (g, t) = ((lane / 4) as f32, (2 * (lane % 4)) as f32);
            assert_eq!(d, [g * 16.0 + t + 0.5, g * 16.0 + t + 1.5, (g + 8.0) * 16.0 + t + 0.5, (g + 8.0) * 16.0 + t + 1.5]);
        }
    }

    #[test]
    fn ldmatrix_lanes_get_pairs_of_their_rows() {
        // Matrix j's row r starts at 100 * j + 10 * r; element (r, c) is that plus c.
        let rows: [usize; 32] = std::array::from_fn(|l| 100 * (l / 8) + 10 * (l % 8));
        let d: [usize; 8] = ldmatrix_lane::<usize, 4, 8>(&rows, 5, false, |k| k);
        // Lane 5: row 1, columns 2 and 3 of each matrix.
        assert_eq!(d, [12, 13, 112, 113, 212, 213, 312, 313]);
        let t: [usize; 2] = ldmatrix_lane::<usize, 1, 2>(&rows, 5, true, |k| k);
        // Transposed: element (1, 2) and (1, 3) are stored rows 2 and 3, column 1.
        assert_eq!(t, [21, 31]);
    }
}
