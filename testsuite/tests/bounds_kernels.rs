//! Kernels of `gpu_bounds.rs` (index checks, docs/semantics.md row 18), precompiled by
//! testsuite/build.rs. In each, exactly one thread, `bad` (a flat thread index; `NONE` for no
//! thread), uses the index `at` in place of its own: as the read index when `write` is false, as
//! the write index when it is true. So a test knows the one violation's kernel, index, length,
//! block and thread, and a launch with `bad = NONE` must give the plain result.

#![allow(dead_code)]

use cuprum::prelude::*;

/// No thread misbehaves.
pub const NONE: u32 = u32::MAX;

/// The read and the write index of thread `i`: its own `own`, or `at` for the bad thread.
#[device]
fn pick(i: u32, own: u32, bad: u32, at: u32, write: bool) -> (u32, u32) {
    if i == bad {
        if write { (own, at) } else { (at, own) }
    } else {
        (own, own)
    }
}

/// Slices: `y[w] = x[r]` (a `&[T]` read through the read-only cache, a `&mut [T]` write).
#[rawkernel]
pub fn slices(x: &[f32], y: &mut [f32], bad: u32, at: u32, write: bool) {
    let i = grid_1d();
    if i as usize >= x.len() {
        return;
    }
    let (r, w) = pick(i, i, bad, at, write);
    y[w as usize] = x[r as usize];
}

/// `load4`/`store4`: threads `g < 249` copy `x[4 g ..][..4]` to `y[4 g ..]`; thread `bad` stores
/// at `at` (`write`), or loads from `at` and stores what it got at `y[996..1000]`.
#[rawkernel]
pub fn quads(x: &[f32], y: &mut [f32], bad: u32, at: u32, write: bool) {
    let g = grid_1d();
    if g == bad {
        if write {
            store4(y, at, [1.0f32; 4]);
        } else {
            let v = load4(x, at);
            store4(y, 996u32, v);
        }
    } else if g < 249 {
        let v = load4(x, 4 * g);
        store4(y, 4 * g, v);
    }
}

/// A 2-D view read and written with a multi-index `[row, col]`; the bad thread's index is
/// `[at_row, at_col]`. One thread per element, the grid's x over columns.
#[rawkernel]
pub fn views_2d(a: View<f32, 2>, mut b: ViewMut<f32, 2>, bad: u32, at_row: u32, at_col: u32, write: bool) {
    let (c, r) = grid_2d();
    let s = a.shape();
    if r as usize >= s[0] || c as usize >= s[1] {
        return;
    }
    let i = r * s[1] as u32 + c;
    let (rr, rc, wr, wc) = if i == bad && !write {
        (at_row, at_col, r, c)
    } else if i == bad {
        (r, c, at_row, at_col)
    } else {
        (r, c, r, c)
    };
    b[[wr as usize, wc as usize]] = a[[rr as usize, rc as usize]];
}

/// A view read and written with a flat C-order index (`i32`, so that a negative index can be
/// tried: it is out of range, reported as negative).
#[rawkernel]
pub fn views_flat(a: View<f32, 2>, mut b: ViewMut<f32, 2>, bad: u32, at: i32, write: bool) {
    let i = grid_1d();
    if i as usize >= a.len() {
        return;
    }
    let own = i as i32;
    let (r, w) = if i == bad && !write {
        (at, own)
    } else if i == bad {
        (own, at)
    } else {
        (own, own)
    };
    b[w] = a[r];
}

/// A local array indexed at run time: `a[w] = x[i]; y[i] = a[r]` with `a` filled with -1, so a
/// skipped write leaves -1 and a skipped read gives 0.
#[rawkernel]
pub fn local_array(x: &[f32], y: &mut [f32], bad: u32, at: u32, write: bool) {
    let i = grid_1d();
    if i as usize >= x.len() {
        return;
    }
    let mut a = [-1.0f32; 8];
    let (r, w) = pick(i, i % 8, bad, at, write);
    a[w as usize] = x[i as usize];
    y[i as usize] = a[r as usize];
}

/// A static shared array of 128 elements (blocks of 128 threads): every thread clears its slot,
/// then `s[w] = x[i]`, then `y[i] = s[r]`, with barriers between, which the bad thread must reach
/// too.
#[rawkernel]
pub fn shared_static(x: &[f32], y: &mut [f32], bad: u32, at: u32, write: bool) {
    let s = shared_array::<f32, 128>();
    let t = thread_idx().x;
    let i = grid_1d();
    let (r, w) = pick(i, t, bad, at, write);
    s[t as usize] = -1.0;
    sync_threads();
    if (i as usize) < x.len() {
        s[w as usize] = x[i as usize];
    }
    sync_threads();
    if (i as usize) < y.len() {
        y[i as usize] = s[r as usize];
    }
}

/// As `shared_static`, in dynamic shared memory (its length from the launch's byte count).
#[rawkernel]
pub fn shared_dynamic(x: &[f32], y: &mut [f32], bad: u32, at: u32, write: bool) {
    let s = dynamic_shared::<f32>();
    let t = thread_idx().x;
    let i = grid_1d();
    let (r, w) = pick(i, t, bad, at, write);
    s[t as usize] = -1.0;
    sync_threads();
    if (i as usize) < x.len() {
        s[w as usize] = x[i as usize];
    }
    sync_threads();
    if (i as usize) < y.len() {
        y[i as usize] = s[r as usize];
    }
}

/// Atomics on a slice and on a shared array: every thread adds 1 to `counts[i % m]` (the bad
/// thread to `counts[at]`) and to a shared counter, and stores the old value it got (0 for the
/// skipped atomic).
#[rawkernel]
pub fn atomics(counts: &mut [u32], old: &mut [u32], shared_total: &mut [u32], bad: u32, at: u32) {
    let s = shared_array::<u32, 1>();
    let t = thread_idx().x;
    let i = grid_1d();
    if t == 0 {
        s[0] = 0;
    }
    sync_threads();
    let m = counts.len() as u32;
    let own = i % m;
    let j = if i == bad { at } else { own };
    if (i as usize) < old.len() {
        old[i as usize] = atomic_add(counts, j as usize, 1u32);
        // The shared counter, indexed out of range by the bad thread too.
        let k = if i == bad { at } else { 0 };
        atomic_add(s, k as usize, 1u32);
    }
    sync_threads();
    if t == 0 {
        atomic_add(shared_total, 0usize, s[0]);
    }
}

#[device]
fn bump(v: &mut f32) {
    *v += 1.0;
}

/// `&mut y[j]` passed to a device function: out of range, the function gets a scratch element.
#[rawkernel]
pub fn mut_ref(y: &mut [f32], bad: u32, at: u32) {
    let i = grid_1d();
    if i as usize >= y.len() {
        return;
    }
    let j = if i == bad { at } else { i };
    bump(&mut y[j as usize]);
}

/// A device function indexes: the violation names it, not the kernel.
#[device]
fn fetch(x: &[f32], j: u32) -> f32 {
    x[j as usize]
}

#[rawkernel]
pub fn via_device(x: &[f32], y: &mut [f32], bad: u32, at: u32) {
    let i = grid_1d();
    if i as usize >= y.len() {
        return;
    }
    let j = if i == bad { at } else { i };
    y[i as usize] = fetch(x, j);
}

/// The unchecked forms, in range: `get_unchecked` in `unsafe`, and a whole kernel `unchecked`.
#[rawkernel]
pub fn get_unchecked_copy(x: &[f32], y: &mut [f32]) {
    let i = grid_1d() as usize;
    if i < x.len() && i < y.len() {
        // SAFETY: `i` is below both lengths (checked just above).
        unsafe {
            *y.get_unchecked_mut(i) = *x.get_unchecked(i) * 2.0;
        }
    }
}

/// Its `launch` is an `unsafe fn`: the caller promises `n` is at most both lengths.
#[rawkernel(unchecked)]
pub fn unchecked_copy(x: &[f32], y: &mut [f32], n: u32) {
    let i = grid_1d();
    if i < n {
        y[i as usize] = x[i as usize] * 3.0;
    }
}

/// An elementwise body gathering through a raw argument with a per-element index (`i64`, so a
/// negative index can be tried).
#[elementwise]
pub fn gather(x: Raw<f32>, j: i64) -> f32 {
    x[j]
}

/// A reduction map gathering through a raw argument: the sum of `x[j]` over the `j`s.
#[reduction(identity = 0.0, reduce = |a, b| a + b, acc = f64)]
pub fn gather_sum(j: i64, x: Raw<f32>) -> f64 {
    x[j] as f64
}
