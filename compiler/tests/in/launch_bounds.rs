use cuprum::prelude::*;

/// `#[rawkernel(max_threads = N)]`: `__launch_bounds__(N)`, blocks of at most N threads.
#[rawkernel(max_threads = 384)]
pub fn scale_bounded(x: &mut [f32], a: f32) {
    let i = grid_1d() as usize;
    if i < x.len() {
        x[i] *= a;
    }
}

/// With `min_blocks = M` too: `__launch_bounds__(N, M)`, registers capped so that M blocks of N
/// threads are resident per multiprocessor.
#[rawkernel(max_threads = 256, min_blocks = 6)]
pub fn scale_resident(x: &mut [f32], a: f32) {
    let i = grid_1d() as usize;
    if i < x.len() {
        x[i] *= a;
    }
}

/// `#[elementwise]` takes the same two: each instance's entry point gets `__launch_bounds__(N, M)`.
#[elementwise(max_threads = 256, min_blocks = 4)]
pub fn halve_bounded<T: Float>(x: T) -> T {
    x * T::from_f64(0.5)
}
