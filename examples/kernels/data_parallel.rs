//! The kernels of the data-parallel linear regression (`examples/data_parallel.rs`): a row's
//! prediction, the residual, the gradient's sum over rows, and the update.
#![allow(dead_code)]

use cuprum::prelude::*;

/// A row's prediction `x . w`, reduced along the features (`w` broadcast as one row).
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn predict(x: f32, w: f32) -> f32 {
    x * w
}

/// The residual of a prediction.
#[elementwise]
pub fn residual(prediction: f32, y: f32) -> f32 {
    prediction - y
}

/// The gradient's sum over rows of `residual * x` (residual broadcast as a column), reduced
/// along the rows: one sum per feature.
#[reduction(identity = 0.0, reduce = |a, b| a + b)]
pub fn gradient(residual: f32, x: f32) -> f32 {
    residual * x
}

/// A gradient-descent step, `w - scale * sum` (`scale` = the learning rate times 2 / rows).
#[elementwise]
pub fn step(w: f32, sum: f32, scale: f32) -> f32 {
    w - scale * sum
}
