//! Raw kernels exercised on the GPU by `gpu_rawkernel_launch.rs`, ported from the behaviour
//! cupyx.jit's own tests check: thread indexing, loops, shared memory, warp intrinsics, atomics,
//! device functions, scalar arguments, constants, early return, local arrays.

#![allow(dead_code)]

use cuprum::prelude::*;

/// `grid_1d()` and `grid_size_1d()` of every thread.
#[rawkernel]
pub fn index_1d(idx: &mut [u32], size: &mut [u32]) {
    let i = grid_1d();
    idx[i as usize] = i;
    size[i as usize] = grid_size_1d();
}

/// `grid_2d()` / `grid_size_2d()`, written at the flat position of each thread.
#[rawkernel]
pub fn index_2d(out: &mut [u32], width: u32) {
    let (x, y) = grid_2d();
    let (sx, sy) = grid_size_2d();
    let k = (y * width + x) as usize;
    out[3 * k] = x;
    out[3 * k + 1] = y;
    out[3 * k + 2] = sx * 100_000 + sy;
}

/// `grid_3d()` / `grid_size_3d()`.
#[rawkernel]
pub fn index_3d(out: &mut [u32], width: u32, height: u32) {
    let (x, y, z) = grid_3d();
    let (sx, sy, sz) = grid_size_3d();
    let k = ((z * height + y) * width + x) as usize;
    out[2 * k] = x + 1000 * y + 1_000_000 * z;
    out[2 * k + 1] = sx + 1000 * sy + 1_000_000 * sz;
}

/// A one-thread kernel: a sequential prefix sum.
#[rawkernel]
pub fn one_thread_scan(x: &[i64], out: &mut [i64]) {
    let mut acc: i64 = 0;
    for i in 0..x.len() {
        acc = acc.wrapping_add(x[i]);
        out[i] = acc;
    }
}

/// A grid-stride copy of any dtype.
#[rawkernel]
pub fn copy<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let mut i = grid_1d();
    while i < n {
        y[i as usize] = x[i as usize];
        i += grid_size_1d();
    }
}

/// 2-D indexing through views: `out = a^T * s` with any strides.
#[rawkernel]
pub fn transpose_scale<T: Float>(a: View<T, 2>, mut out: ViewMut<T, 2>, s: T) {
    let (j, i) = grid_2d();
    let shape = out.shape();
    if (i as usize) < shape[0] && (j as usize) < shape[1] {
        out[[i, j]] = a[[j, i]] * s;
    }
}

/// Loops with `break`, `continue` and labels: per element, the sum of `j` in `0..x` skipping
/// multiples of 3, stopping the inner loop at 7 and the outer at 50 total.
#[rawkernel]
pub fn loops(x: &[u32], out: &mut [u32]) {
    let i = grid_1d() as usize;
    if i >= x.len() {
        return;
    }
    let mut total = 0u32;
    'outer: for round in 0..3u32 {
        let mut j = 0u32;
        loop {
            j += 1;
            if j > x[i] {
                break;
            }
            if j % 3 == 0 {
                continue;
            }
            if j > 7 + round {
                continue 'outer;
            }
            total += j;
            if total > 50 {
                break 'outer;
            }
        }
    }
    out[i] = total;
}

/// Reverses each block's 256 elements through static shared memory.
#[rawkernel]
pub fn reverse_static(x: &[f32], out: &mut [f32]) {
    let buf = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    let base = (block_idx().x * block_dim().x) as usize;
    buf[t] = x[base + t];
    sync_threads();
    out[base + t] = buf[255 - t];
}

/// Reverses each block through dynamic shared memory (block size given at launch).
#[rawkernel]
pub fn reverse_dynamic<T: Scalar>(x: &[T], out: &mut [T]) {
    let buf = dynamic_shared::<T>();
    let t = thread_idx().x as usize;
    let nb = block_dim().x as usize;
    let base = block_idx().x as usize * nb;
    buf[t] = x[base + t];
    sync_threads();
    out[base + t] = buf[nb - 1 - t];
}

/// `sync_warp` with a partial mask: the even lanes of each warp exchange through shared memory
/// (32 slots per warp, blocks of up to 256 threads).
#[rawkernel]
pub fn sync_warp_even(x: &[i32], out: &mut [i32]) {
    let buf = shared_array::<i32, 256>();
    let lane = lane_id();
    let base = (thread_idx().x - lane) as usize;
    let i = grid_1d() as usize;
    if lane % 2 == 0 {
        buf[base + lane as usize] = x[i];
        sync_warp(0x5555_5555);
        out[i] = buf[base + ((lane + 2) % 32) as usize];
    } else {
        out[i] = -x[i];
    }
}

/// Every shuffle and its `_width` form, and `lane_id()`.
#[rawkernel]
pub fn shuffles(x: &[i32], out: &mut [i32]) {
    let i = grid_1d() as usize;
    let v = x[i];
    let full = u32::MAX;
    let lane = lane_id();
    out[10 * i] = shfl_sync(full, v, 3);
    out[10 * i + 1] = shfl_up_sync(full, v, 1);
    out[10 * i + 2] = shfl_down_sync(full, v, 2);
    out[10 * i + 3] = shfl_xor_sync(full, v, 5);
    out[10 * i + 4] = shfl_sync_width(full, v, 1, 8);
    out[10 * i + 5] = shfl_up_sync_width(full, v, 3, 16);
    out[10 * i + 6] = shfl_down_sync_width(full, v, 3, 16);
    out[10 * i + 7] = shfl_xor_sync_width(full, v, 2, 4);
    out[10 * i + 8] = lane as i32;
    out[10 * i + 9] = warp_size() as i32;
}

/// 64-bit and float shuffles (a warp sum by `shfl_xor_sync`).
#[rawkernel]
pub fn warp_sum<T: Number>(x: &[T], out: &mut [T]) {
    let i = grid_1d() as usize;
    let mut v = x[i];
    let mut m = 16u32;
    while m > 0 {
        v += shfl_xor_sync(u32::MAX, v, m);
        m /= 2;
    }
    out[i] = v;
}

/// `atomic_add` of every element into `acc[i % acc.len()]`, for one dtype.
#[rawkernel]
pub fn atomic_add_all<T: Number>(x: &[T], acc: &mut [T]) {
    let i = grid_1d() as usize;
    if i < x.len() {
        let k = i % acc.len();
        atomic_add(acc, k, x[i]);
    }
}

/// `atomic_sub`, `atomic_min`, `atomic_max` (integers and floats).
#[rawkernel]
pub fn atomic_min_max_sub<T: Real>(x: &[T], acc: &mut [T]) {
    let i = grid_1d() as usize;
    if i < x.len() {
        atomic_min(acc, 0usize, x[i]);
        atomic_max(acc, 1usize, x[i]);
        atomic_sub(acc, 2usize, x[i]);
    }
}

/// `atomic_and`, `atomic_or`, `atomic_xor` on integers.
#[rawkernel]
pub fn atomic_bits<T: Int>(x: &[T], acc: &mut [T]) {
    let i = grid_1d() as usize;
    if i < x.len() {
        atomic_and(acc, 0usize, x[i]);
        atomic_or(acc, 1usize, x[i]);
        atomic_xor(acc, 2usize, x[i]);
    }
}

/// `atomic_inc` / `atomic_dec` (CUDA's wrapping counters on u32).
#[rawkernel]
pub fn atomic_counters(acc: &mut [u32], limit: u32, n: u32) {
    let i = grid_1d();
    if i < n {
        atomic_inc(acc, 0u32, limit);
        atomic_dec(acc, 1u32, limit);
    }
}

/// `atomic_exch` returns unique old values: each thread swaps its id into one slot and records
/// what it took out; `atomic_cas` builds a lock-free counter.
#[rawkernel]
pub fn atomic_exch_cas<T: Int>(slot: &mut [T], taken: &mut [T], counter: &mut [T], n: u32) {
    let i = grid_1d();
    if i < n {
        taken[i as usize] = atomic_exch(slot, 0u32, T::from_i64(i as i64 + 1));
        let mut old = counter[0];
        loop {
            let seen = atomic_cas(counter, 0u32, old, old + T::one());
            if seen == old {
                break;
            }
            old = seen;
        }
    }
}

/// A generic device function (called once per use).
#[device]
fn clamp_scale<T: Float>(v: T, lo: T, hi: T, s: T) -> T {
    v.max(lo).min(hi) * s
}

/// A device function with a by-value array parameter.
#[device]
fn dot3(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Device functions, `min`/`max`, local arrays.
#[rawkernel]
pub fn device_calls<T: Float>(x: &[T], out: &mut [T], lo: T, hi: T) {
    let i = grid_1d() as usize;
    if i < x.len() {
        let a = clamp_scale(x[i], lo, hi, T::from_f64(2.0));
        let b = clamp_scale(x[i] * x[i], lo, hi, T::one());
        out[i] = a + b;
    }
}

/// Local arrays: a 3-vector dot product and a small insertion sort of 8 values.
#[rawkernel]
pub fn local_arrays(x: &[f32], dots: &mut [f32], sorted: &mut [f32]) {
    let i = grid_1d() as usize;
    if 8 * i + 8 > x.len() {
        return;
    }
    let a = [x[8 * i], x[8 * i + 1], x[8 * i + 2]];
    let b = [x[8 * i + 3], x[8 * i + 4], x[8 * i + 5]];
    dots[i] = dot3(a, b);
    let mut v = [0.0f32; 8];
    for k in 0..8 {
        v[k] = x[8 * i + k];
    }
    for k in 1..8 {
        let mut j = k;
        while j > 0 && v[j - 1] > v[j] {
            let t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
            j -= 1;
        }
    }
    for k in 0..8 {
        sorted[8 * i + k] = v[k];
    }
}

/// Scalar arguments of every dtype, written back as f64 / bits.
#[rawkernel]
pub fn scalars(
    out: &mut [f64],
    b: bool,
    i8v: i8,
    i16v: i16,
    i32v: i32,
    i64v: i64,
    u8v: u8,
    u16v: u16,
    u32v: u32,
    u64v: u64,
    h: f16,
    bh: bf16,
    f: f32,
    d: f64,
    c: Complex<f32>,
    z: Complex<f64>,
) {
    if grid_1d() == 0 {
        out[0] = if b { 1.0 } else { 0.0 };
        out[1] = i8v as f64;
        out[2] = i16v as f64;
        out[3] = i32v as f64;
        out[4] = i64v as f64;
        out[5] = u8v as f64;
        out[6] = u16v as f64;
        out[7] = u32v as f64;
        out[8] = u64v as f64;
        out[9] = h.to_f32() as f64;
        out[10] = bh.to_f32() as f64;
        out[11] = f as f64;
        out[12] = d;
        out[13] = c.re as f64;
        out[14] = c.im as f64;
        out[15] = z.re;
        out[16] = z.im;
    }
}

/// Infinity and NaN constants, and early `return`.
#[rawkernel]
pub fn specials(x: &[f64], out: &mut [f64]) {
    let i = grid_1d() as usize;
    if i >= x.len() {
        return;
    }
    if x[i] < 0.0 {
        out[i] = f64::NEG_INFINITY;
        return;
    }
    if x[i] > 1.0 {
        out[i] = f64::INFINITY;
        return;
    }
    out[i] = if x[i] == 0.5 { f64::NAN } else { x[i] };
}

/// A block's tree sum in shared memory, the barrier inside the loop (so on the CPU device each
/// thread runs as a coroutine): `out[b]` is the sum of block `b`'s 256 elements.
#[rawkernel]
pub fn block_sum(x: &[i64], out: &mut [i64]) {
    let sh = shared_array::<i64, 256>();
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * 256 + t;
    sh[t] = if i < x.len() { x[i] } else { 0 };
    sync_threads();
    let mut s = 128usize;
    while s > 0 {
        if t < s {
            sh[t] = sh[t].wrapping_add(sh[t + s]);
        }
        sync_threads();
        s /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = sh[0];
    }
}

/// Adds 1 through a `&mut` parameter.
#[device]
fn bump_u32(v: &mut u32) {
    *v += 1;
}

/// Writes a thread's local array of arrays through a `&mut [[f32; 4]; 2]` parameter, by index.
#[device]
fn fill_fragments(acc: &mut [[f32; 4]; 2], v: f32) {
    for i in 0..2 {
        for j in 0..4 {
            acc[i][j] = v * (4 * i + j) as f32;
        }
    }
}

/// `out[t * 8 + k] = x[t] * k` through `fill_fragments`.
#[rawkernel]
pub fn fragments_by_reference(x: &[f32], out: &mut [f32]) {
    let t = thread_idx().x as usize;
    let mut acc = [[0.0f32; 4]; 2];
    fill_fragments(&mut acc, x[t]);
    for i in 0..2 {
        for j in 0..4 {
            out[t * 8 + 4 * i + j] = acc[i][j];
        }
    }
}

/// Borrows `&mut a[k[t]]` of a local array: out of range for a thread whose `k` is 3 or more.
/// On the CPU device Rust's own check of the borrow stops the launch (an error, not a crash),
/// also with a barrier in a loop (coroutines) or at the top level (regions). (A read or a write
/// of `a[i]` is checked as on the GPU instead: skipped, and reported later.)
#[rawkernel]
pub fn local_index(k: &[u32], out: &mut [u32], rounds: u32) {
    let mut a = [10u32, 20, 30];
    let t = thread_idx().x as usize;
    sync_threads();
    let mut r = 0u32;
    while r < rounds {
        sync_threads();
        r += 1;
    }
    bump_u32(&mut a[k[t] as usize]);
    out[t] = a[0] + a[1] + a[2];
}

/// As `local_index`, its barrier at the top level only (the CPU device runs it by regions).
#[rawkernel]
pub fn local_index_top(k: &[u32], out: &mut [u32]) {
    let mut a = [10u32, 20, 30];
    let t = thread_idx().x as usize;
    sync_threads();
    bump_u32(&mut a[k[t] as usize]);
    out[t] = a[0] + a[1] + a[2];
}

/// The sum of `v` over the block, through a shared array of the device function's own.
#[device]
fn block_total(v: f32) -> f32 {
    let s = shared_array::<f32, 256>();
    let t = thread_idx().x as usize;
    s[t] = v;
    sync_threads();
    let mut acc = 0.0f32;
    let mut k = 0usize;
    while k < block_dim().x as usize {
        acc += s[k];
        k += 1;
    }
    sync_threads();
    acc
}

/// A shared array in the kernel (2 elements) and a larger one in the device function it calls:
/// two arrays of the block, as on a GPU (on the CPU device they are keyed by function and site).
#[rawkernel]
pub fn shared_in_device_fn(x: &[f32], out: &mut [f32]) {
    let small = shared_array::<f32, 2>();
    let t = thread_idx().x as usize;
    let i = block_idx().x as usize * block_dim().x as usize + t;
    if t == 0 {
        small[0] = 1.0;
        small[1] = 2.0;
    }
    sync_threads();
    out[i] = block_total(x[i]) + small[1];
}

/// Loop-unroll control (`.unroll()`, `.unroll_by(n)`) changes nothing a thread computes: row
/// sums of 8 columns, unrolled fully, by 4 over a run-time count, and rolled over a reversed,
/// stepped range.
#[rawkernel]
pub fn unrolled_sums(x: &[f32], n: u32, out: &mut [f32]) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let row = i as usize * 8;
    let mut full = 0.0f32;
    for k in (0..8).unroll() {
        full += x[row + k];
    }
    let mut by4 = 0.0f32;
    for k in (0..8u32).unroll_by(4) {
        by4 += x[row + k as usize];
    }
    let mut odd = 0.0f32;
    for k in (1..8usize).rev().step_by(2).unroll_by(1) {
        odd += x[row + k];
    }
    out[3 * i as usize] = full;
    out[3 * i as usize + 1] = by4;
    out[3 * i as usize + 2] = odd;
}
