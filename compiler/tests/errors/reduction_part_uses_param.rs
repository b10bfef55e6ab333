use cuprum::prelude::*;

/// The reduction's `post` runs after the map: it cannot see the kernel's parameters.
#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a / n)]
pub fn mean(x: f64, n: f64) -> f64 {
    x
}
