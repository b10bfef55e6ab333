use cuprum::prelude::*;

/// Heap types and strings have no place on the GPU.
#[rawkernel]
pub fn collect(x: Vec<f32>, names: &str) {
    let label = String::new();
    let boxed: Box<f32> = Box::new(1.0);
}
