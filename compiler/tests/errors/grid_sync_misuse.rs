use cuprum::prelude::*;

/// `grid_sync()` outside raw kernels and device functions, and through a device function.
#[elementwise]
pub fn per_element(x: f32) -> f32 {
    grid_sync();
    x
}

#[device]
fn barrier_then(x: f32) -> f32 {
    grid_sync();
    x + 1.0
}

#[device]
fn through(x: f32) -> f32 {
    barrier_then(x) * 2.0
}

#[elementwise]
pub fn calls_a_grid_barrier(x: f32) -> f32 {
    through(x)
}

#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn reduces_with_a_grid_barrier(x: f32) -> f32 {
    barrier_then(x)
}

/// Fine: a raw kernel calls it, directly and through the same device functions.
#[rawkernel]
pub fn fine(x: &mut [f32]) {
    grid_sync();
    x[0] = through(x[0]);
}
