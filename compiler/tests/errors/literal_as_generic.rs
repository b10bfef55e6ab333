use cuprum::prelude::*;

/// A literal is not a `T`: write `T::from_f64(..)`.
#[elementwise]
pub fn halve<T: Float>(x: T) -> T {
    x * 0.5
}
