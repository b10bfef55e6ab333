//! Hopper's data movement and warpgroup tensor cores in the kernel language (docs/kernel-language.md,
//! "Hopper: TMA, mbarriers and wgmma"): transaction barriers in shared memory (`mbarrier_*`), the
//! tensor memory accelerator's tile copies (`tma_load_2d`) and the warpgroup multiply-accumulates
//! (`wgmma_m64nNk16`). Each is translated to the PTX instructions of `cuprum/hopper.h`; what they
//! compute is defined here, once, for the prelude's host definitions and the CPU device
//! (`cpu::hopper`).
//!
//! **Layout.** Copies and multiplies share the 128-byte swizzle: a tile of rows of 64 16-bit
//! elements whose 16-byte chunk `c` of row `r` lies at chunk `c ^ (r % 8)`
//! ([`Form::swizzled`]), which a `TensorMap` with a box 64 elements wide and `Swizzle::B128`
//! writes. Tiles start at multiples of 4096 elements of their shared array. `wgmma_m64nNk16(acc, a, ai, b, bi)` adds to the
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
//! 128-byte swizzle, [`K32_FP8`]'s [`Form::swizzled`]; [`TILE_FP8`] = 8192 elements):
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

/// Elements of one 128-byte-swizzled tile of 64 rows of 8-bit floats (8 KiB, as [`TILE`]).
pub const TILE_FP8: usize = 8192;

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

/// How a form of the multiplies from shared memory reads its operands (module docs): the
/// elements of one operand tile, the K of one multiply, and whether B is stored transposed (N x K,
/// K-major as A) or N-major (K x N). One definition serves every form: [`K16`]
/// (`wgmma_m64nNk16`, and B of `wgmma_m64nNk16_rs`), [`K16_BT`] (`wgmma_m64nNk16_bt`) and
/// [`K32_FP8`] (`wgmma_m64nNk32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// Elements of one 128-byte-swizzled tile of 64 rows: [`TILE`] or [`TILE_FP8`].
    pub tile: usize,
    /// The K of one multiply (a tile's row holds four): 16 or 32.
    pub k: usize,
    /// Whether B is stored transposed (N x K) rather than N-major (K x N).
    pub b_transposed: bool,
}

/// `wgmma_m64nNk16`: 16-bit A and B, B N-major (rows `(bi % 4096) / 64 .. + 16` of its tiles).
pub const K16: Form = Form { tile: TILE, k: 16, b_transposed: false };

/// `wgmma_m64nNk16_bt`: 16-bit A and B, B stored transposed (N x K): rows `0..N` of the `N / 64`
/// tiles from `bi - bi % 4096`, columns `bi % 4096 .. + 16` (0, 16, 32 or 48).
pub const K16_BT: Form = Form { tile: TILE, k: 16, b_transposed: true };

/// `wgmma_m64nNk32`: 8-bit float A and B, B stored transposed (module docs, **FP8**).
pub const K32_FP8: Form = Form { tile: TILE_FP8, k: 32, b_transposed: true };

impl Form {
    /// Elements of one row of a tile (128 bytes).
    #[inline]
    fn row(self) -> usize {
        self.tile / 64
    }

    /// The index of element (`r`, `c`) (`c` within a row) of the 128-byte-swizzled tile at
    /// `tile` (rows past 63 continue into the next tiles): 16-byte chunk `c` of row `r` lies at
    /// chunk `c ^ (r % 8)`.
    #[inline]
    pub fn swizzled(self, tile: usize, r: usize, c: usize) -> usize {
        let (w, chunk) = (self.row(), self.row() / 8);
        tile + r * w + (((c / chunk) ^ (r % 8)) * chunk) + c % chunk
    }

    /// The alignment of A's index (`is_b` false) or of B's: a K-step of a row (`k`), or of B's
    /// rows when B is N-major (`k` rows).
    pub fn alignment(self, is_b: bool) -> usize {
        if is_b && !self.b_transposed { self.k * self.row() } else { self.k }
    }

    /// Elements of B's `N / 64` tiles for an N-wide product.
    pub fn b_len(self, n: usize) -> usize {
        n * self.row()
    }

    /// Where the operands lie: `(A's tile, A's first column, B's first tile, B's first row (N-major)
    /// or column (transposed))`, or the index that is wrong (`Err((is_b, misaligned))`).
    pub fn operands(self, ai: usize, a_len: usize, bi: usize, b_len: usize, n: usize) -> Result<(usize, usize, usize, usize), (bool, bool)> {
        let (ta, ka) = (ai - ai % self.tile, ai % self.tile);
        if ka % self.k != 0 || ka >= 4 * self.k {
            return Err((false, true));
        }
        if ta >= a_len || self.tile > a_len - ta {
            return Err((false, false));
        }
        let (tb, kb) = self.b_operand(bi, b_len, n).map_err(|misaligned| (true, misaligned))?;
        Ok((ta, ka, tb, kb))
    }

    /// Where B lies: `(B's first tile, B's first row (N-major) or column (transposed))`, or whether
    /// its index is misaligned (`Err(true)`) or out of range (`Err(false)`).
    pub fn b_operand(self, bi: usize, b_len: usize, n: usize) -> Result<(usize, usize), bool> {
        let (tb, kb) = (bi - bi % self.tile, bi % self.tile);
        if kb % self.alignment(true) != 0 || (self.b_transposed && kb >= 4 * self.k) {
            return Err(true);
        }
        if tb >= b_len || self.b_len(n) > b_len - tb {
            return Err(false);
        }
        Ok((tb, if self.b_transposed { kb } else { kb / self.row() }))
    }

    /// The index of B's element (`k`, `col`) for B at `(tb, kb)` from [`Form::b_operand`]: N-major,
    /// row `kb + k` of tile `col / 64`; transposed, element (`col`, `kb + k`) of the tiles from
    /// `tb` (rows of 64-row tiles one after the other).
    #[inline]
    pub fn b_index(self, (tb, kb): (usize, usize), k: usize, col: usize) -> usize {
        if self.b_transposed {
            self.swizzled(tb, col, kb + k)
        } else {
            self.swizzled(tb + (col / self.row()) * self.tile, kb + k, col % self.row())
        }
    }

    /// Thread `t`'s part of `acc += A * B` (module docs) for operands whose values `a(index)` and
    /// `b(index)` read, exactly, from their shared arrays, at `(ta, ka, tb, kb)` from
    /// [`Form::operands`]. Products are exact and summed in f64, added to the accumulator and
    /// rounded to f32 once. (The GPU's FP8 accumulation keeps fewer bits than f32 when a sum's
    /// terms differ much in magnitude: an FP8 kernel's result can differ from this in the low
    /// bits, where the sums are not exact.)
    pub fn thread(self, acc: &mut [f32], t: u32, n: usize, at: (usize, usize, usize, usize), a: impl Fn(usize) -> f64, b: impl Fn(usize) -> f64) {
        let (ta, ka, tb, kb) = at;
        wgmma_part(acc, t, n, self.k, |r, k| a(self.swizzled(ta, r, ka + k)), |k, c| b(self.b_index((tb, kb), k, c)));
    }
}

/// Thread `t`'s part of `acc += A * B` for a 64 x N x `kdim` product whose elements are
/// `a(row, k)` and `b(k, col)`: summed in f64 (the products of 16-bit and 8-bit floats are exact),
/// added to the accumulator and rounded to f32 once.
fn wgmma_part(acc: &mut [f32], t: u32, n: usize, kdim: usize, a: impl Fn(usize, usize) -> f64, b: impl Fn(usize, usize) -> f64) {
    let (q, l) = ((t % 128 / 32) as usize, (t % 32) as usize);
    for j in 0..n / 8 {
        for h in 0..2 {
            for e in 0..2 {
                let (row, col) = (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e);
                let s: f64 = (0..kdim).map(|k| a(row, k) * b(k, col)).sum();
                let slot = &mut acc[4 * j + 2 * h + e];
                *slot = (*slot as f64 + s) as f32;
            }
        }
    }
}

/// The element (row `r`, column `k`) of a warp's 16 x 16 A tile held as the fragments `frags`
/// (lane by lane, mma.m16n8k16's A layout: lane `4 (r % 8) + (k % 8) / 2`, its element
/// `4 (k / 8) + 2 (r / 8) + k % 2`).
pub fn a_fragment_element<T: Copy>(frags: &[[T; 8]; 32], r: usize, k: usize) -> T {
    frags[4 * (r % 8) + (k % 8) / 2][4 * (k / 8) + 2 * (r / 8) + k % 2]
}

/// Thread `t`'s part of `acc += A * B` with A from registers (`wgmma_m64nNk16_rs`): `frags` are
/// the fragments of the 32 lanes of `t`'s warp (rows `16q .. 16q + 16` of A), B (read by
/// `b(index)`, exactly) at `(tb, kb)` from [`K16`]'s [`Form::b_operand`].
pub fn wgmma_rs_thread<T: MmaHalf>(acc: &mut [f32], t: u32, n: usize, frags: &[[T; 8]; 32], at: (usize, usize), b: impl Fn(usize) -> f64) {
    wgmma_part(acc, t, n, K16.k, |r, k| a_fragment_element(frags, r % 16, k).to_f64_exact(), |k, c| b(K16.b_index(at, k, c)));
}

/// The host definition of a form from shared memory: thread 0's part at once, from the arrays'
/// first tiles when an index is wrong.
#[allow(clippy::too_many_arguments)] // a multiply's operands, its form and the values' reading
fn host_wgmma<T: Copy>(form: Form, acc: &mut [f32], n: usize, a: &[T], ai: usize, b: &[T], bi: usize, exact: fn(T) -> f64) {
    let at = form.operands(ai, a.len(), bi, b.len(), n).unwrap_or((0, 0, 0, 0));
    form.thread(acc, 0, n, at, |k| exact(a[k]), |k| exact(b[k]));
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

/// Defines the public multiplies of one form, the form written once, for N = 64, 128 and 256
/// (accumulators of N / 2): `names` are, for each N, the checked multiply (documented by `doc`'s
/// pieces, in which `N`, `NAME` and `UNCHECKED` stand for the N and the names) and the `unsafe`
/// one (documented by `unchecked`'s pieces, then a `# Safety` section of `safety`'s lines), both
/// with the generic parameters `generics`, the accumulator `&mut [f32; N / 2]` then `params`, and
/// the body `|acc, n| body` (`n`: N). The host definitions (below) are its first use; the CPU
/// device's (`cpu::lang::hopper`) its second, `cpu "..."`: forms documented as the host's
/// (`lang::hopper`), whose unchecked multiply is checked all the same (the string says what).
macro_rules! wgmma_forms {
    (@doc $name:ident, $unchecked:ident, $n:literal, N) => { stringify!($n) };
    (@doc $name:ident, $unchecked:ident, $n:literal, NAME) => { stringify!($name) };
    (@doc $name:ident, $unchecked:ident, $n:literal, UNCHECKED) => { stringify!($unchecked) };
    (@doc $name:ident, $unchecked:ident, $n:literal, $piece:literal) => { $piece };
    (@one $name:ident, $unchecked:ident, $n:literal, $r:literal, [$($g:tt)*], ($($p:ident: $pt:ty),*),
        |$acc:ident, $nn:ident| $body:expr, [$($doc:tt),*], [$($udoc:tt),*], {$(#[$safety:meta])*}) => {
        #[doc = concat!($(wgmma_forms!(@doc $name, $unchecked, $n, $doc)),*)]
        pub fn $name<$($g)*>($acc: &mut [f32; $r], $($p: $pt),*) {
            let $nn: usize = $n;
            $body
        }

        #[doc = concat!($(wgmma_forms!(@doc $name, $unchecked, $n, $udoc)),*)]
        ///
        /// # Safety
        ///
        $(#[$safety])*
        pub unsafe fn $unchecked<$($g)*>($acc: &mut [f32; $r], $($p: $pt),*) {
            let $nn: usize = $n;
            $body
        }
    };
    (generics: $g:tt; params: $p:tt; body: |$acc:ident, $nn:ident| $body:expr; doc: $doc:tt; unchecked: $udoc:tt; safety: $safety:tt;
        names: [$n64:ident, $u64:ident, $n128:ident, $u128:ident, $n256:ident, $u256:ident]$(;)?) => {
        wgmma_forms!(@one $n64, $u64, 64, 32, $g, $p, |$acc, $nn| $body, $doc, $udoc, $safety);
        wgmma_forms!(@one $n128, $u128, 128, 64, $g, $p, |$acc, $nn| $body, $doc, $udoc, $safety);
        wgmma_forms!(@one $n256, $u256, 256, 128, $g, $p, |$acc, $nn| $body, $doc, $udoc, $safety);
    };
    ($(cpu $checked:literal: $g:tt $p:tt |$acc:ident, $nn:ident| $body:expr => $names:tt;)*) => {$(
        wgmma_forms! {
            generics: $g; params: $p; body: |$acc, $nn| $body;
            doc: ["`", NAME, "` (`lang::hopper`)."];
            unchecked: ["`", UNCHECKED, "` (`lang::hopper`): checked on the CPU device."];
            safety: { #[doc = concat!(" None needed here: ", $checked, ".")] };
            names: $names
        }
    )*};
}
pub(crate) use wgmma_forms;

wgmma_forms! {
    generics: [T: MmaHalf, I: KernelIndex, J: KernelIndex];
    params: (a: &[T], ai: I, b: &[T], bi: J);
    body: |acc, n| host_wgmma(K16, acc, n, a, ai.to_usize(), b, bi.to_usize(), T::to_f64_exact);
    doc: ["`acc += A * B` on the warpgroup's 64 x ", N, " tile, A and B (`f16` or `bf16`) from shared memory \
        (module docs): PTX `wgmma.mma_async.m64n", N, "k16` (sm_90a), asynchronous until `wgmma_wait`. \
        An index out of its array or not on a tile's row or column is reported as an index violation and the \
        operands of the arrays' first tiles are used. Host: thread 0's part, at once."];
    unchecked: ["[`", NAME, "`] without its checks of the operands (a few integer operations and a select \
        before each multiply, which cost in a GEMM's inner loop: docs/kernel-language.md). Host: checked all the same."];
    safety: {
        /// On a GPU the operands are not checked: `ai % 4096` is 0, 16, 32 or 48 and the 4096 elements of A's tile
        /// from `ai - ai % 4096` lie in `a`; `bi % 4096` is 0, 1024, 2048 or 3072 and the `N * 64` elements of B's
        /// tiles from `bi - bi % 4096` lie in `b`; both arrays start 1024-byte aligned in shared memory.
    };
    names: [wgmma_m64n64k16, wgmma_m64n64k16_unchecked, wgmma_m64n128k16, wgmma_m64n128k16_unchecked, wgmma_m64n256k16, wgmma_m64n256k16_unchecked];
}

wgmma_forms! {
    generics: [T: MmaHalf, I: KernelIndex, J: KernelIndex];
    params: (a: &[T], ai: I, b: &[T], bi: J);
    body: |acc, n| host_wgmma(K16_BT, acc, n, a, ai.to_usize(), b, bi.to_usize(), T::to_f64_exact);
    doc: ["`acc += A * B` on the warpgroup's 64 x ", N, " tile, A (64 x 16, K-major) and B stored transposed \
        (", N, " x 16, K-major as A: e.g. the keys of `Q K^T`) from shared memory, `f16` or `bf16` (module docs, \
        `wgmma_m64nNk16_bt`): PTX `wgmma.mma_async.sync.aligned.m64n", N, "k16.f32.bf16.bf16 d, a-desc, b-desc, p, 1, 1, 0, 0` \
        (imm-trans-b 0; sm_90a), asynchronous until `wgmma_wait`. An index out of its array or off a tile's column 0, 16, 32 or 48 \
        is reported as an index violation and the arrays' first tiles are used. Host: thread 0's part, at once."];
    unchecked: ["[`", NAME, "`] without its checks of the operands. Host: checked all the same."];
    safety: {
        /// On a GPU the operands are not checked: `ai % 4096` and `bi % 4096` are 0, 16, 32 or 48, the 4096 elements of
        /// A's tile from `ai - ai % 4096` lie in `a`, the `N * 64` elements of B's tiles from `bi - bi % 4096` lie in
        /// `b`, and both arrays start 1024-byte aligned in shared memory.
    };
    names: [wgmma_m64n64k16_bt, wgmma_m64n64k16_bt_unchecked, wgmma_m64n128k16_bt, wgmma_m64n128k16_bt_unchecked, wgmma_m64n256k16_bt, wgmma_m64n256k16_bt_unchecked];
}

wgmma_forms! {
    generics: [T: MmaHalf, J: KernelIndex];
    params: (a: [T; 8], b: &[T], bi: J);
    body: |acc, n| {
        let at = K16.b_operand(bi.to_usize(), b.len(), n).unwrap_or((0, 0));
        wgmma_rs_thread(acc, 0, n, &[a; 32], at, |k| b[k].to_f64_exact())
    };
    doc: ["`acc += A * B` on the warpgroup's 64 x ", N, " tile with A (64 x 16) from registers and B \
        (16 x ", N, ", N-major, as `wgmma_m64nNk16`'s) from shared memory, `f16` or `bf16`: each thread passes its \
        fragment `a` of its warp's 16 rows in mma.m16n8k16's A layout (`a[0], a[1]`: row `l / 4`, columns `2 (l % 4)` and the \
        next; `a[2], a[3]`: row `l / 4 + 8`; `a[4..8]`: the same 8 columns on), which is the accumulator layout: elements \
        `8 kk .. 8 kk + 8` of a 64 x M accumulator are the fragment of its columns `16 kk .. 16 kk + 16` (FlashAttention's P \
        feeding P V without leaving registers). PTX `wgmma.mma_async.sync.aligned.m64n", N, "k16.f32.bf16.bf16 \
        d, {a0, a1, a2, a3}, b-desc, p, 1, 1, 1` (sm_90a), asynchronous until `wgmma_wait`. B's index is checked as \
        `wgmma_m64nNk16`'s. Host: thread 0's part, every lane holding `a`."];
    unchecked: ["[`", NAME, "`] without the check of B. Host: checked all the same."];
    safety: {
        /// On a GPU B is not checked: `bi % 4096` is 0, 1024, 2048 or 3072, the `N * 64` elements of B's tiles from
        /// `bi - bi % 4096` lie in `b`, and `b` starts 1024-byte aligned in shared memory.
    };
    names: [wgmma_m64n64k16_rs, wgmma_m64n64k16_rs_unchecked, wgmma_m64n128k16_rs, wgmma_m64n128k16_rs_unchecked, wgmma_m64n256k16_rs, wgmma_m64n256k16_rs_unchecked];
}

wgmma_forms! {
    generics: [T: MmaFp8, I: KernelIndex, J: KernelIndex];
    params: (a: &[T], ai: I, b: &[T], bi: J);
    body: |acc, n| host_wgmma(K32_FP8, acc, n, a, ai.to_usize(), b, bi.to_usize(), T::to_f64_exact);
    doc: ["`acc += A * B` on the warpgroup's 64 x ", N, " tile from 8-bit float operands (`f8e4m3` or \
        `f8e5m2`) in shared memory, A (64 x 32) and B stored transposed (", N, " x 32), both K-major \
        (module docs): PTX `wgmma.mma_async.m64n", N, "k32.f32.e4m3.e4m3` (or `.e5m2`; sm_90a), \
        asynchronous until `wgmma_wait`. An index out of its array or not on a tile's column 0, 32, 64 or 96 is \
        reported as an index violation and the operands of the arrays' first tiles are used. Host: thread 0's part, at once."];
    unchecked: ["[`", NAME, "`] without its checks of the operands. Host: checked all the same."];
    safety: {
        /// On a GPU the operands are not checked: `ai % 8192` is 0, 32, 64 or 96 and the 8192 elements of A's tile
        /// from `ai - ai % 8192` lie in `a`; `bi % 8192` is 0, 32, 64 or 96 and the `N * 128` elements of B's
        /// tiles from `bi - bi % 8192` lie in `b`; both arrays start 1024-byte aligned in shared memory.
    };
    names: [wgmma_m64n64k32, wgmma_m64n64k32_unchecked, wgmma_m64n128k32, wgmma_m64n128k32_unchecked, wgmma_m64n256k32, wgmma_m64n256k32_unchecked];
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    /// Thread `t`'s accumulator element `i` of a 64 x N tile: its (row, column).
    fn acc_element(t: usize, i: usize) -> (usize, usize) {
        let (q, l, j, h, e) = (t / 32, t % 32, i / 4, (i / 2) % 2, i % 2);
        (16 * q + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + e)
    }

    /// Checks each element of thread `t`'s accumulator `acc` against `want(row, column)`.
    fn check_thread(acc: &[f32], t: u32, want: impl Fn(usize, usize) -> f64) {
        for (i, got) in acc.iter().enumerate() {
            let (row, col) = acc_element(t as usize, i);
            assert_eq!(*got as f64, want(row, col), "thread {t} element ({row}, {col})");
        }
    }

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
            let mut seen: Vec<usize> = (0..64).map(|c| K16.swizzled(0, r, c)).collect();
            seen.sort();
            assert_eq!(seen, (r * 64..r * 64 + 64).collect::<Vec<_>>());
        }
        assert_eq!(K16.swizzled(0, 1, 0), 64 + 8);
        // Chunk 7 of row 7 lands at chunk 7 ^ 7 = 0.
        assert_eq!(K16.swizzled(4096, 7, 63), 4096 + 7 * 64 + 7);
    }

    #[test]
    fn wgmma_of_a_thread_is_its_part_of_the_product() {
        // A: 64 x 64 tile with A[r][c] = r + c (small integers, exact in bf16); B: one 64 x 64
        // tile with B[k][n] = k - n.
        let mut a = vec![bf16::ZERO; TILE];
        let mut b = vec![bf16::ZERO; TILE];
        for r in 0..64 {
            for c in 0..64 {
                a[K16.swizzled(0, r, c)] = bf16::from_f32((r + c) as f32 / 8.0);
                b[K16.swizzled(0, r, c)] = bf16::from_f32((r as f32 - c as f32) / 8.0);
            }
        }
        for t in [0u32, 5, 37, 127] {
            let mut acc = [1.0f32; 32];
            let at = K16.operands(16, a.len(), 1024, b.len(), 64).unwrap();
            K16.thread(&mut acc, t, 64, at, |k| a[k].to_f64(), |k| b[k].to_f64());
            check_thread(&acc, t, |row, col| 1.0 + (0..16).map(|k| ((row + 16 + k) as f64 / 8.0) * ((16 + k) as f64 - col as f64) / 8.0).sum::<f64>());
        }
        assert_eq!(K16.operands(8, TILE, 0, TILE, 64), Err((false, true)));
        assert_eq!(K16.operands(0, TILE, 512, TILE, 64), Err((true, true)));
        assert_eq!(K16.operands(0, TILE, 0, TILE, 128), Err((true, false)));
        assert_eq!(K16.operands(TILE, TILE, 0, TILE, 64), Err((false, false)));
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
                a[K16.swizzled(0, r, c)] = bf16::from_f64(av(r, c));
            }
        }
        for n in 0..128 {
            for k in 0..64 {
                b[K16.swizzled(0, n, k)] = bf16::from_f64(bv(n, k));
            }
        }
        assert_eq!(b[K16.swizzled(0, 100, 7)].to_f64(), bv(100, 7), "the values are exact");
        for t in [0u32, 5, 37, 127] {
            let mut acc = [0.25f32; 64];
            let at = K16_BT.operands(32, a.len(), 32, b.len(), 128).unwrap();
            K16_BT.thread(&mut acc, t, 128, at, |k| a[k].to_f64(), |k| b[k].to_f64());
            check_thread(&acc, t, |row, col| 0.25 + (0..16).map(|k| av(row, 32 + k) * bv(col, 32 + k)).sum::<f64>());
        }
        // The host definition is thread 0's part.
        let mut acc = [0.0f32; 32];
        wgmma_m64n64k16_bt(&mut acc, &a, 16u32, &b, 48u32);
        assert_eq!(acc[1] as f64, (0..16).map(|k| av(0, 16 + k) * bv(1, 48 + k)).sum::<f64>());
        assert_eq!(K16_BT.operands(0, TILE, 8, 2 * TILE, 64), Err((true, true)));
        assert_eq!(K16_BT.operands(0, TILE, 1024, 2 * TILE, 64), Err((true, true)), "B's columns, not its rows");
        assert_eq!(K16_BT.operands(0, TILE, TILE + 16, 2 * TILE, 128), Err((true, false)));
        assert_eq!(K16_BT.operands(4, TILE, 0, 2 * TILE, 64), Err((false, true)));
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
                b[K16.swizzled((n / 64) * TILE, k, n % 64)] = bf16::from_f64(bv(k, n));
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
            let at = K16.b_operand(3072, b.len(), 128).unwrap();
            wgmma_rs_thread(&mut acc, t, 128, &frags, at, |k| b[k].to_f64());
            check_thread(&acc, t, |row, col| -1.0 + (0..16).map(|k| av(row, k) * bv(48 + k, col)).sum::<f64>());
        }
        assert_eq!(K16.b_operand(16, 2 * TILE, 64), Err(true));
        assert_eq!(K16.b_operand(TILE, 2 * TILE, 128), Err(false));
        assert_eq!(K16.b_operand(TILE + 2048, 2 * TILE, 64), Ok((TILE, 32)));
    }

    #[test]
    fn the_fp8_swizzle_permutes_chunks_within_a_row() {
        for r in 0..16 {
            let mut seen: Vec<usize> = (0..128).map(|c| K32_FP8.swizzled(0, r, c)).collect();
            seen.sort();
            assert_eq!(seen, (r * 128..r * 128 + 128).collect::<Vec<_>>());
        }
        assert_eq!(K32_FP8.swizzled(0, 1, 0), 128 + 16);
        assert_eq!(K32_FP8.swizzled(TILE_FP8, 7, 127), TILE_FP8 + 7 * 128 + 15);
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
                a[K32_FP8.swizzled(0, r, c)] = f8e4m3::from_f64(av(r, c));
            }
        }
        for n in 0..128 {
            for k in 0..128 {
                b[K32_FP8.swizzled(0, n, k)] = f8e4m3::from_f64(bv(n, k));
            }
        }
        assert_eq!(a[K32_FP8.swizzled(0, 5, 9)].to_f64(), av(5, 9), "the values are exact");
        for t in [0u32, 5, 37, 127] {
            let mut acc = [0.5f32; 64];
            let at = K32_FP8.operands(32, a.len(), 32, b.len(), 128).unwrap();
            K32_FP8.thread(&mut acc, t, 128, at, |k| a[k].to_f64(), |k| b[k].to_f64());
            check_thread(&acc, t, |row, col| 0.5 + (0..32).map(|k| av(row, 32 + k) * bv(col, 32 + k)).sum::<f64>());
        }
        // The host definition is thread 0's part.
        let mut acc = [0.0f32; 32];
        wgmma_m64n64k32(&mut acc, &a, 0u32, &b, 96u32);
        assert_eq!(acc[0] as f64, (0..32).map(|k| av(0, k) * bv(0, 96 + k)).sum::<f64>());
        assert_eq!(K32_FP8.operands(16, TILE_FP8, 0, TILE_FP8, 64), Err((false, true)));
        assert_eq!(K32_FP8.operands(0, TILE_FP8, 128, 2 * TILE_FP8, 64), Err((true, true)));
        assert_eq!(K32_FP8.operands(0, TILE_FP8, 0, TILE_FP8, 128), Err((true, false)));
        assert_eq!(K32_FP8.operands(TILE_FP8, TILE_FP8, 0, TILE_FP8, 64), Err((false, false)));
    }
}
