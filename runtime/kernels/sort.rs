//! The built-in kernels of the stable LSD radix sort behind `sort`, `argsort` and `unique`
//! (runtime/src/sort.rs), written with cuprum's own macros (`crate = crate`) and precompiled by
//! the runtime's build.rs.
//!
//! The kernels move keys as their raw bits (`u32` for 4-byte dtypes, `u64` for 8-byte ones) and
//! compute each key's order-preserving image only to take its digit (`order_bits`): the sorted
//! array is the input's own bits in a new order, and no pass converts keys back. A pass sorts
//! by one digit of 5 bits (32 buckets), stably, Onesweep-style (Adinets and Merrill, "Onesweep: A
//! Faster Least Significant Digit Radix Sort for GPUs", 2022):
//!
//! 1. once per sort, `radix_hist` counts the digits of every pass in one read of the keys;
//! 2. each pass is one launch of `radix_scatter` (`radix_scatter_keys` for 4-byte keys alone):
//!    each block takes the next tile of 4096 keys (256 threads of 16) from an atomic counter,
//!    ranks its keys stably (each thread holds 16 consecutive keys and counts its digits in a
//!    column of shared counters; an exclusive scan of the counters in [digit][thread] order
//!    gives each thread its first slot per digit),
//!    publishes its count of each digit, places its keys sorted by digit in shared memory,
//!    finds the keys of each digit in the tiles before it by a decoupled look-back (one lane of
//!    the first warp per digit, once that warp has placed its keys), and writes them out (and
//!    their `i64` values, for `argsort`) in order, so that each digit's keys of a tile are one
//!    contiguous run of the output. A pass reads each key once and writes it once (8 bytes per
//!    `f32` key).
//!
//! The tile's shared memory, dynamic and sized by the host: the 4096 keys (17 or 33 KiB), when
//! there are values their 4096 values (33 KiB), and 8192 `u16` counters, two to a `u32` word (18
//! KiB with padding): up to 84 KiB a block, above the 48 KiB a block may have without opting in
//! (the runtime raises the kernel's limit at launch).

use crate::lang::prelude::*;
use cuprum_macros::{device, rawkernel};

/// Threads per block of `radix_scatter` (a multiple of 32; runtime/src/sort.rs has the same).
pub const THREADS: usize = 256;
/// Warps per block of `radix_scatter`.
const WARPS: usize = THREADS / 32;
/// Keys per thread (16: `own`'s padding formula assumes it).
const ITEMS: usize = 16;
/// Keys per tile.
pub const TILE: usize = THREADS * ITEMS;
/// Buckets per pass (digits of 5 bits).
pub const BUCKETS: usize = 32;
/// Rows of counter words of `radix_scatter`: a word holds two `u16` counters of one thread, digit
/// `d` in the low half and digit `d + 16` in the high half of row `d`.
const ROWS: usize = BUCKETS / 2;
/// Counter words a thread scans (`ROWS * THREADS` words over `THREADS` threads).
const SPAN: usize = ROWS;
/// Pairs of counter words a thread scans (one 8-byte access each).
const PAIRS: usize = SPAN / 2;
/// `TILE` plus one padding slot per 32 (shared arrays indexed through `pad`).
pub const PADDED: usize = TILE + TILE / 32;
/// `pad(THREADS)`: the stride of a row of `THREADS` keys in the padded shared arrays.
const COLUMN: usize = THREADS + THREADS / 32;
/// The stride of a row of counter words of `radix_scatter`: `THREADS` words with two padding
/// words per 32, rounded up to a multiple of 32, so that every row starts at bank 0.
const CROW: usize = (THREADS + THREADS / 16 + 31) & !31;
/// Counter words (`u32`) of `radix_scatter` with their padding (`ROWS` rows of `CROW`), the last
/// of its dynamic shared memory.
pub const WORDS: usize = ROWS * CROW;

/// The shared-array slot of logical index `k`: one padding slot after every 32, so that threads
/// that read 16 consecutive elements each hit different banks.
#[device(crate = crate)]
fn pad(k: usize) -> usize {
    // In 32 bits (every shared index is below 2^14): 64-bit adds cost a carry each.
    let k = k as u32;
    (k + k / 32) as usize
}

/// The order-preserving image of the key bits `b`: with `mode` 0 the bits themselves (unsigned
/// integers), 1 the sign bit flipped (two's complement integers), 2 an IEEE float's total order
/// with NumPy's ties: positive numbers their magnitude's bits with the sign bit set, negative
/// ones `sign` less their magnitude (below every positive one, the larger magnitude the smaller),
/// so that both zeros are `sign` (NumPy's stable sort keeps -0.0 and 0.0 in input order), and
/// every NaN the largest image (after +inf, in input order). `sign` is the sign bit of the type
/// and `inf` the bits of +inf.
#[device(crate = crate)]
fn order_bits<K: Int>(b: K, mode: u32, sign: K, inf: K) -> K {
    // Without branches on the key (selects): a data-dependent branch per key cost the count and
    // scatter kernels a divergence point each. `sign - mag` gives -0.0 the image of 0.0 without
    // a select of its own (every bit flipped, it took one more).
    let mag = b & !sign;
    if mode == 0 {
        b
    } else if mode == 1 {
        b ^ sign
    } else {
        let image = if (b & sign) != K::zero() { sign - mag } else { sign | mag };
        if mag > inf { K::max_value() } else { image }
    }
}

/// The digit (0 to 31) of the key bits `b` at `shift`.
#[device(crate = crate)]
fn digit_of<K: Int>(b: K, shift: u32, mode: u32, sign: K, inf: K) -> u32 {
    (order_bits(b, mode, sign, inf) >> shift).low_u32() & 31
}

/// The tile slot of the thread's key `j` once the counters are scanned: its digit's first slot
/// of the thread (the half of its counter word `cnt[ccol + (d % 16) * CROW]` that holds digit `d`)
/// plus its rank among the thread's keys of that digit (below 16: 4 bits). The digits are packed
/// six of 5 bits to a word (`dp`) and the ranks eight of 4 bits (`rk`), so that they hold 5
/// registers across the scan, not the 16 of whole counter words. Unchecked (a bounds check per
/// key cost registers and a branch).
///
/// # Safety
///
/// `cnt` holds the word `ccol + 15 * CROW`.
#[device(crate = crate, unchecked)]
unsafe fn slot_of(cnt: &[u32], ccol: usize, dp: [u32; 3], rk: [u32; 2], j: usize) -> u32 {
    let d = (dp[j / 6] >> ((j % 6) * 5)) & 31;
    let c = cnt[ccol + ((d % 16) * CROW as u32) as usize];
    ((c >> (d & 16)) & 0xffff) + ((rk[j / 8] >> ((j % 8) * 4)) & 15)
}

/// Digit `d`'s first slot in the tile and its count of keys (of `count` in the tile), once the
/// counters (from `cnt[cb]`) are scanned: thread 0's counters, at `cb + (d % 16) * CROW`, which
/// nothing writes after the scan. Unchecked.
///
/// # Safety
///
/// `cnt` holds the word `cb + 15 * CROW`.
#[device(crate = crate, unchecked)]
unsafe fn first_and_count(cnt: &[u32], cb: usize, d: usize, count: u32) -> (u32, u64) {
    let first = (cnt[cb + (d % 16) * CROW] >> (d & 16) as u32) & 0xffff;
    let next = if d + 1 < BUCKETS { (cnt[cb + ((d + 1) % 16) * CROW] >> ((d + 1) & 16) as u32) & 0xffff } else { count };
    (first, (next - first) as u64)
}

/// The bitwise OR (`acc[0]`, 0 before) and AND (`acc[1]`, all ones before) of the order images
/// of the `n` keys: the bits where the two differ are the bits that vary, and a pass over a digit
/// with none of them is skipped. Any grid (a grid-stride loop); whole warps.
#[rawkernel(crate = crate, instances = [u32, u64])]
pub fn radix_bits<K: Int>(keys: &[K], n: u64, mode: u32, sign: K, inf: K, acc: &mut [K]) {
    let mut or = K::zero();
    let mut and = K::max_value();
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < n {
        let b = order_bits(keys[i as usize], mode, sign, inf);
        or |= b;
        and &= b;
        i += step;
    }
    let mut off = 16u32;
    while off > 0 {
        or = or | shfl_xor_sync(0xffff_ffff, or, off);
        and = and & shfl_xor_sync(0xffff_ffff, and, off);
        off /= 2;
    }
    if lane_id() == 0 {
        atomic_or(acc, 0, or);
        atomic_and(acc, 1, and);
    }
}

/// Passes whose digits one launch of `radix_hist` counts.
pub const HIST_PASSES: usize = 7;
/// Counters of `radix_hist`: `HIST_PASSES` passes of `BUCKETS` digits, 32 copies each (one per
/// lane).
const HIST_COUNTERS: usize = 7168;
/// Bits of a look-back word that hold the count; the flag is above them.
const COUNT_BITS: u32 = 56;
/// Tiles a look-back step reads at once.
const LOOK: usize = 4;

/// Counts the digits of the `n` keys for the `HIST_PASSES` passes from `first` (pass `p` sorts
/// the digit at shift `5 * p`; shifts past 60, beyond a 64-bit key's last digit, count the digit
/// at 60 again, which no pass reads) into `hist[p * 32 + digit]` (`hist` zeroed before; every
/// pass counted, without a branch per pass). Any grid of 256 threads (a grid-stride loop); each block counts in
/// shared memory and then adds its counts to `hist`.
///
/// Each warp's atomic adds go to 32 copies of the counters, one per lane: a lane's counter has
/// its own address and its own bank whatever the digits are (all keys equal included), so an
/// add costs one pass of the warp.
#[rawkernel(crate = crate, unchecked, max_threads = 256, instances = [u32, u64])]
pub fn radix_hist<K: Int>(keys: &[K], n: u64, mode: u32, sign: K, inf: K, first: u32, hist: &mut [u64]) {
    let cnt = shared_array::<u32, HIST_COUNTERS>();
    let tid = thread_idx().x as usize;
    let nt = block_dim().x as usize;
    let lane = tid % 32;
    let mut k = tid;
    while k < HIST_COUNTERS {
        cnt[k] = 0;
        k += nt;
    }
    sync_threads();
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    // Four keys per thread in flight, then their digits.
    while i < n {
        let mut ks = [K::zero(); 4];
        for u in (0..4usize).unroll() {
            let j = i + u as u64 * step;
            if j < n {
                ks[u] = keys[j as usize];
            }
        }
        for u in (0..4usize).unroll() {
            if i + u as u64 * step < n {
                let b = order_bits(ks[u], mode, sign, inf);
                for q in (0..HIST_PASSES).unroll() {
                    let sh = (first + q as u32) * 5;
                    let d = (b >> if sh < 60 { sh } else { 60 }).low_u32() & 31;
                    atomic_add(cnt, (q * BUCKETS + d as usize) * 32 + lane, 1u32);
                }
            }
        }
        i += 4 * step;
    }
    sync_threads();
    // Counter `c` (a pass and a digit): the sum of its 32 copies, each thread of a warp starting
    // at another lane's (another bank).
    let mut c = tid;
    while c < HIST_PASSES * BUCKETS {
        let mut s = 0u64;
        for l in (0..32usize).unroll() {
            s += cnt[c * 32 + (l + c) % 32] as u64;
        }
        if s > 0 {
            atomic_add(hist, first as usize * BUCKETS + c, s);
        }
        c += nt;
    }
}

/// One stable pass of the radix sort, the pass `pass` (from 0) of this sort: the keys of
/// `keys_in` (`n` keys, in tiles of `TILE`) go to `keys_out` in the order of their digit at
/// `shift`, keys of equal digits in input order. `hist[h * 32 + digit]` (from `radix_hist`) counts
/// the keys of each digit at `shift`; the keys of a digit start, in the output, after those of
/// the smaller digits, and each tile's after those of the tiles before it. Values: with `vals` 0
/// none (the value arrays are not touched), 1 each key's input index (`vals_in` is not read), 2
/// `vals_in`; they move with their keys to `vals_out`.
///
/// The tiles' positions come from a decoupled look-back (Merrill and Garland 2016, as
/// `kernels/scan.rs`, one per digit; Adinets and Merrill's "Onesweep", 2022): each block takes
/// the next tile from `counter[pass]`, ranks its keys, publishes each digit's count in the tile
/// (`status[tile * 32 + digit]`, flag `2 * pass + 1`), then lane `d` of its first warp adds the
/// counts of digit `d` of the tiles before it, back to one that has published its inclusive
/// prefix (flag `2 * pass + 2`), and publishes its own. A status word holds its flag above
/// `COUNT_BITS` bits of count, written and read as one 64-bit word (no fence between a count and
/// its flag), and a pass's flags are larger than every earlier pass's: `status` is zeroed once
/// per sort, not per pass.
///
/// Launch with one block of `THREADS` threads per tile and dynamic shared memory of `PADDED`
/// keys (`K`) followed, when `vals` is not 0, by `PADDED` `i64`s, and then by `WORDS` `u32`
/// counters (the last `WORDS` of the region); `counter[pass]` zeroed. At most 64 registers
/// (`min_blocks = 4`): 4 blocks of 256 threads fit a multiprocessor (with 8-byte keys and
/// values, 2 by shared memory), which hide the look-back's latency behind each other's work.
/// 4-byte keys alone have `radix_scatter_keys`, which keeps 6 blocks resident.
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 4, instances = [u32, u64])]
pub fn radix_scatter<K: Int>(
    keys_in: &[K],
    keys_out: &mut [K],
    vals_in: &[i64],
    vals_out: &mut [i64],
    vals: u32,
    n: u64,
    shift: u32,
    mode: u32,
    sign: K,
    inf: K,
    hist: &[u64],
    h: u32,
    pass: u32,
    status: &mut [u64],
    counter: &mut [u32],
) {
    // SAFETY: the launch's contract (above) is `scatter_tile`'s.
    unsafe {
        scatter_tile(
            keys_in, keys_out, vals_in, vals_out, vals, n, shift, mode, sign, inf, hist, h, pass, status, counter,
        )
    };
}

/// `radix_scatter` of keys alone, with the same parameters so that the host picks either launch
/// (`vals` is ignored and taken as 0: `unused_in` and `unused_out` are not touched), the same
/// launch with dynamic shared memory of `PADDED` keys and `WORDS` counters, at most 40
/// registers (`min_blocks = 6`): with 4-byte keys (35.6 KiB a block) 6 blocks of 256 threads
/// fit a multiprocessor, against 4 at `radix_scatter`'s 64 registers, to hide the latencies of
/// the barriers and the look-back (on an H200 a pass of 2^26 keys issued 0.56 warp-instructions
/// a cycle per scheduler at 4 blocks, no warp eligible 44% of the cycles). The keys' path
/// compiles to 40 registers without spills; the values' paths, not compiled in here, would
/// not.
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 6, instances = [u32])]
pub fn radix_scatter_keys<K: Int>(
    keys_in: &[K],
    keys_out: &mut [K],
    unused_in: &[i64],
    unused_out: &mut [i64],
    _vals: u32,
    n: u64,
    shift: u32,
    mode: u32,
    sign: K,
    inf: K,
    hist: &[u64],
    h: u32,
    pass: u32,
    status: &mut [u64],
    counter: &mut [u32],
) {
    // SAFETY: the launch's contract (above) is `scatter_tile`'s with `vals` 0.
    unsafe {
        scatter_tile(
            keys_in, keys_out, unused_in, unused_out, 0, n, shift, mode, sign, inf, hist, h, pass, status, counter,
        )
    };
}

/// The body of `radix_scatter` and `radix_scatter_keys`: one block's tile of a pass (the
/// arguments and the launch are `radix_scatter`'s).
///
/// # Safety
///
/// The launch follows `radix_scatter`'s contract (above): every access is unchecked.
#[device(crate = crate, unchecked)]
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_tile<K: Int>(
    keys_in: &[K],
    keys_out: &mut [K],
    vals_in: &[i64],
    vals_out: &mut [i64],
    vals: u32,
    n: u64,
    shift: u32,
    mode: u32,
    sign: K,
    inf: K,
    hist: &[u64],
    h: u32,
    pass: u32,
    status: &mut [u64],
    counter: &mut [u32],
) {
    // The dynamic shared memory, sized by the host: the keys' slots (`PADDED` `K`s), then, when
    // `vals` is not 0, the values' slots (`PADDED` `i64`s; none otherwise, so that a sort of
    // keys alone keeps more blocks resident), then the counters (`WORDS` `u32`s).
    let keys_s = dynamic_shared::<K>();
    // The counters, two `u16` to a word (`ROWS` rows of `CROW` words, below), from `cnt[cb]`,
    // and the same memory as pairs of words (`cnt2[cb2 + i]` is the words `cb + 2 * i` and
    // `cb + 2 * i + 1`, low half first), which the scan reads and writes. A word's low halves sum
    // to at most `TILE` (< 2^16), so a word's two counters are added, scanned and counted in one
    // 32-bit operation without a carry between them.
    let cnt = dynamic_shared::<u32>();
    let cb = cnt.len() - WORDS;
    let cnt2 = dynamic_shared::<u64>();
    let cb2 = cnt2.len() - WORDS / 2;
    let vals_s = dynamic_shared::<i64>();
    let vb = if vals != 0 { cb2 - PADDED } else { 0 };
    let base_s = shared_array::<i64, 32>();
    let warp_tot = shared_array::<u32, WARPS>();
    let tile_s = shared_array::<u32, 1>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    // The shared indices of the keys, with `pad`'s padding worked out once: the slots of the
    // coalesced rows of keys (`pad(j * THREADS + tid) = j * COLUMN + col`) and the thread's own
    // 16 consecutive keys (`pad(tid * ITEMS + j) = own + j` for `j < 16`).
    let col = tid + tid / 32;
    let own = tid * ITEMS + tid / 2;
    // The counter words: thread `t`'s word of row `r` is at `r * CROW + t + 2 * (t / 32)` (from
    // `cb`). The count's and the placing's accesses (`ccol + r * CROW`, whatever the rows `r` of
    // a warp's lanes) hit the bank of the lane's own, so they never conflict (the digit-major
    // `u16` counters before cost about 3 passes of a warp each with random digits). The scan's
    // thread takes the 16 words of threads `16 * (tid % 16) ..` in row `tid / 16` (its 16
    // consecutive words in [row][thread] order) as 8 pairs from `spair`, at constant offsets:
    // the padding keeps each pair 8-byte aligned and each half-warp's 16 pairs on 32 different
    // banks, so an 8-byte access of the warp takes 2 passes for 2 words a lane (a layout without
    // padding that kept the count free of conflicts cost 16 passes a word, an XOR swizzle 2
    // instructions an access).
    let ccol = cb + tid + 2 * (tid / 32);
    let spair = cb2 + ((tid / 16) * CROW + (tid % 16) * 16 + 2 * ((tid % 16) / 2)) / 2;
    if tid == 0 {
        tile_s[0] = atomic_add(counter, pass as usize, 1u32);
    }
    for r in (0..ROWS).unroll() {
        cnt[ccol + r * CROW] = 0;
    }
    sync_threads();
    let tile = tile_s[0] as u64;
    let start = tile * TILE as u64;
    // Keys in this tile (`TILE` but in the last one), in 32 bits.
    let count = if start + (TILE as u64) < n { TILE as u32 } else { (n - start) as u32 };
    // Stage the tile through shared memory (coalesced reads, all in flight before the first
    // store), then take 16 consecutive keys.
    // One global index per thread, the keys at constant offsets from it. The last tile's
    // missing keys are stand-ins whose image is all ones (digit 31 at every shift): ranked after
    // every real key of the tile (the largest digit, the last input positions), they fill its
    // last slots and are never written out, and only the last tile's own count of digit 31
    // counts them, which no tile looks back at. So ranking and placing need no bounds checks.
    let g = start as usize + tid;
    let stand_in = if mode == 1 { !sign } else { K::max_value() };
    // A whole tile (all but the last) loads without bounds checks.
    let whole = count == TILE as u32;
    let mut ks = [stand_in; ITEMS];
    if whole {
        for j in (0..ITEMS).unroll() {
            ks[j] = keys_in[g + j * THREADS];
        }
    } else {
        for j in (0..ITEMS).unroll() {
            if ((j * THREADS + tid) as u32) < count {
                ks[j] = keys_in[g + j * THREADS];
            }
        }
    }
    // The keys stored before the values are read, so that the registers of both are never live
    // together (64 of them with 8-byte keys: ptxas spilled them).
    for j in (0..ITEMS).unroll() {
        keys_s[j * COLUMN + col] = ks[j];
    }
    if vals == 2 {
        let mut vs = [0i64; ITEMS];
        if whole {
            for j in (0..ITEMS).unroll() {
                vs[j] = vals_in[g + j * THREADS];
            }
        } else {
            for j in (0..ITEMS).unroll() {
                if ((j * THREADS + tid) as u32) < count {
                    vs[j] = vals_in[g + j * THREADS];
                }
            }
        }
        for j in (0..ITEMS).unroll() {
            vals_s[vb + j * COLUMN + col] = vs[j];
        }
    }
    sync_threads();
    // Count the digits of the thread's keys, and keep each key's rank among the thread's keys of
    // its digit (the half of its counter word before its increment, below 16: eight of 4 bits to
    // a word) and its digit (six of 5 bits to a word), so that the placing needs only a read of
    // each key's counter after the scan, not a read and a write per key in a chain (whole
    // counter words per key took 16 registers across the scan, which `radix_scatter_keys`'s 40
    // do not have). The keys are not kept:
    // they are read again before the placing, so that the scan has its registers without spills
    // (with the keys kept too, ptxas spilled about 30 registers at the 64-register cap).
    let mut rk = [0u32; 2];
    let mut dp = [0u32; 3];
    for j in (0..ITEMS).unroll() {
        let d = digit_of(keys_s[own + j], shift, mode, sign, inf);
        dp[j / 6] |= d << ((j % 6) * 5);
        let s = ccol + ((d % 16) * CROW as u32) as usize;
        let c = cnt[s];
        cnt[s] = c + (1u32 << (d & 16));
        rk[j / 8] |= ((c >> (d & 16)) & 15) << ((j % 8) * 4);
    }
    sync_threads();
    // Exclusive scan of the counter words in [row][thread] order, both halves at once: thread t
    // takes the 16 words from t * 16, all read before any is written (a read after a write to a
    // slot the compiler cannot tell apart waits for it). The low halves then hold the first
    // slots of digits 0-15 in [digit][thread] order; the high halves those of digits 16-31
    // without the keys of digits 0-15 before them, the low half of the tile's total, added.
    let mut ws = [0u32; SPAN];
    for i in (0..PAIRS).unroll() {
        let w2 = cnt2[spair + i];
        ws[2 * i] = w2 as u32;
        ws[2 * i + 1] = (w2 >> 32) as u32;
    }
    let mut sum = 0u32;
    for q in (0..SPAN).unroll() {
        sum += ws[q];
    }
    let incl_w = warp_inclusive_sum(sum);
    if lane == 31 {
        warp_tot[warp] = incl_w;
    }
    sync_threads();
    let mut run = incl_w - sum;
    let mut total = 0u32;
    for w in (0..WARPS).unroll() {
        let t = warp_tot[w];
        if w < warp {
            run += t;
        }
        total += t;
    }
    run += (total & 0xffff) << 16;
    for i in (0..PAIRS).unroll() {
        let lo = run;
        run += ws[2 * i];
        cnt2[spair + i] = lo as u64 | ((run as u64) << 32);
        run += ws[2 * i + 1];
    }
    // The thread's keys again, read here, before the barrier after which threads place keys
    // over them (not kept from before the scan: their registers would be live across it).
    for j in (0..ITEMS).unroll() {
        ks[j] = keys_s[own + j];
    }
    sync_threads();
    // Lane `d` of the first warp: digit `d`'s count in the tile (`first_and_count`), published
    // at once (later tiles may be waiting for it); its look-back over the tiles before comes
    // after its keys are placed (below), when the registers of the keys are free.
    let d = lane;
    let agg_flag = (2 * pass + 1) as u64;
    let inc_flag = agg_flag + 1;
    if warp == 0 {
        // SAFETY: the counters end at `cb + WORDS` (the launch's contract, above).
        let (_, mine) = unsafe { first_and_count(cnt, cb, d, count) };
        let flag = if tile == 0 { inc_flag } else { agg_flag };
        atomic_exch(status, tile as usize * BUCKETS + d, (flag << COUNT_BITS) | mine);
    }
    // Place the keys sorted by digit, each thread's in order after the threads before it: a
    // key's slot is its digit's first slot of the thread plus its rank among the thread's keys
    // of that digit (`slot_of`). The counters (`cnt`) and
    // the slots (`keys_s`, `vals_s`) are different shared arrays: the compiler may read every
    // counter before the first write.
    for j in (0..ITEMS).unroll() {
        // SAFETY: thread `tid`'s counter words end at `ccol + 15 * CROW < cb + WORDS`.
        let slot = unsafe { slot_of(cnt, ccol, dp, rk, j) };
        keys_s[pad(slot as usize)] = ks[j];
        if vals == 1 {
            vals_s[vb + pad(slot as usize)] = (start + (tid * ITEMS + j) as u64) as i64;
        }
    }
    if vals == 2 {
        // The given values (argsort's later passes) follow their keys after a barrier of their
        // own: read once the keys are placed (the keys' registers free) and written once every
        // thread has read its own, so that their 32 registers are never live together with the
        // keys' and the counters' (ptxas spilled them at the 64-register cap).
        let mut vs = [0i64; ITEMS];
        for j in (0..ITEMS).unroll() {
            vs[j] = vals_s[vb + own + j];
        }
        sync_threads();
        for j in (0..ITEMS).unroll() {
            // SAFETY: as above.
            let slot = unsafe { slot_of(cnt, ccol, dp, rk, j) };
            vals_s[vb + pad(slot as usize)] = vs[j];
        }
    }
    // The first warp's look-back: lane `d` adds the keys of digit `d` in the tiles before this
    // one and publishes this tile's inclusive count (tile 0 has published it above); the other
    // warps wait for it at the barrier below, as only the writes need the offsets.
    if warp == 0 {
        // The tile, its first slot and count of digit `d` again (from shared memory, which no
        // one writes again before the barrier below), not kept across the placing: their
        // registers live across it cost the keys' registers spills at 40.
        let tile = tile_s[0] as u64;
        let start = tile * TILE as u64;
        let count = if start + (TILE as u64) < n { TILE as u32 } else { (n - start) as u32 };
        // SAFETY: as above.
        let (first, mine) = unsafe { first_and_count(cnt, cb, d, count) };
        let word = tile as usize * BUCKETS + d;
        let mut before = 0u64;
        if tile != 0 {
            // `LOOK` tiles at a time from `p` down (their loads in flight together: a launch's
            // first tiles all look back at once, and a walk of one tile per round trip would
            // take tens of them), their counts added in order up to the first inclusive prefix,
            // or up to the first tile that has published nothing yet (read again from there).
            // Tile 0 publishes its inclusive prefix at once, so no walk goes past it, and the
            // words read beyond it (none, as 0) are never used.
            let mut p = tile - 1;
            loop {
                let mut ws = [0u64; LOOK];
                for i in (0..LOOK).unroll() {
                    if p >= i as u64 {
                        ws[i] = atomic_load(status, (p - i as u64) as usize * BUCKETS + d);
                    }
                }
                // 0: going on, 1: an inclusive prefix added, 2: a tile not yet published.
                let mut state = 0u32;
                let mut taken = 0u64;
                for i in (0..LOOK).unroll() {
                    if state == 0 {
                        let flag = ws[i] >> COUNT_BITS;
                        if flag < agg_flag {
                            state = 2;
                        } else {
                            before += ws[i] & ((1u64 << COUNT_BITS) - 1);
                            taken += 1;
                            if flag == inc_flag {
                                state = 1;
                            }
                        }
                    }
                }
                if state == 1 {
                    break;
                }
                p -= taken;
            }
            atomic_exch(status, word, (inc_flag << COUNT_BITS) | (before + mine));
        }
        // The keys of the smaller digits: an exclusive scan of the digits' totals.
        let digit_start = warp_exclusive_sum(hist[h as usize * BUCKETS + d]);
        base_s[d] = (digit_start + before) as i64 - first as i64;
    }
    sync_threads();
    // The tile and its bounds again, read from shared memory (not kept across the placing and
    // the look-back, as `first_and_count` above).
    let tile = tile_s[0] as u64;
    let start = tile * TILE as u64;
    let count = if start + (TILE as u64) < n { TILE as u32 } else { (n - start) as u32 };
    let whole = count == TILE as u32;
    // Each sorted key's digit is computed again from the key (a few ALU instructions, which have
    // room), not stored per slot: a `u8` per slot cost a store with bank conflicts (random
    // slots) and a load per key in shared memory, the scatter's limit.
    if whole {
        // A whole tile (all but the last) without checks, with values or without.
        for j in (0..ITEMS).unroll() {
            let k = j * THREADS + tid;
            let key = keys_s[j * COLUMN + col];
            let d = digit_of(key, shift, mode, sign, inf) as usize;
            let o = (base_s[d] + k as i64) as usize;
            keys_out[o] = key;
            if vals != 0 {
                vals_out[o] = vals_s[vb + j * COLUMN + col];
            }
        }
    } else {
        for j in (0..ITEMS).unroll() {
            let k = j * THREADS + tid;
            if (k as u32) < count {
                let key = keys_s[j * COLUMN + col];
                let d = digit_of(key, shift, mode, sign, inf) as usize;
                let o = (base_s[d] + k as i64) as usize;
                keys_out[o] = key;
                if vals != 0 {
                    vals_out[o] = vals_s[vb + j * COLUMN + col];
                }
            }
        }
    }
}

/// `out[i] = p[i] / n`: the row of each flat index in rows of `n` (the key of the second sort of
/// a sort along an axis), for the `len` elements. Any grid (a grid-stride loop).
#[rawkernel(crate = crate)]
pub fn row_keys(p: &[i64], out: &mut [u64], n: i64, len: u64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < len {
        out[i as usize] = (p[i as usize] / n) as u64;
        i += step;
    }
}

/// `out[i] = p[i] % n`: the column of each flat index in rows of `n` (`argsort`'s result along
/// an axis), for the `len` elements. Any grid (a grid-stride loop).
#[rawkernel(crate = crate)]
pub fn columns(p: &[i64], out: &mut [i64], n: i64, len: u64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < len {
        out[i as usize] = p[i as usize] % n;
        i += step;
    }
}

/// The unique keys of the sorted key bits `s` (`n` keys): `c` is the inclusive `cumsum` of
/// `unique_marks`, and the first key of each run of equal keys goes to `out[c[i] - 1]`.
#[rawkernel(crate = crate, instances = [u32, u64])]
pub fn unique_compact<K: Int>(s: &[K], c: &[i64], out: &mut [K], n: u64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < n {
        let k = i as usize;
        if k == 0 || c[k] != c[k - 1] {
            out[(c[k] - 1) as usize] = s[k];
        }
        i += step;
    }
}

/// 1 where the sorted key bits `s` (`n` keys) start a run of keys NumPy calls equal (the same
/// `order_bits`: -0.0 and 0.0 equal, every NaN equal), else 0.
#[rawkernel(crate = crate, instances = [u32, u64])]
pub fn unique_marks<K: Int>(s: &[K], marks: &mut [i64], n: u64, mode: u32, sign: K, inf: K) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < n {
        let k = i as usize;
        let first = k == 0 || order_bits(s[k], mode, sign, inf) != order_bits(s[k - 1], mode, sign, inf);
        marks[k] = if first { 1 } else { 0 };
        i += step;
    }
}

/// `out[i] = src[p[i]]`: the keys in the order of the indices `p`, for the `len` elements. Any
/// grid (a grid-stride loop).
#[rawkernel(crate = crate, instances = [u32, u64])]
pub fn gather_keys<K: Int>(p: &[i64], src: &[K], out: &mut [K], len: u64) {
    let mut i = grid_1d() as u64;
    let step = grid_size_1d() as u64;
    while i < len {
        out[i as usize] = src[p[i as usize] as usize];
        i += step;
    }
}
