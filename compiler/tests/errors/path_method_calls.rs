use cuprum::prelude::*;

/// A method called as a path takes a receiver of the path's type, as in Rust.
#[elementwise]
pub fn wrong_receiver(x: f64, y: f32) -> f32 {
    f32::sin(x) + f32::max(y, x)
}

/// A name that is neither an associated function nor a method lists both.
#[elementwise]
pub fn unknown(x: f32) -> f32 {
    f32::sine(x)
}

#[elementwise]
pub fn unknown_generic<T: Real>(x: T) -> T {
    T::frobnicate(x) + T::sin(x)
}

/// The receiver counts as an argument.
#[elementwise]
pub fn arity(x: f32) -> f32 {
    f32::max(x) + f32::sin()
}

/// `min`/`max` of integers and generic parameters do not resolve as paths on the host.
#[elementwise]
pub fn host_min_max<T: Real>(x: T, n: i32) -> T {
    let _k = i32::max(n, 2);
    T::min(x, x)
}
