use cuprum::prelude::*;

/// Atomics on a shared array: a per-block counter, min/max and bit masks, then one global update.
#[rawkernel]
pub fn block_stats(x: &[i32], out: &mut [i32], n: u32) {
    let s = shared_array::<i32, 8>();
    let u = shared_array::<u32, 2>();
    let f = shared_array::<f32, 1>();
    let t = thread_idx().x;
    if t == 0 {
        s[0] = 0;
        s[1] = i32::MAX;
        s[2] = i32::MIN;
        s[3] = 0;
        s[4] = -1;
        s[5] = 0;
        s[6] = 0;
        s[7] = 0;
        u[0] = 0;
        u[1] = 0;
        f[0] = 0.0;
    }
    sync_threads();
    let i = grid_1d();
    if i < n {
        let v = x[i as usize];
        atomic_add(s, 0u32, 1);
        atomic_min(s, 1u32, v);
        atomic_max(s, 2u32, v);
        atomic_or(s, 3u32, v);
        atomic_and(s, 4u32, v);
        atomic_xor(s, 5u32, v);
        atomic_sub(s, 6u32, v);
        atomic_cas(s, 7u32, 0, v);
        atomic_exch(s, 7u32, v);
        atomic_inc(u, 0u32, 1000);
        atomic_dec(u, 1u32, 1000);
        atomic_add(f, 0u32, v as f32);
    }
    sync_threads();
    if t < 8 {
        atomic_add(out, t, s[t as usize]);
    }
}
