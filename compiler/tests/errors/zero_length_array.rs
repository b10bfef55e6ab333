use cuprum::prelude::*;

/// A local array needs at least one element: C++ has no zero-sized locals.
#[rawkernel]
pub fn zero_length(y: &mut [f32]) {
    let none = [0.0f32; 0];
    let one = [1.0f32; 1];
    y[0] = one[0] + none.len() as f32;
}
