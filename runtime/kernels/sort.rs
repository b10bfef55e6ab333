//! The built-in kernels of the stable LSD radix sort behind `sort`, `argsort` and `unique`
//! (runtime/src/sort.rs), written with cuprum's own macros (`crate = crate`) and precompiled by
//! the runtime's build.rs.
//!
//! The kernels move keys as their raw bits (`u32` for 4-byte dtypes, `u64` for 8-byte ones) and
//! compute each key's order-preserving image only to take its digit (`order_bits`): the sorted
//! array is the input's own bits in a new order, and no pass converts keys back. A pass sorts
//! by one digit of 5 bits (32 buckets), stably, in three launches:
//!
//! 1. `radix_count`: each tile of 2048 keys (128 threads of 16) counts its digits and writes the
//!    counts digit-major (`hist[digit * tiles + tile]`);
//! 2. the runtime's `cumsum` of `hist` (inclusive): minus the tile's own count, the position of the
//!    tile's first key of each digit in the output;
//! 3. `radix_scatter`: each tile ranks its keys stably (each thread holds 16 consecutive keys and
//!    counts its digits in a column of shared counters; an exclusive scan of the counters in
//!    [digit][thread] order gives each thread its first slot per digit), places them sorted by
//!    digit in shared memory, and writes them out (and their `i64` values, for `argsort`) in
//!    order, so that each digit's keys of a tile are one contiguous run of the output.
//!
//! The tile's shared memory (2048 keys, 4096 `u16` counters, and 2048 values in dynamic shared
//! memory when there are values: 42 KiB for 8-byte keys with values) stays within the 48 KiB a
//! block may have without opting in.

use crate::lang::prelude::*;
use cuprum_macros::{device, rawkernel};

/// Threads per block of the sort kernels.
const THREADS: usize = 128;
/// Keys per thread.
const ITEMS: usize = 16;
/// Keys per tile (`THREADS * ITEMS`).
const TILE: usize = 2048;
/// Buckets per pass (digits of 5 bits).
const BUCKETS: usize = 32;
/// Counters a thread scans (`BUCKETS * THREADS / THREADS`).
const SPAN: usize = 32;
/// `TILE` plus one padding slot per 32 (shared arrays indexed through `pad`).
const PADDED: usize = 2112;
/// `BUCKETS * THREADS` counters plus one padding slot per 32.
const PADDED_COUNTERS: usize = 4224;

/// The shared-array slot of logical index `k`: one padding slot after every 32, so that threads
/// that read 16 consecutive elements each hit different banks.
#[device(crate = crate)]
fn pad(k: usize) -> usize {
    // In 32 bits (every shared index is below 2^13): 64-bit adds cost a carry each.
    let k = k as u32;
    (k + k / 32) as usize
}

/// The order-preserving image of the key bits `b`: with `mode` 0 the bits themselves (unsigned
/// integers), 1 the sign bit flipped (two's complement integers), 2 an IEEE float's total order
/// with NumPy's ties: negative numbers with every bit flipped, positive ones with the sign bit
/// set, both zeros as +0 (NumPy's stable sort keeps -0.0 and 0.0 in input order), and every NaN
/// the largest image (after +inf, in input order). `sign` is the sign bit of the type and `inf`
/// the bits of +inf.
#[device(crate = crate)]
fn order_bits<K: Int>(b: K, mode: u32, sign: K, inf: K) -> K {
    // Without branches on the key (selects): a data-dependent branch per key cost the count and
    // scatter kernels a divergence point each.
    let neg = (b & sign) != K::zero();
    let flip = if mode == 0 {
        K::zero()
    } else if mode == 2 && neg {
        !K::zero()
    } else {
        sign
    };
    let image = b ^ flip;
    if mode != 2 {
        image
    } else {
        let mag = b & !sign;
        let image = if mag == K::zero() { sign } else { image };
        if mag > inf { K::max_value() } else { image }
    }
}

/// The digit (0 to 31) of the key bits `b` at `shift`.
#[device(crate = crate)]
fn digit_of<K: Int>(b: K, shift: u32, mode: u32, sign: K, inf: K) -> u32 {
    (order_bits(b, mode, sign, inf) >> shift).low_u32() & 31
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

/// Counts the digits at `shift` of each tile of `TILE` keys (`n` keys, `tiles` tiles) into
/// `hist[digit * tiles + tile]`. Launch with one block of `THREADS` threads per tile.
#[rawkernel(crate = crate, unchecked, instances = [u32, u64])]
pub fn radix_count<K: Int>(keys: &[K], n: u64, shift: u32, mode: u32, sign: K, inf: K, tiles: u64, hist: &mut [i64]) {
    let cnt = shared_array::<u32, PADDED_COUNTERS>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    let tile = block_idx().x as u64;
    let start = tile * TILE as u64;
    for d in (0..BUCKETS).unroll() {
        cnt[pad(d * THREADS + tid)] = 0;
    }
    // All loads first (in flight together; a shared-memory update between two loads would make
    // each wait for the last), then each thread counts into its own column: no atomics, no
    // conflicts.
    let mut ks = [K::zero(); ITEMS];
    for j in (0..ITEMS).unroll() {
        let i = start + (j * THREADS + tid) as u64;
        if i < n {
            ks[j] = keys[i as usize];
        }
    }
    for j in (0..ITEMS).unroll() {
        let i = start + (j * THREADS + tid) as u64;
        if i < n {
            let d = digit_of(ks[j], shift, mode, sign, inf) as usize;
            cnt[pad(d * THREADS + tid)] += 1;
        }
    }
    sync_threads();
    // Warp `w` sums the columns of digits 8w to 8w + 7.
    for q in (0..8usize).unroll() {
        let d = warp * 8 + q;
        let mut v = 0u32;
        for c in (0..4usize).unroll() {
            v += cnt[pad(d * THREADS + c * 32 + lane)];
        }
        let total = warp_reduce_sum(v);
        if lane == 0 {
            hist[(d as u64 * tiles + tile) as usize] = total as i64;
        }
    }
}

/// One stable pass of the radix sort: the keys of `keys_in` (`n` keys, `tiles` tiles of `TILE`)
/// go to `keys_out` in the order of their digit at `shift`, keys of equal digits in input order;
/// `incl` is the inclusive scan of `radix_count`'s `hist`, which this reads too. Values: with
/// `vals` 0 none (the value arrays are not touched), 1 each key's input index (`vals_in` is not
/// read), 2 `vals_in`; they move with their keys to `vals_out`. Launch with one block of
/// `THREADS` threads per tile and, when `vals` is not 0, `PADDED` `i64`s of dynamic shared
/// memory.
#[rawkernel(crate = crate, unchecked, max_threads = 128, min_blocks = 6, instances = [u32, u64])]
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
    tiles: u64,
    hist: &[i64],
    incl: &[i64],
) {
    let cnt = shared_array::<u16, PADDED_COUNTERS>();
    let keys_s = shared_array::<K, PADDED>();
    // The values' slots: `PADDED` of them in dynamic shared memory when `vals` is not 0 (none
    // otherwise, so that a sort of keys alone keeps more blocks resident).
    let vals_s = dynamic_shared::<i64>();
    let base_s = shared_array::<i64, 32>();
    let warp_tot = shared_array::<u32, 4>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    let tile = block_idx().x as u64;
    let start = tile * TILE as u64;
    for d in (0..BUCKETS).unroll() {
        cnt[pad(d * THREADS + tid)] = 0;
    }
    // Stage the tile through shared memory (coalesced reads, all in flight before the first
    // store), then take 16 consecutive keys.
    let mut ks = [K::zero(); ITEMS];
    for j in (0..ITEMS).unroll() {
        let i = start + (j * THREADS + tid) as u64;
        if i < n {
            ks[j] = keys_in[i as usize];
        }
    }
    if vals == 2 {
        let mut vs = [0i64; ITEMS];
        for j in (0..ITEMS).unroll() {
            let i = start + (j * THREADS + tid) as u64;
            if i < n {
                vs[j] = vals_in[i as usize];
            }
        }
        for j in (0..ITEMS).unroll() {
            vals_s[pad(j * THREADS + tid)] = vs[j];
        }
    }
    for j in (0..ITEMS).unroll() {
        keys_s[pad(j * THREADS + tid)] = ks[j];
    }
    sync_threads();
    let mut ds = [BUCKETS as u32; ITEMS];
    for j in (0..ITEMS).unroll() {
        let k = tid * ITEMS + j;
        let i = start + k as u64;
        if i < n {
            ks[j] = keys_s[pad(k)];
            ds[j] = digit_of(ks[j], shift, mode, sign, inf);
            cnt[pad(ds[j] as usize * THREADS + tid)] += 1;
        }
    }
    // The values of this thread's keys (argsort's later passes): read before any thread places
    // a value over them.
    let mut vs = [0i64; ITEMS];
    if vals == 2 {
        for j in (0..ITEMS).unroll() {
            vs[j] = vals_s[pad(tid * ITEMS + j)];
        }
    }
    sync_threads();
    // Exclusive scan of the counters in [digit][thread] order: thread t takes the 32 counters
    // from t * 32.
    let mut sum = 0u32;
    for q in (0..SPAN).unroll() {
        sum += cnt[pad(tid * SPAN + q)] as u32;
    }
    let incl_w = warp_inclusive_sum(sum);
    if lane == 31 {
        warp_tot[warp] = incl_w;
    }
    sync_threads();
    let mut run = incl_w - sum;
    let mut total = 0u32;
    for w in (0..4usize).unroll() {
        if w < warp {
            run += warp_tot[w];
        }
        total += warp_tot[w];
    }
    for q in (0..SPAN).unroll() {
        let s = pad(tid * SPAN + q);
        let c = cnt[s] as u32;
        cnt[s] = run as u16;
        run += c;
    }
    sync_threads();
    // Each digit's output base: its global first position minus its first slot in the tile.
    if tid < BUCKETS {
        let first = cnt[pad(tid * THREADS)];
        let h = (tid as u64 * tiles + tile) as usize;
        base_s[tid] = incl[h] - hist[h] - first as i64;
    }
    sync_threads();
    // Place the keys sorted by digit, each thread's in order after the threads before it.
    for j in (0..ITEMS).unroll() {
        if (ds[j] as usize) < BUCKETS {
            let s = pad(ds[j] as usize * THREADS + tid);
            let r = cnt[s] as u32;
            cnt[s] = (r + 1) as u16;
            keys_s[pad(r as usize)] = ks[j];
            if vals == 2 {
                vals_s[pad(r as usize)] = vs[j];
            } else if vals == 1 {
                vals_s[pad(r as usize)] = (start + (tid * ITEMS + j) as u64) as i64;
            }
        }
    }
    sync_threads();
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        if (k as u32) < total {
            let key = keys_s[pad(k)];
            let d = digit_of(key, shift, mode, sign, inf) as usize;
            let o = (base_s[d] + k as i64) as usize;
            keys_out[o] = key;
            if vals != 0 {
                vals_out[o] = vals_s[pad(k)];
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
