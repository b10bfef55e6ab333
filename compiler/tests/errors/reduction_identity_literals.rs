use cuprum::prelude::*;

/// The identity of a concrete accumulator is a literal of its type, as rustc types it: one the
/// type cannot hold is an error at the literal.
#[reduction(identity = 300, reduce = |a, b| a + b)]
pub fn too_big(x: u8) -> u8 {
    x
}

#[reduction(identity = -1, reduce = |a, b| a + b)]
pub fn negative_unsigned(x: u32) -> u32 {
    x
}

#[reduction(identity = 0.5, reduce = |a, b| a + b)]
pub fn float_for_int(x: i32) -> i32 {
    x
}

/// A float literal that is infinite in its type (rustc's `overflowing_literals`), also in a body.
#[reduction(identity = 1e39, reduce = |a, b| a + b)]
pub fn infinite(x: f32) -> f32 {
    x + 3.5e38
}
