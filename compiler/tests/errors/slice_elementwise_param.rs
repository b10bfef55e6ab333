use cuprum::prelude::*;

/// Elementwise parameters are per-element values, not arrays.
#[elementwise]
pub fn windowed(x: &[f32], w: f32) -> f32 {
    x[0] * w
}
