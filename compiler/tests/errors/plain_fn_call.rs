use cuprum::prelude::*;

/// A plain function of the same file: the kernel is told to mark it `#[device]`.
fn softplus(x: f32) -> f32 {
    (1.0 + x.exp()).ln()
}

#[elementwise]
pub fn act(x: f32) -> f32 {
    softplus(x) * 2.0
}

/// A function that is nowhere in the file keeps the general message.
#[elementwise]
pub fn missing(x: f32) -> f32 {
    nowhere(x)
}
