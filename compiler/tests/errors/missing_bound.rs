use cuprum::prelude::*;

/// A generic parameter needs a prelude bound.
#[elementwise]
pub fn square<T>(x: T) -> T {
    x * x
}
