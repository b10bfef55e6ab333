//! Hopper's data movement and warpgroup tensor cores in the kernel language (docs/kernel-language.md,
//! "Hopper: TMA, mbarriers and wgmma"): transaction barriers in shared memory (`mbarrier_*`), the
//! tensor memory accelerator's tile copies (`tma_load_2d`) and the warpgroup multiply-accumulates
//! (`wgmma_m64nNk16`). Each is translated to the PTX instructions of `cuprum/hopper.h`; what they
//! compute is defined here, once, for the prelude's host definitions and the CPU device
//! (`cpu::hopper`).
//!
//! **Layout.** Copies and multiplies share the 128-byte swizzle: a tile of rows of 64 16-bit
//! elements whose 16-byte chunk `c` of row `r` lies at chunk `c ^ (r % 8)` ([`swizzled`]), which a
//! `TensorMap` with a box 64 elements wide and `Swizzle::B128` writes. Tiles start at multiples
//! of 4096 elements of their shared array. `wgmma_m64nNk16(acc, a, ai, b, bi)` adds to the
//! warpgroup's 64 x N tile
//!
//! - A (64 x 16, K-major): rows `0..64`, columns `ai % 4096 .. + 16` of the tile at
//!   `ai - ai % 4096` (`ai % 4096` is 0, 16, 32 or 48);
//! - B (16 x N, N-major): `N / 64` consecutive tiles of 64 rows (k) from `bi - bi % 4096`, rows
//!   `(bi % 4096) / 64 .. + 16` of each (`bi % 4096` is 0, 1024, 2048 or 3072).
//!
//! Thread `t` of the warpgroup (warp `q = t / 32`, lane `l`) holds `acc[4j + 2h + e]` = element
//! (`16q + l / 4 + 8h`, `8j + 2(l % 4) + e`) of the 64 x N tile.
//!
//! **FP8** (`wgmma_m64nNk32`, operands `f8e4m3` or `f8e5m2`): both operands are K-major (the FP8
//! instruction reads neither transposed), in tiles of 64 rows of 128 one-byte elements (the same
//! 128-byte swizzle, [`swizzled_fp8`]; [`TILE_FP8`] = 8192 elements):
//!
//! - A (64 x 32): rows `0..64`, columns `ai % 8192 .. + 32` of the tile at `ai - ai % 8192`
//!   (`ai % 8192` is 0, 32, 64 or 96);
//! - B (32 x N) stored transposed, as B^T (N x K): rows `0..N` of the `N / 64` consecutive tiles
//!   from `bi - bi % 8192`, columns (k) `bi % 8192 .. + 32` (`bi % 8192` is 0, 32, 64 or 96).
//!
//! A TensorMap of 8-bit floats with a box 128 elements wide and `Swizzle::B128` writes such
//! tiles. The accumulator layout is the 16-bit form's.
//!
//! **Barriers** are `u64` elements of shared memory: an expected arrival count, the arrivals still
//! pending, the transaction bytes still pending, and the phase ([`Barrier`]). A phase completes
//! when its arrivals and bytes are all in; `mbarrier_wait(bars, i, parity)` returns once the phase
//! of that parity has completed (on a fresh barrier, parity 1 counts as completed).
//!
//! The host definitions of the prelude model one thread: barriers count, a wait returns, a
//! `tma_load_2d` completes its bytes without data (the host sees no device memory; kernels with
//! copies run on the CPU device, `cpu::hopper`), and `wgmma_*` computes thread 0's part.

use super::intrinsics::KernelIndex;
use super::tensor::MmaHalf;
use super::traits::Scalar;
use crate::scalar::fp8::{f8e4m3, f8e5m2};
use crate::TensorMap;

/// Elements of one 128-byte-swizzled tile of 64 rows: the alignment of the wgmma operands.
pub const TILE: usize = 4096;

/// The index of element (`r`, `c`) (`c < 64`) of the 128-byte-swizzled tile at `tile`.
#[inline]
pub fn swizzled(tile: usize, r: usize, c: usize) -> usize {
    tile + r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8
}

/// Elements of one 128-byte-swizzled tile of 64 rows of 8-bit floats (8 KiB, as [`TILE`]).
pub const TILE_FP8: usize = 8192;

/// The index of element (`r`, `c`) (`c < 128`) of the 128-byte-swizzled tile of one-byte
/// elements at `tile` (rows past 63 continue into the next tiles).
#[inline]
pub fn swizzled_fp8(tile: usize, r: usize, c: usize) -> usize {
    tile + r * 128 + (((c / 16) ^ (r % 8)) * 16) + c % 16
}

/// The operand types of `wgmma_m64nNk32`: `f8e4m3` and `f8e5m2`.
pub trait MmaFp8: Scalar + Copy {
    /// The value, exactly.
    fn to_f64_exact(self) -> f64;
}
impl MmaFp8 for f8e4m3 {
    fn to_f64_exact(self) -> f64 {
        self.to_f64()
    }
}
impl MmaFp8 for f8e5m2 {
    fn to_f64_exact(self) -> f64 {
        self.to_f64()
    }
}

/// The state of a barrier, as its `u64` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Barrier {
    /// Arrivals per phase.
    pub count: u32,
    /// Arrivals the current phase still waits for.
    pub pending: u32,
    /// Transaction bytes the current phase still waits for (negative when copies completed
    /// before their bytes were announced, as the hardware allows).
    pub tx: i32,
    /// The current phase's parity.
    pub phase: u32,
}

impl Barrier {
    /// `count` arrivals per phase, phase 0.
    pub fn new(count: u32) -> Barrier {
        Barrier { count, pending: count, tx: 0, phase: 0 }
    }

    /// The state a barrier's `u64` holds.
    pub fn from_bits(b: u64) -> Barrier {
        let tx = ((b >> 32) & 0x7fff_ffff) as u32;
        Barrier { count: (b & 0xffff) as u32, pending: ((b >> 16) & 0xffff) as u32, tx: ((tx << 1) as i32) >> 1, phase: (b >> 63) as u32 }
    }

    /// The `u64` that holds the state.
    pub fn bits(self) -> u64 {
        (self.count as u64 & 0xffff) | ((self.pending as u64 & 0xffff) << 16) | (((self.tx as u32 & 0x7fff_ffff) as u64) << 32) | ((self.phase as u64 & 1) << 63)
    }

    /// One arrival announcing `bytes` more, then the phase's completion if everything is in.
    pub fn arrive(mut self, bytes: u32) -> Barrier {
        self.pending = self.pending.saturating_sub(1);
        self.tx += bytes as i32;
        self.complete()
    }

    /// `bytes` of the phase's transactions completed.
    pub fn complete_tx(mut self, bytes: u32) -> Barrier {
        self.tx -= bytes as i32;
        self.complete()
    }

    fn complete(mut self) -> Barrier {
        if self.pending == 0 && self.tx == 0 {
            self.phase ^= 1;
            self.pending = self.count;
        }
        self
    }

    /// Whether the phase of parity `parity` has completed.
    pub fn done(self, parity: u32) -> bool {
        self.phase != parity & 1
    }
}

/// Where the operands of a `wgmma_m64nNk16` lie: `(A's tile, A's first column, B's first tile, B's
/// first row)`, or the index that is wrong (`Err((is_b, misaligned))`).
pub fn wgmma_operands(ai: usize, a_len: usize, bi: usize, b_len: usize, n: usize) -> Result<(usize, usize, usize, usize), (bool, bool)> {
    let (ta, ka, tb, kb) = (ai - ai % TILE, ai % TILE, bi - bi % TILE, bi % TILE);
    if ka % 16 != 0 || ka >= 64 {
        return Err((false, true));
    }
    if ta >= a_len || TILE > a_len - ta {
        return Err((false, false));
    }
    if kb % 1024 != 0 {
        return Err((true, true));
    }
    if tb >= b_len || n * 64 > b_len - tb {
        return Err((true, false));
    }
    Ok((ta, ka, tb, kb / 64))
}

/// Thread `t`'s part of `acc += A * B` (module docs) for operands read by `a(index)` and
/// `b(index)` of their shared arrays, at `(ta, ka, tb, kb)` from [`wgmma_operands`]. Products
/// are exact and summed in f64, added to the accumulator and rounded to f32 once.
pub fn wgmma_thread<T: MmaHalf>(acc: &mut [f32], t: u32, n: usize, at: (usize, usize, usize, usize), a: impl Fn(usize) -> T, b: impl Fn(usize) -> T) {
    let (ta, ka, tb, kb) = at;
    let (q, l) = ((t % 128 / 32) as usize, (t % 32) as usize);
    for j in 0..n / 8 {
        for h in 0..2 {
            for e in 0..2 {
                let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                let btile = tb + (col / 64) * TILE;
                let s: f64 = (0..16)
                    .map(|k| a(swizzled(ta, row, ka + k)).to_f64_exact() * b(swizzled(btile, kb + k, col % 64)).to_f64_exact())
                    .sum();
                let slot = &mut acc[4 * j + 2 * h + e];
                *slot = (*slot as f64 + s) as f32;
            }
        }
    }
}

/// Thread `t`'s part of `acc += A * B` for a 64 x N x 16 product whose elements are
/// `a(row, k)` and `b(k, col)`: summed in f64 (the products of 16-bit floats are exact), added to
/// the accumulator and rounded to f32 once.
fn wgmma_part(acc: &mut [f32], t: u32, n: usize, a: impl Fn(usize, usize) -> f64, b: impl Fn(usize, usize) -> f64) {
    let (q, l) = ((t % 128 / 32) as usize, (t % 32) as usize);
    for j in 0..n / 8 {
        for h in 0..2 {
            for e in 0..2 {
                let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                let s: f64 = (0..16).map(|k| a(row, k) * b(k, col)).sum();
                let slot = &mut acc[4 * j + 2 * h + e];
                *slot = (*slot as f64 + s) as f32;
            }
        }
    }
}

/// Where the operands of a `wgmma_m64nNk16_bt` lie: `(A's tile, A's first column, B's first
/// tile, B's first column)`, or the index that is wrong (`Err((is_b, misaligned))`). B is stored
/// transposed (N x K): rows `0..N` of the `N / 64` tiles from `bi - bi % 4096`, columns
/// `bi % 4096 .. + 16` (0, 16, 32 or 48).
pub fn wgmma_bt_operands(ai: usize, a_len: usize, bi: usize, b_len: usize, n: usize) -> Result<(usize, usize, usize, usize), (bool, bool)> {
    let (ta, ka, tb, kb) = (ai - ai % TILE, ai % TILE, bi - bi % TILE, bi % TILE);
    if ka % 16 != 0 || ka >= 64 {
        return Err((false, true));
    }
    if ta >= a_len || TILE > a_len - ta {
        return Err((false, false));
    }
    if kb % 16 != 0 || kb >= 64 {
        return Err((true, true));
    }
    if tb >= b_len || n * 64 > b_len - tb {
        return Err((true, false));
    }
    Ok((ta, ka, tb, kb))
}

/// Thread `t`'s part of `acc += A * B` with B stored transposed (`wgmma_m64nNk16_bt`), at
/// `(ta, ka, tb, kb)` from [`wgmma_bt_operands`]: B's element (k, n) is element (n, kb + k) of the
/// tiles from `tb` (row n of 64-row tiles one after the other).
pub fn wgmma_bt_thread<T: MmaHalf>(acc: &mut [f32], t: u32, n: usize, at: (usize, usize, usize, usize), a: impl Fn(usize) -> T, b: impl Fn(usize) -> T) {
    let (ta, ka, tb, kb) = at;
    wgmma_part(acc, t, n, |r, k| a(swizzled(ta, r, ka + k)).to_f64_exact(), |k, c| b(swizzled(tb, c, kb + k)).to_f64_exact());
}

/// Where B of a `wgmma_m64nNk16_rs` lies (as `wgmma_m64nNk16`'s B): `(B's first tile, B's first
/// row)`, or whether the index is misaligned (`Err(true)`) or out of range (`Err(false)`).
pub fn wgmma_rs_operand(bi: usize, b_len: usize, n: usize) -> Result<(usize, usize), bool> {
    let (tb, kb) = (bi - bi % TILE, bi % TILE);
    if kb % 1024 != 0 {
        return Err(true);
    }
    if tb >= b_len || n * 64 > b_len - tb {
        return Err(false);
    }
    Ok((tb, kb / 64))
}

/// The element (row `r`, column `k`) of a warp's 16 x 16 A tile held as the fragments `frags`
/// (lane by lane, mma.m16n8k16's A layout: lane `4 (r % 8) + (k % 8) / 2`, its element
/// `4 (k / 8) + 2 (r / 8) + k % 2`).
pub fn a_fragment_element<T: Copy>(frags: &[[T; 8]; 32], r: usize, k: usize) -> T {
    frags[4 * (r % 8) + (k % 8) / 2][4 * (k / 8) + 2 * (r / 8) + k % 2]
}

/// Thread `t`'s part of `acc += A * B` with A from registers (`wgmma_m64nNk16_rs`): `frags` are
/// the fragments of the 32 lanes of `t`'s warp (rows `16q .. 16q + 16` of A), B at `(tb, kb)` from
/// [`wgmma_rs_operand`].
pub fn wgmma_rs_thread<T: MmaHalf>(acc: &mut [f32], t: u32, n: usize, frags: &[[T; 8]; 32], at: (usize, usize), b: impl Fn(usize) -> T) {
    let (tb, kb) = at;
    wgmma_part(acc, t, n, |r, k| a_fragment_element(frags, r % 16, k).to_f64_exact(), |k, c| b(swizzled(tb + (c / 64) * TILE, kb + k, c % 64)).to_f64_exact());
}

/// Where the operands of a `wgmma_m64nNk32` lie: `(A's tile, A's first column, B's first tile,
/// B's first column)`, or the index that is wrong (`Err((is_b, misaligned))`).
pub fn wgmma_fp8_operands(ai: usize, a_len: usize, bi: usize, b_len: usize, n: usize) -> Result<(usize, usize, usize, usize), (bool, bool)> {
    let (ta, ka, tb, kb) = (ai - ai % TILE_FP8, ai % TILE_FP8, bi - bi % TILE_FP8, bi % TILE_FP8);
    if ka % 32 != 0 || ka >= 128 {
        return Err((false, true));
    }
    if ta >= a_len || TILE_FP8 > a_len - ta {
        return Err((false, false));
    }
    if kb % 32 != 0 || kb >= 128 {
        return Err((true, true));
    }
    if tb >= b_len || n * 128 > b_len - tb {
        return Err((true, false));
    }
    Ok((ta, ka, tb, kb))
}

/// Thread `t`'s part of `acc += A * B` for FP8 operands (module docs) read by `a(index)` and
/// `b(index)`, at `(ta, ka, tb, kb)` from [`wgmma_fp8_operands`]. Products are exact and summed
/// in f64, added to the accumulator and rounded to f32 once. (The GPU's FP8 accumulation keeps
/// fewer bits than f32 when a sum's terms differ much in magnitude: a kernel's result can differ
/// from this in the low bits, where the sums are not exact.)
pub fn wgmma_fp8_thread<T: MmaFp8>(acc: &mut [f32], t: u32, n: usize, at: (usize, usize, usize, usize), a: impl Fn(usize) -> T, b: impl Fn(usize) -> T) {
    let (ta, ka, tb, kb) = at;
    let (q, l) = ((t % 128 / 32) as usize, (t % 32) as usize);
    for j in 0..n / 8 {
        for h in 0..2 {
            for e in 0..2 {
                let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                let s: f64 = (0..32)
                    .map(|k| a(swizzled_fp8(ta, row, ka + k)).to_f64_exact() * b(swizzled_fp8(tb, col, kb + k)).to_f64_exact())
                    .sum();
                let slot = &mut acc[4 * j + 2 * h + e];
                *slot = (*slot as f64 + s) as f32;
            }
        }
    }
}

/// Initialises barrier `i` of `bars` for `count` arrivals per phase: PTX `mbarrier.init` (sm_90).
pub fn mbarrier_init<I: KernelIndex>(bars: &mut [u64], i: I, count: u32) {
    bars[i.to_usize()] = Barrier::new(count).bits();
}

/// One arrival on barrier `i`: PTX `mbarrier.arrive` (sm_90).
pub fn mbarrier_arrive<I: KernelIndex>(bars: &mut [u64], i: I) {
    let k = i.to_usize();
    bars[k] = Barrier::from_bits(bars[k]).arrive(0).bits();
}

/// One arrival on barrier `i` announcing `bytes` of copies that complete on it: PTX
/// `mbarrier.arrive.expect_tx` (sm_90).
pub fn mbarrier_arrive_expect_tx<I: KernelIndex>(bars: &mut [u64], i: I, bytes: u32) {
    let k = i.to_usize();
    bars[k] = Barrier::from_bits(bars[k]).arrive(bytes).bits();
}

/// Waits until the phase of parity `parity` of barrier `i` has completed: PTX
/// `mbarrier.try_wait.parity` in a loop (sm_90). Host: returns (one thread waits for no one).
pub fn mbarrier_wait<I: KernelIndex>(bars: &mut [u64], i: I, parity: u32) {
    let _ = (bars[i.to_usize()], parity);
}

/// Copies the box of `map` at element coordinates (`x` along a row, `y` down the rows) to
/// `dst[di..]` (laid out as the map's swizzle says), completing its bytes on barrier `bi`:
/// PTX `cp.async.bulk.tensor.2d` (sm_90). Elements of the box outside the array are zeros.
/// Host: completes the bytes only (module docs).
pub fn tma_load_2d<T: Scalar, I: KernelIndex, J: KernelIndex>(dst: &mut [T], di: I, map: &TensorMap<'_, T>, x: i32, y: i32, bars: &mut [u64], bi: J) {
    let _ = (dst.len(), di.to_usize(), x, y);
    let k = bi.to_usize();
    bars[k] = Barrier::from_bits(bars[k]).complete_tx(map.box_bytes() as u32).bits();
}

/// Orders the warpgroup's register accesses before its next multiplies: PTX `wgmma.fence`
/// (sm_90a). Host: nothing.
pub fn wgmma_fence() {}

/// Closes the group of multiplies started since the last one: PTX `wgmma.commit_group`
/// (sm_90a). Host: nothing.
pub fn wgmma_commit() {}

/// Waits until at most `PENDING` committed groups are in flight (0 to 7); `acc` may be read
/// after it: PTX `wgmma.wait_group` (sm_90a). Host: nothing (the multiplies are done).
pub fn wgmma_wait<const PENDING: u32>(acc: &mut [f32]) {
    let _ = acc;
}

/// Raises the warpgroup's registers per thread to `REGS` (24 to 256, a multiple of 8): PTX
/// `setmaxnreg.inc` (sm_90a). Host: nothing.
pub fn warpgroup_reg_alloc<const REGS: u32>() {}

/// Lowers the warpgroup's registers per thread to `REGS`, for the others to take: PTX
/// `setmaxnreg.dec` (sm_90a). Host: nothing.
pub fn warpgroup_reg_dealloc<const REGS: u32>() {}

macro_rules! wgmma_fns {
    ($($name:ident, $n:literal, $r:literal;)*) => {$(
        #[doc = concat!("`acc += A * B` on the warpgroup's 64 x ", stringify!($n), " tile, A and B (`f16` or `bf16`) from shared memory \
            (module docs): PTX `wgmma.mma_async.m64n", stringify!($n), "k16` (sm_90a), asynchronous until `wgmma_wait`. \
            An index out of its array or not on a tile's row or column is reported as an index violation and the \
            operands of the arrays' first tiles are used. Host: thread 0's part, at once.")]
        pub fn $name<T: MmaHalf, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            let at = wgmma_operands(ai.to_usize(), a.len(), bi.to_usize(), b.len(), $n).unwrap_or((0, 0, 0, 0));
            wgmma_thread(acc, 0, $n, at, |k| a[k], |k| b[k]);
        }
    )*};
}

wgmma_fns! {
    wgmma_m64n64k16, 64, 32;
    wgmma_m64n128k16, 128, 64;
    wgmma_m64n256k16, 256, 128;
}

macro_rules! wgmma_unchecked_fns {
    ($($name:ident, $checked:ident, $r:literal;)*) => {$(
        #[doc = concat!("[`", stringify!($checked), "`] without its checks of the operands (a few integer operations and a select \
            before each multiply, which cost in a GEMM's inner loop: docs/kernel-language.md). Host: checked all the same.")]
        ///
        /// # Safety
        ///
        /// On a GPU the operands are not checked: `ai % 4096` is 0, 16, 32 or 48 and the 4096 elements of A's tile
        /// from `ai - ai % 4096` lie in `a`; `bi % 4096` is 0, 1024, 2048 or 3072 and the `N * 64` elements of B's
        /// tiles from `bi - bi % 4096` lie in `b`; both arrays start 1024-byte aligned in shared memory.
        pub unsafe fn $name<T: MmaHalf, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            $checked(acc, a, ai, b, bi)
        }
    )*};
}

wgmma_unchecked_fns! {
    wgmma_m64n64k16_unchecked, wgmma_m64n64k16, 32;
    wgmma_m64n128k16_unchecked, wgmma_m64n128k16, 64;
    wgmma_m64n256k16_unchecked, wgmma_m64n256k16, 128;
}

/// Waits until `threads` threads of the block (a multiple of 32, whole warps) have arrived at
/// barrier `id` (1 to 15; 0 is the one `sync_threads` uses): PTX `bar.sync id, threads`. Two
/// groups of threads can so synchronise apart, as FlashAttention-3's consumer warpgroups do.
/// Host: returns (one thread waits for no one).
pub fn named_barrier_sync(id: u32, threads: u32) {
    let _ = (id, threads);
}

/// Arrives at barrier `id` without waiting, counting towards the `threads` that a
/// `named_barrier_sync(id, threads)` waits for: PTX `bar.arrive id, threads`. Host: nothing.
pub fn named_barrier_arrive(id: u32, threads: u32) {
    let _ = (id, threads);
}

macro_rules! wgmma_bt_fns {
    ($($name:ident, $unchecked:ident, $n:literal, $r:literal;)*) => {$(
        #[doc = concat!("`acc += A * B` on the warpgroup's 64 x ", stringify!($n), " tile, A (64 x 16, K-major) and B stored transposed \
            (", stringify!($n), " x 16, K-major as A: e.g. the keys of `Q K^T`) from shared memory, `f16` or `bf16` (module docs, \
            `wgmma_m64nNk16_bt`): PTX `wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.bf16.bf16 d, a-desc, b-desc, p, 1, 1, 0, 0` \
            (imm-trans-b 0; sm_90a), asynchronous until `wgmma_wait`. An index out of its array or off a tile's column 0, 16, 32 or 48 \
            is reported as an index violation and the arrays' first tiles are used. Host: thread 0's part, at once.")]
        pub fn $name<T: MmaHalf, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            let at = wgmma_bt_operands(ai.to_usize(), a.len(), bi.to_usize(), b.len(), $n).unwrap_or((0, 0, 0, 0));
            wgmma_bt_thread(acc, 0, $n, at, |k| a[k], |k| b[k]);
        }

        #[doc = concat!("[`", stringify!($name), "`] without its checks of the operands. Host: checked all the same.")]
        ///
        /// # Safety
        ///
        /// On a GPU the operands are not checked: `ai % 4096` and `bi % 4096` are 0, 16, 32 or 48, the 4096 elements of
        /// A's tile from `ai - ai % 4096` lie in `a`, the `N * 64` elements of B's tiles from `bi - bi % 4096` lie in
        /// `b`, and both arrays start 1024-byte aligned in shared memory.
        pub unsafe fn $unchecked<T: MmaHalf, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            $name(acc, a, ai, b, bi)
        }
    )*};
}

wgmma_bt_fns! {
    wgmma_m64n64k16_bt, wgmma_m64n64k16_bt_unchecked, 64, 32;
    wgmma_m64n128k16_bt, wgmma_m64n128k16_bt_unchecked, 128, 64;
    wgmma_m64n256k16_bt, wgmma_m64n256k16_bt_unchecked, 256, 128;
}

macro_rules! wgmma_rs_fns {
    ($($name:ident, $unchecked:ident, $n:literal, $r:literal;)*) => {$(
        #[doc = concat!("`acc += A * B` on the warpgroup's 64 x ", stringify!($n), " tile with A (64 x 16) from registers and B \
            (16 x ", stringify!($n), ", N-major, as `wgmma_m64nNk16`'s) from shared memory, `f16` or `bf16`: each thread passes its \
            fragment `a` of its warp's 16 rows in mma.m16n8k16's A layout (`a[0], a[1]`: row `l / 4`, columns `2 (l % 4)` and the \
            next; `a[2], a[3]`: row `l / 4 + 8`; `a[4..8]`: the same 8 columns on), which is the accumulator layout: elements \
            `8 kk .. 8 kk + 8` of a 64 x M accumulator are the fragment of its columns `16 kk .. 16 kk + 16` (FlashAttention's P \
            feeding P V without leaving registers). PTX `wgmma.mma_async.sync.aligned.m64n", stringify!($n), "k16.f32.bf16.bf16 \
            d, {a0, a1, a2, a3}, b-desc, p, 1, 1, 1` (sm_90a), asynchronous until `wgmma_wait`. B's index is checked as \
            `wgmma_m64nNk16`'s. Host: thread 0's part, every lane holding `a`.")]
        pub fn $name<T: MmaHalf, J: KernelIndex>(acc: &mut [f32; $r], a: [T; 8], b: &[T], bi: J) {
            let at = wgmma_rs_operand(bi.to_usize(), b.len(), $n).unwrap_or((0, 0));
            wgmma_rs_thread(acc, 0, $n, &[a; 32], at, |k| b[k]);
        }

        #[doc = concat!("[`", stringify!($name), "`] without the check of B. Host: checked all the same.")]
        ///
        /// # Safety
        ///
        /// On a GPU B is not checked: `bi % 4096` is 0, 1024, 2048 or 3072, the `N * 64` elements of B's tiles from
        /// `bi - bi % 4096` lie in `b`, and `b` starts 1024-byte aligned in shared memory.
        pub unsafe fn $unchecked<T: MmaHalf, J: KernelIndex>(acc: &mut [f32; $r], a: [T; 8], b: &[T], bi: J) {
            $name(acc, a, b, bi)
        }
    )*};
}

wgmma_rs_fns! {
    wgmma_m64n64k16_rs, wgmma_m64n64k16_rs_unchecked, 64, 32;
    wgmma_m64n128k16_rs, wgmma_m64n128k16_rs_unchecked, 128, 64;
    wgmma_m64n256k16_rs, wgmma_m64n256k16_rs_unchecked, 256, 128;
}

macro_rules! wgmma_fp8_fns {
    ($($name:ident, $n:literal, $r:literal;)*) => {$(
        #[doc = concat!("`acc += A * B` on the warpgroup's 64 x ", stringify!($n), " tile from 8-bit float operands (`f8e4m3` or \
            `f8e5m2`) in shared memory, A (64 x 32) and B stored transposed (", stringify!($n), " x 32), both K-major \
            (module docs): PTX `wgmma.mma_async.m64n", stringify!($n), "k32.f32.e4m3.e4m3` (or `.e5m2`; sm_90a), \
            asynchronous until `wgmma_wait`. An index out of its array or not on a tile's column 0, 32, 64 or 96 is \
            reported as an index violation and the operands of the arrays' first tiles are used. Host: thread 0's part, at once.")]
        pub fn $name<T: MmaFp8, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            let at = wgmma_fp8_operands(ai.to_usize(), a.len(), bi.to_usize(), b.len(), $n).unwrap_or((0, 0, 0, 0));
            wgmma_fp8_thread(acc, 0, $n, at, |k| a[k], |k| b[k]);
        }
    )*};
}

wgmma_fp8_fns! {
    wgmma_m64n64k32, 64, 32;
    wgmma_m64n128k32, 128, 64;
    wgmma_m64n256k32, 256, 128;
}

macro_rules! wgmma_fp8_unchecked_fns {
    ($($name:ident, $checked:ident, $r:literal;)*) => {$(
        #[doc = concat!("[`", stringify!($checked), "`] without its checks of the operands. Host: checked all the same.")]
        ///
        /// # Safety
        ///
        /// On a GPU the operands are not checked: `ai % 8192` is 0, 32, 64 or 96 and the 8192 elements of A's tile
        /// from `ai - ai % 8192` lie in `a`; `bi % 8192` is 0, 32, 64 or 96 and the `N * 128` elements of B's
        /// tiles from `bi - bi % 8192` lie in `b`; both arrays start 1024-byte aligned in shared memory.
        pub unsafe fn $name<T: MmaFp8, I: KernelIndex, J: KernelIndex>(acc: &mut [f32; $r], a: &[T], ai: I, b: &[T], bi: J) {
            $checked(acc, a, ai, b, bi)
        }
    )*};
}

wgmma_fp8_unchecked_fns! {
    wgmma_m64n64k32_unchecked, wgmma_m64n64k32, 32;
    wgmma_m64n128k32_unchecked, wgmma_m64n128k32, 64;
    wgmma_m64n256k32_unchecked, wgmma_m64n256k32, 128;
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    #[test]
    fn a_barrier_completes_its_phase_when_arrivals_and_bytes_are_in() {
        let b = Barrier::new(2);
        assert!(b.done(1) && !b.done(0));
        let b = b.arrive(64);
        assert!(!b.done(0));
        let b = b.complete_tx(64);
        assert!(!b.done(0), "one arrival still pending");
        let b = b.arrive(0);
        assert!(b.done(0) && !b.done(1) && b.pending == 2);
        // Bytes before their announcement (a copy that lands first).
        let b = b.complete_tx(16).arrive(16).arrive(0);
        assert!(b.done(1));
        assert_eq!(Barrier::from_bits(b.bits()), b);
        let neg = Barrier { count: 3, pending: 1, tx: -5, phase: 1 };
        assert_eq!(Barrier::from_bits(neg.bits()), neg);
    }

    #[test]
    fn the_swizzle_permutes_chunks_within_a_row() {
        for r in 0..16 {
            let mut seen: Vec<usize> = (0..64).map(|c| swizzled(0, r, c)).collect();
            seen.sort();
            assert_eq!(seen, (r * 64..r * 64 + 64).collect::<Vec<_>>());
        }
        assert_eq!(swizzled(0, 1, 0), 64 + 8);
        // Chunk 7 of row 7 lands at chunk 7 ^ 7 = 0.
        assert_eq!(swizzled(4096, 7, 63), 4096 + 7 * 64 + 7);
    }

    #[test]
    fn wgmma_of_a_thread_is_its_part_of_the_product() {
        // A: 64 x 64 tile with A[r][c] = r + c (small integers, exact in bf16); B: one 64 x 64
        // tile with B[k][n] = k - n.
        let mut a = vec![bf16::ZERO; TILE];
        let mut b = vec![bf16::ZERO; TILE];
        for r in 0..64 {
            for c in 0..64 {
                a[swizzled(0, r, c)] = bf16::from_f32((r + c) as f32 / 8.0);
                b[swizzled(0, r, c)] = bf16::from_f32((r as f32 - c as f32) / 8.0);
            }
        }
        for t in [0u32, 5, 37, 127] {
            let mut acc = [1.0f32; 32];
            let at = wgmma_operands(16, a.len(), 1024, b.len(), 64).unwrap();
            wgmma_thread(&mut acc, t, 64, at, |k| a[k], |k| b[k]);
            let (q, l) = ((t / 32) as usize, (t % 32) as usize);
            for j in 0..8 {
                for h in 0..2 {
                    for e in 0..2 {
                        let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                        let want: f64 = 1.0 + (0..16).map(|k| ((row + 16 + k) as f64 / 8.0) * ((16 + k) as f64 - col as f64) / 8.0).sum::<f64>();
                        assert_eq!(acc[4 * j + 2 * h + e] as f64, want, "thread {t} element ({row}, {col})");
                    }
                }
            }
        }
        assert_eq!(wgmma_operands(8, TILE, 0, TILE, 64), Err((false, true)));
        assert_eq!(wgmma_operands(0, TILE, 512, TILE, 64), Err((true, true)));
        assert_eq!(wgmma_operands(0, TILE, 0, TILE, 128), Err((true, false)));
        assert_eq!(wgmma_operands(TILE, TILE, 0, TILE, 64), Err((false, false)));
    }

    #[test]
    fn wgmma_bt_of_a_thread_is_its_part_of_the_product_with_b_transposed() {
        // A: 64 x 64 with A[r][c] = (r + c) / 8; B^T: 128 rows (n) x 64 columns (k) in two tiles,
        // B^T[n][k] = ((3n + 64 - k) % 17) / 16 - 1/2 (exact in bf16). A k-step at column 32 of both.
        let mut a = vec![bf16::ZERO; TILE];
        let mut b = vec![bf16::ZERO; 2 * TILE];
        let av = |r: usize, c: usize| (r + c) as f64 / 8.0;
        let bv = |n: usize, k: usize| ((3 * n + 64 - k) % 17) as f64 / 16.0 - 0.5;
        for r in 0..64 {
            for c in 0..64 {
                a[swizzled(0, r, c)] = bf16::from_f64(av(r, c));
            }
        }
        for n in 0..128 {
            for k in 0..64 {
                b[swizzled(0, n, k)] = bf16::from_f64(bv(n, k));
            }
        }
        assert_eq!(b[swizzled(0, 100, 7)].to_f64(), bv(100, 7), "the values are exact");
        for t in [0u32, 5, 37, 127] {
            let mut acc = [0.25f32; 64];
            let at = wgmma_bt_operands(32, a.len(), 32, b.len(), 128).unwrap();
            wgmma_bt_thread(&mut acc, t, 128, at, |k| a[k], |k| b[k]);
            let (q, l) = ((t / 32) as usize, (t % 32) as usize);
            for j in 0..16 {
                for h in 0..2 {
                    for e in 0..2 {
                        let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                        let want: f64 = 0.25 + (0..16).map(|k| av(row, 32 + k) * bv(col, 32 + k)).sum::<f64>();
                        assert_eq!(acc[4 * j + 2 * h + e] as f64, want, "thread {t} element ({row}, {col})");
                    }
                }
            }
        }
        // The host definition is thread 0's part.
        let mut acc = [0.0f32; 32];
        wgmma_m64n64k16_bt(&mut acc, &a, 16u32, &b, 48u32);
        assert_eq!(acc[1] as f64, (0..16).map(|k| av(0, 16 + k) * bv(1, 48 + k)).sum::<f64>());
        assert_eq!(wgmma_bt_operands(0, TILE, 8, 2 * TILE, 64), Err((true, true)));
        assert_eq!(wgmma_bt_operands(0, TILE, 1024, 2 * TILE, 64), Err((true, true)), "B's columns, not its rows");
        assert_eq!(wgmma_bt_operands(0, TILE, TILE + 16, 2 * TILE, 128), Err((true, false)));
        assert_eq!(wgmma_bt_operands(4, TILE, 0, 2 * TILE, 64), Err((false, true)));
    }

    /// Thread `t`'s accumulator element `i` of a 64 x N tile: its (row, column).
    fn acc_element(t: usize, i: usize) -> (usize, usize) {
        let (q, l, j, h, e) = (t / 32, t % 32, i / 4, (i / 2) % 2, i % 2);
        (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e)
    }

    #[test]
    fn an_accumulators_eight_elements_per_k_step_are_the_a_fragment_of_those_columns() {
        // S (64 x 32) as accumulators: the fragment of k-step kk of warp q is each lane's
        // S[8 kk .. 8 kk + 8], and names the elements of S's columns 16 kk .. + 16.
        let sv = |r: usize, c: usize| (r * 32 + c) as f32;
        for q in 0..4 {
            for kk in 0..2 {
                let frags: [[f32; 8]; 32] = std::array::from_fn(|l| {
                    std::array::from_fn(|x| {
                        let (r, c) = acc_element(32 * q + l, 8 * kk + x);
                        sv(r, c)
                    })
                });
                for r in 0..16 {
                    for k in 0..16 {
                        assert_eq!(a_fragment_element(&frags, r, k), sv(16 * q + r, 16 * kk + k), "warp {q} k-step {kk} ({r}, {k})");
                    }
                }
            }
        }
    }

    #[test]
    fn wgmma_rs_of_a_thread_is_its_part_of_the_product_with_a_from_registers() {
        // A (64 x 16) in registers: A[r][k] = (r - 2k) / 8; B: 16 x 128, N-major, two tiles of 64
        // k-rows x 64 columns, rows 48 .. 64 used; B[k][n] = (k + n % 13) / 4.
        let av = |r: usize, k: usize| (r as f64 - 2.0 * k as f64) / 8.0;
        let bv = |k: usize, n: usize| (k + n % 13) as f64 / 4.0;
        let mut b = vec![bf16::ZERO; 2 * TILE];
        for k in 0..64 {
            for n in 0..128 {
                b[swizzled((n / 64) * TILE, k, n % 64)] = bf16::from_f64(bv(k, n));
            }
        }
        for t in [0u32, 9, 44, 70, 127] {
            let q = (t / 32) as usize;
            // The warp's fragments, lane by lane, from A's rows 16q .. 16q + 16.
            let frags: [[bf16; 8]; 32] = std::array::from_fn(|l| {
                let (g, c) = (l / 4, 2 * (l % 4));
                [(g, c), (g, c + 1), (g + 8, c), (g + 8, c + 1), (g, c + 8), (g, c + 9), (g + 8, c + 8), (g + 8, c + 9)]
                    .map(|(r, k)| bf16::from_f64(av(16 * q + r, k)))
            });
            let mut acc = [-1.0f32; 64];
            let at = wgmma_rs_operand(3072, b.len(), 128).unwrap();
            wgmma_rs_thread(&mut acc, t, 128, &frags, at, |k| b[k]);
            for (i, got) in acc.iter().enumerate() {
                let (row, col) = acc_element(t as usize, i);
                let want: f64 = -1.0 + (0..16).map(|k| av(row, k) * bv(48 + k, col)).sum::<f64>();
                assert_eq!(*got as f64, want, "thread {t} element ({row}, {col})");
            }
        }
        assert_eq!(wgmma_rs_operand(16, 2 * TILE, 64), Err(true));
        assert_eq!(wgmma_rs_operand(TILE, 2 * TILE, 128), Err(false));
        assert_eq!(wgmma_rs_operand(TILE + 2048, 2 * TILE, 64), Ok((TILE, 32)));
    }

    #[test]
    fn the_fp8_swizzle_permutes_chunks_within_a_row() {
        for r in 0..16 {
            let mut seen: Vec<usize> = (0..128).map(|c| swizzled_fp8(0, r, c)).collect();
            seen.sort();
            assert_eq!(seen, (r * 128..r * 128 + 128).collect::<Vec<_>>());
        }
        assert_eq!(swizzled_fp8(0, 1, 0), 128 + 16);
        assert_eq!(swizzled_fp8(TILE_FP8, 7, 127), TILE_FP8 + 7 * 128 + 15);
    }

    #[test]
    fn fp8_wgmma_of_a_thread_is_its_part_of_the_product() {
        // A: 64 x 128 with A[r][c] = ((r + c) % 7 - 3) / 4 (exact in e4m3); B^T: 128 rows (n) x
        // 128 columns (k) with B^T[n][k] = ((2n + k) % 5 - 2) / 2. A k-step at column 32 of both.
        let mut a = vec![f8e4m3::ZERO; TILE_FP8];
        let mut b = vec![f8e4m3::ZERO; 2 * TILE_FP8];
        let av = |r: usize, c: usize| ((r + c) % 7) as f64 / 4.0 - 0.75;
        let bv = |n: usize, k: usize| ((2 * n + k) % 5) as f64 / 2.0 - 1.0;
        for r in 0..64 {
            for c in 0..128 {
                a[swizzled_fp8(0, r, c)] = f8e4m3::from_f64(av(r, c));
            }
        }
        for n in 0..128 {
            for k in 0..128 {
                b[swizzled_fp8(0, n, k)] = f8e4m3::from_f64(bv(n, k));
            }
        }
        assert_eq!(a[swizzled_fp8(0, 5, 9)].to_f64(), av(5, 9), "the values are exact");
        for t in [0u32, 5, 37, 127] {
            let mut acc = [0.5f32; 64];
            let at = wgmma_fp8_operands(32, a.len(), 32, b.len(), 128).unwrap();
            wgmma_fp8_thread(&mut acc, t, 128, at, |k| a[k], |k| b[k]);
            let (q, l) = ((t / 32) as usize, (t % 32) as usize);
            for j in 0..16 {
                for h in 0..2 {
                    for e in 0..2 {
                        let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                        let want: f64 = 0.5 + (0..32).map(|k| av(row, 32 + k) * bv(col, 32 + k)).sum::<f64>();
                        assert_eq!(acc[4 * j + 2 * h + e] as f64, want, "thread {t} element ({row}, {col})");
                    }
                }
            }
        }
        // The host definition is thread 0's part.
        let mut acc = [0.0f32; 32];
        wgmma_m64n64k32(&mut acc, &a, 0u32, &b, 96u32);
        assert_eq!(acc[0] as f64, (0..32).map(|k| av(0, k) * bv(0, 96 + k)).sum::<f64>());
        assert_eq!(wgmma_fp8_operands(16, TILE_FP8, 0, TILE_FP8, 64), Err((false, true)));
        assert_eq!(wgmma_fp8_operands(0, TILE_FP8, 128, 2 * TILE_FP8, 64), Err((true, true)));
        assert_eq!(wgmma_fp8_operands(0, TILE_FP8, 0, TILE_FP8, 128), Err((true, false)));
        assert_eq!(wgmma_fp8_operands(TILE_FP8, TILE_FP8, 0, TILE_FP8, 64), Err((false, false)));
    }
}
