use cuprum::prelude::*;

/// A reduction whose map reads a raw argument with the loop index (a weighted sum), and a
/// reduction returning an integer from a bool map.
#[reduction(identity = 0.0, reduce = |a, b| a + b, acc = f64)]
pub fn weighted_sum(x: f32, w: Raw<f32>) -> f64 {
    let k = index() % w.len();
    (x * w[k]) as f64
}

#[reduction(identity = false, reduce = |a, b| a || b)]
pub fn any_nan(x: f64) -> bool {
    x.is_nan()
}
