use cuprum::prelude::*;

// Index checks (docs/semantics.md, row 18): every kind of index, checked unless proven in range
// or written `get_unchecked` in an `unsafe` block; `unchecked` on the attribute drops them all.

#[device]
fn second(a: &[f32]) -> f32 {
    a[1]
}

#[device]
fn bump(x: &mut f32) {
    *x += 1.0;
}

/// Slices (read through the read-only cache, written), a shared array, a local array, a
/// struct-free place chain, an atomic, `&mut a[i]` and a device function's own check.
#[rawkernel]
pub fn gather(x: &[f32], idx: &[u32], y: &mut [f32], counts: &mut [u32]) {
    let s = shared_array::<f32, 64>();
    let t = thread_idx().x;
    let i = grid_1d() as usize;
    s[t as usize] = x[i];
    sync_threads();
    let mut local = [0.0f32; 4];
    for k in 0..4 {
        local[k] = s[(t as usize + k) % 64];
    }
    let j = idx[i] as usize;
    y[j] = local[(t % 4) as usize] + second(x);
    atomic_add(counts, j, 1);
    bump(&mut y[j + 1]);
    for k in 0..y.len() {
        y[k] += 0.0;
    }
    if i < x.len() {
        y[0] = x[i];
    }
}

/// Dynamic shared memory, views (flat and multi-index), and the unchecked forms.
#[rawkernel]
pub fn views_and_dynamic(a: View<f32, 2>, mut b: ViewMut<f32, 2>, out: &mut [f32]) {
    let buf = dynamic_shared::<f32>();
    let (r, c) = grid_2d();
    let (r, c) = (r as usize, c as usize);
    buf[c] = a[[r, c]];
    b[[c, r]] = buf[c] + a[r * 2];
    unsafe {
        *b.get_unchecked_mut([r, c]) = *a.get_unchecked([c, r]) + *buf.get_unchecked(c);
        *out.get_unchecked_mut(r) = *a.get_unchecked(r);
    }
}

/// `#[rawkernel(unchecked)]`: Rust's indexing without the checks (as CUDA indexes).
#[rawkernel(unchecked)]
pub fn copy_unchecked(x: &[f32], y: &mut [f32]) {
    let i = grid_1d() as usize;
    y[i] = x[i];
}

/// An elementwise body reading a raw argument: checked against its size.
#[elementwise]
pub fn shifted(x: Raw<f32>, k: u64) -> f32 {
    x[index() + k as usize]
}

/// A reduction map reading raw arguments, checked (`index() % w.len()` too: it is 0, out of
/// range, when `w` is empty).
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn dot_raw(x: f32, w: Raw<f32>, v: Raw<f32>) -> f32 {
    let k = index() % w.len();
    x * w[k] * v[index()]
}
