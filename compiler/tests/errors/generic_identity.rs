use cuprum::prelude::*;

/// A literal identity converts to every instance of the accumulator; one that an instance
/// cannot hold is an error at the literal, naming the instance.
#[reduction(identity = 300, reduce = |a, b| a + b, instances = [u8, i32])]
pub fn too_big<T: Int>(x: T) -> T {
    x
}

#[reduction(identity = -1, reduce = |a, b| a.min(b), instances = [u32])]
pub fn negative_unsigned<T: Int>(x: T) -> T {
    x
}

#[reduction(identity = 0.5, reduce = |a, b| a + b, instances = [f32])]
pub fn float_for_number<T: Number>(x: T) -> T {
    x
}

#[reduction(identity = 16777217, reduce = |a, b| a.max(b), instances = [f32, f64])]
pub fn inexact<T: Float>(x: T) -> T {
    x
}

#[reduction(identity = 1e10, reduce = |a, b| a.min(b), instances = [f16])]
pub fn beyond_half<T: Float>(x: T) -> T {
    x
}
