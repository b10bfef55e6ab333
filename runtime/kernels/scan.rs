//! The built-in scan kernel behind `cumsum` and `cumprod` (runtime/src/scan.rs): a single-pass
//! scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with
//! Decoupled Look-back", 2016), written with cuprum's own macros (`crate = crate`) and
//! precompiled by the runtime's build.rs.
//!
//! The input is `rows` contiguous rows of `row_len` elements, cut into tiles of 8192 (256 threads
//! of 32 elements, staged in dynamic shared memory: 33 KiB for 4-byte types, 66 KiB for 8-byte
//! ones). Each tile pays one look-back, so larger tiles pay fewer: on an H200 a 2^28 f32 scan ran
//! at 0.37 of the copy ceiling with tiles of 2048, 0.54 with 4096, 0.67 with 8192, and no better
//! with 12288 or 16384. Each block takes the next tile from an atomic counter (so that a tile's
//! predecessors belong to blocks that started earlier and are running: no block waits for one
//! that is not resident), scans it in shared memory, publishes its total (flag 1), then looks back
//! over its predecessors in the row, 32 at a time with the first warp, adding their totals until
//! it meets one that has published its inclusive prefix (flag 2), publishes its own (flag 2), and
//! writes its elements: each element is read once and written once (8 bytes per f32 element,
//! what a copy moves). A value is published before its flag, with a fence between, and read with
//! an atomic add of -0 (the identity of every type's `+`, negative zero included) after its flag:
//! both go through the L2 cache, which every multiprocessor sees alike. (Polling with
//! `atomic_load`, a volatile load, instead of these read-modify-writes measured slower on an H200:
//! 0.498 of copy against 0.545; each poll returns sooner, so the waiting warps poll more often and
//! the L2 cache, 69% busy, serves more polls.)
//!
//! Sums start from -0 (so that a row of negative zeros sums to -0, as a sequential sum does) and
//! products from 1. The order in which floats are combined differs from a sequential loop
//! (within a thread, then a warp, a block, and across tiles), so float results differ from
//! NumPy's in the last bits, as CuPy's do.
//!
//! Element types: those with atomic adds (i32, u32, i64, u64, f32, f64). Precompiled instances:
//! f32, f64 and i64 (NumPy's defaults); i32, u32 and u64 are compiled by NVRTC at first use.

use crate::lang::prelude::*;
use cuprum_macros::{device, rawkernel};

/// Threads per block.
pub const THREADS: usize = 256;
/// Elements per thread.
const ITEMS: usize = 32;
/// Elements per tile (`THREADS * ITEMS`).
pub const TILE: usize = THREADS * ITEMS;
/// Warps per block.
const WARPS: usize = THREADS / 32;
/// `TILE` plus one padding slot per 32: the tile's elements of dynamic shared memory.
pub const PADDED: usize = TILE + TILE / 32;
/// `THREADS` plus one padding slot per 32: the stride of a row of `THREADS` elements in the
/// padded shared array.
const COLUMN: usize = THREADS + THREADS / 32;

/// `a + b`, or `a * b` when `prod` is not 0.
#[device(crate = crate)]
fn combine<T: Number>(a: T, b: T, prod: u32) -> T {
    if prod != 0 { a * b } else { a + b }
}

/// `v` combined over the 32 lanes of the warp (every lane gets the result).
#[device(crate = crate)]
fn warp_combine<T: Number>(v: T, prod: u32) -> T {
    let mut r = v;
    let mut off = 16u32;
    while off > 0 {
        let o = shfl_xor_sync(0xffff_ffff, r, off);
        r = combine(r, o, prod);
        off /= 2;
    }
    r
}

/// Warp 0's look-back with packed status words (4-byte `T`): tile `t` publishes its total with
/// flag 1, adds the values of the tiles before it (from `first`, its row's first tile), 32 at a
/// time, back to one that has published its inclusive prefix (flag 2), publishes its own with
/// flag 2, and returns the sum of the tiles before it. A word is written at once by one atomic
/// and read at once by one volatile load, so a value and its flag are never seen apart: no fence.
/// All 32 lanes call it; lane 0 publishes.
///
/// # Safety
///
/// `status` holds at least `t + 1` words.
#[device(crate = crate, unchecked)]
unsafe fn look_back_packed<T: Real>(status: &mut [u64], t: u64, first: u64, total: T, prod: u32, ident: T) -> T {
    let lane = lane_id() as u64;
    let mut prefix = ident;
    if t == first {
        if lane == 0 {
            atomic_exch(status, t as usize, (2u64 << 32) | total.to_bits_u64());
        }
    } else {
        if lane == 0 {
            atomic_exch(status, t as usize, (1u64 << 32) | total.to_bits_u64());
        }
        // Lane `l` reads tile `p - l`; tiles before `first` count as published inclusive
        // prefixes of the identity.
        let mut p = t as i64 - 1;
        loop {
            let q = p - lane as i64;
            let word = if q >= first as i64 { atomic_load(status, q as usize) } else { (2u64 << 32) | ident.to_bits_u64() };
            let flag = (word >> 32) as u32;
            // The first lane (the nearest tile) with an inclusive prefix; every lane up to it
            // must have published (flag 1 or 2), else all read again.
            let stop = warp_reduce_min(if flag == 2 { lane as u32 } else { 32u32 });
            let waiting = warp_reduce_max(if flag == 0 && lane as u32 <= stop { 1u32 } else { 0u32 });
            if waiting != 0 {
                continue;
            }
            let v = if lane as u32 <= stop { T::from_bits_u64(word & 0xffff_ffff) } else { ident };
            prefix = combine(prefix, warp_combine(v, prod), prod);
            if stop < 32 {
                break;
            }
            p -= 32;
        }
        if lane == 0 {
            atomic_exch(status, t as usize, (2u64 << 32) | combine(prefix, total, prod).to_bits_u64());
        }
    }
    prefix
}

/// Warp 0's look-back with split status (8-byte `T`, whose value and flag do not fit one
/// 64-bit word): as [`look_back_packed`], but a value goes to `agg` (flag 1) or `inc` (flag 2)
/// before its flag, with a fence between, and is read after its flag with an atomic add of -0
/// (the identity of every type's `+`, negative zero included), both through the L2 cache.
///
/// # Safety
///
/// `status`, `agg` and `inc` hold at least `t + 1` elements.
#[device(crate = crate, unchecked)]
unsafe fn look_back_split<T: Real>(status: &mut [u64], agg: &mut [T], inc: &mut [T], t: u64, first: u64, total: T, prod: u32, ident: T) -> T {
    let lane = lane_id() as u64;
    let mut prefix = ident;
    if t == first {
        if lane == 0 {
            inc[t as usize] = total;
            thread_fence();
            atomic_exch(status, t as usize, 2u64);
        }
    } else {
        if lane == 0 {
            agg[t as usize] = total;
            thread_fence();
            atomic_exch(status, t as usize, 1u64);
        }
        let mut p = t as i64 - 1;
        loop {
            let q = p - lane as i64;
            let flag = if q >= first as i64 { atomic_or(status, q as usize, 0u64) } else { 2u64 };
            let stop = warp_reduce_min(if flag == 2 { lane as u32 } else { 32u32 });
            let waiting = warp_reduce_max(if flag == 0 && lane as u32 <= stop { 1u32 } else { 0u32 });
            if waiting != 0 {
                continue;
            }
            thread_fence();
            let mut v = ident;
            if q >= first as i64 && lane as u32 <= stop {
                v = if flag == 2 { atomic_add(inc, q as usize, T::from_f64(-0.0)) } else { atomic_add(agg, q as usize, T::from_f64(-0.0)) };
            }
            prefix = combine(prefix, warp_combine(v, prod), prod);
            if stop < 32 {
                break;
            }
            p -= 32;
        }
        if lane == 0 {
            inc[t as usize] = combine(prefix, total, prod);
            thread_fence();
            atomic_exch(status, t as usize, 2u64);
        }
    }
    prefix
}

/// The inclusive scan (`+`, or `*` when `prod` is not 0) of each row of `x` (rows of `row_len`
/// contiguous elements, `tiles_per_row` tiles of `TILE` each) into `y`, for 4-byte types: a
/// tile's status word holds its flag above the 32 bits of its value. Launch with 256 threads and
/// one block per tile, with `PADDED` elements of dynamic shared memory; `status` (one per tile)
/// and `counter` zeroed. Five blocks of 256 threads per multiprocessor (48 registers): on an
/// H200 a 2^28 `f32` scan ran at 0.84 of the copy ceiling with four and 0.90 with five.
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 5, instances = [f32])]
pub fn scan_rows_4<T: Real>(
    x: &[T],
    y: &mut [T],
    row_len: u64,
    tiles_per_row: u64,
    prod: u32,
    status: &mut [u64],
    unused_agg: &mut [T],
    unused_inc: &mut [T],
    counter: &mut [u32],
) {
    // SAFETY: the launch's contract (above) is `scan_tile`'s with `packed` 1, which does not
    // touch `agg` and `inc` (they may be empty).
    unsafe { scan_tile(x, y, row_len, tiles_per_row, prod, 1, status, unused_agg, unused_inc, counter) };
}

/// As [`scan_rows_4`], for 8-byte types, whose value and flag do not fit one status word:
/// `status` holds the flags and `agg` and `inc` (one per tile, no initial value needed) the
/// values. Three blocks per multiprocessor (66 KiB of shared memory each).
#[rawkernel(crate = crate, unchecked, max_threads = 256, min_blocks = 3, instances = [f64, i64])]
pub fn scan_rows_8<T: Real>(
    x: &[T],
    y: &mut [T],
    row_len: u64,
    tiles_per_row: u64,
    prod: u32,
    status: &mut [u64],
    agg: &mut [T],
    inc: &mut [T],
    counter: &mut [u32],
) {
    // SAFETY: the launch's contract (above) is `scan_tile`'s, with `packed` 0.
    unsafe { scan_tile(x, y, row_len, tiles_per_row, prod, 0, status, agg, inc, counter) };
}

/// One block's tile of the scan: the block takes the next tile from `counter[0]`, scans it in
/// shared memory, finds the combination of the tiles before it in its row by a look-back
/// (`look_back_packed` when `packed` is not 0, else `look_back_split`), and writes its elements.
///
/// # Safety
///
/// Launched with 256 threads and one block per tile (`rows * tiles_per_row` blocks for `x` and
/// `y` of `rows * row_len` elements), `PADDED` elements of dynamic shared memory, one `status`
/// word per tile (zeroed) and, when `packed` is 0, one `agg` and `inc` element per tile.
#[device(crate = crate, unchecked)]
unsafe fn scan_tile<T: Real>(
    x: &[T],
    y: &mut [T],
    row_len: u64,
    tiles_per_row: u64,
    prod: u32,
    packed: u32,
    status: &mut [u64],
    agg: &mut [T],
    inc: &mut [T],
    counter: &mut [u32],
) {
    let tile_s = shared_array::<u32, 1>();
    // `PADDED` elements (the launch's dynamic shared memory).
    let data = dynamic_shared::<T>();
    let warp_tot = shared_array::<T, WARPS>();
    let prefix_s = shared_array::<T, 1>();
    let tid = thread_idx().x as usize;
    let lane = tid % 32;
    let warp = tid / 32;
    // The shared slots with the padding of one per 32 worked out once: element `j * THREADS +
    // tid` of the coalesced rows is at `j * COLUMN + col`, and the thread's own 32 consecutive
    // elements `tid * 32 + j` at `own + j` (`ITEMS` is 32).
    let col = tid + tid / 32;
    let own = tid * (ITEMS + 1);
    if tid == 0 {
        tile_s[0] = atomic_add(counter, 0, 1u32);
    }
    sync_threads();
    let t = tile_s[0] as u64;
    let row = t / tiles_per_row;
    let tr = t % tiles_per_row;
    let start = row * row_len + tr * TILE as u64;
    let row_end = (row + 1) * row_len;
    let count = if start + (TILE as u64) < row_end { TILE as u64 } else { row_end - start };
    let ident = if prod != 0 { T::from_f64(1.0) } else { T::from_f64(-0.0) };
    // All 32 loads first (coalesced, independent: they are in flight together), then the stores
    // to shared memory: a store between two loads would make each load wait for the last one.
    let mut v = [ident; ITEMS];
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        if (k as u64) < count {
            v[j] = x[start as usize + k];
        }
    }
    for j in (0..ITEMS).unroll() {
        data[j * COLUMN + col] = v[j];
    }
    sync_threads();
    // The thread's 32 consecutive elements: all loaded, scanned in registers, all stored. (A
    // loop that loads, adds and stores each element in turn runs as a chain of shared-memory
    // latencies: the compiler cannot move a load above a store that might alias it. Batched,
    // the scan ran 25% faster on an H200.)
    for j in (0..ITEMS).unroll() {
        v[j] = data[own + j];
    }
    let mut acc = ident;
    for j in (0..ITEMS).unroll() {
        acc = combine(acc, v[j], prod);
        v[j] = acc;
    }
    for j in (0..ITEMS).unroll() {
        data[own + j] = v[j];
    }
    let mut incl = acc;
    let mut off = 1u32;
    while off < 32 {
        let o = shfl_up_sync(0xffff_ffff, incl, off);
        if lane as u32 >= off {
            incl = combine(o, incl, prod);
        }
        off *= 2;
    }
    let up = shfl_up_sync(0xffff_ffff, incl, 1);
    let excl_in_warp = if lane == 0 { ident } else { up };
    if lane == 31 {
        warp_tot[warp] = incl;
    }
    sync_threads();
    let mut before = ident;
    let mut total = ident;
    let mut w = 0usize;
    while w < WARPS {
        if w < warp {
            before = combine(before, warp_tot[w], prod);
        }
        total = combine(total, warp_tot[w], prod);
        w += 1;
    }
    if warp == 0 {
        let prefix = if packed != 0 {
            // SAFETY: `status` holds one word per tile and `t` is a tile (the launch's contract).
            unsafe { look_back_packed(status, t, row * tiles_per_row, total, prod, ident) }
        } else {
            // SAFETY: `status`, `agg` and `inc` hold one entry per tile and `t` is a tile.
            unsafe { look_back_split(status, agg, inc, t, row * tiles_per_row, total, prod, ident) }
        };
        if lane == 0 {
            prefix_s[0] = prefix;
        }
    }
    sync_threads();
    let mine = combine(combine(prefix_s[0], before, prod), excl_in_warp, prod);
    for j in (0..ITEMS).unroll() {
        v[j] = data[own + j];
    }
    for j in (0..ITEMS).unroll() {
        data[own + j] = combine(mine, v[j], prod);
    }
    sync_threads();
    for j in (0..ITEMS).unroll() {
        let k = j * THREADS + tid;
        if (k as u64) < count {
            y[start as usize + k] = data[j * COLUMN + col];
        }
    }
}
