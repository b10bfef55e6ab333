use cuprum::prelude::*;

/// CuPy's `'0'`: a literal identity converts to every instance of a generic accumulator.
#[reduction(identity = 0, reduce = |a, b| a + b, instances = [f32, u8, i64, f16, Complex<f64>])]
pub fn total<T: Number>(x: T) -> T {
    x
}

/// A float literal for a float accumulator, and `u64::MAX` (beyond `i64`) for an unsigned one.
#[reduction(identity = -1.5, reduce = |a, b| a.max(b), instances = [bf16, f64])]
pub fn at_least<T: Float>(x: T) -> T {
    x
}

#[reduction(identity = 18446744073709551615, reduce = |a, b| a.min(b), instances = [u64])]
pub fn lowest<T: Int>(x: T) -> T {
    x
}

/// No Rust literal is an `f16`: the identity converts as `f16::from_f64` does.
#[reduction(identity = 1, reduce = |a, b| a * b)]
pub fn product(x: f16) -> f16 {
    x
}
