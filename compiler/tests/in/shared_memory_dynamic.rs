use cuprum::prelude::*;

/// Dynamic shared memory (size given at launch): `dynamic_shared::<T>()` is a slice.
#[rawkernel]
pub fn block_sum_dynamic(x: &[f64], out: &mut [f64], n: u32) {
    let buf = dynamic_shared::<f64>();
    let t = thread_idx().x;
    let i = grid_1d();
    buf[t as usize] = if i < n { x[i as usize] } else { 0.0 };
    sync_threads();
    let mut stride = block_dim().x / 2;
    while stride > 0 {
        if t < stride && ((t + stride) as usize) < buf.len() {
            buf[t as usize] += buf[(t + stride) as usize];
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out[block_idx().x as usize] = buf[0];
    }
}
