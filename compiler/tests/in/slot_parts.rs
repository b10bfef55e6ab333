use cuprum::prelude::*;

/// Checks an index (`j` is not proven below `x.len()`): its part holds the index checks' slot.
#[rawkernel]
pub fn checked_store(x: &mut [f32], j: u32) {
    x[j as usize] = 1.0;
}

/// Indexes nothing: its part of the same file holds no slot (compiler/tests/cuda_compile.rs).
#[elementwise]
pub fn doubled(x: f32) -> f32 {
    x * 2.0
}
