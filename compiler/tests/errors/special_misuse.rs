use cuprum::prelude::*;

/// The error functions used wrongly: every mistake at its span.
#[elementwise]
pub fn misuse(x: f32, n: i32) -> f32 {
    // A method call (std's `f32::erf` is unstable): the prelude's free function.
    let a = x.erf() + f32::erfinv(x);
    // Integers are not floats.
    let b = erf(n) + erfc(1);
    // One argument.
    let c = erfcinv(x, x);
    a + b + c
}

/// A device function cannot take an intrinsic's name: kernels' calls reach the intrinsic.
#[device]
pub fn erf(x: f32) -> f32 {
    x
}
