use cuprum::prelude::*;

/// A raw kernel (cupyx.jit.rawkernel in Rust syntax): grid-stride copy.
#[rawkernel(instances = [f32, f64, i32])]
pub fn elementwise_copy<T: Scalar>(x: &[T], y: &mut [T], size: u32) {
    let tid = block_idx().x * block_dim().x + thread_idx().x;
    let ntid = grid_dim().x * block_dim().x;
    let mut i = tid;
    while i < size {
        y[i as usize] = x[i as usize];
        i += ntid;
    }
}
