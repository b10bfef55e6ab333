use cuprum::prelude::*;

/// Several outputs are returned as a tuple: quotient and remainder of floored division.
#[elementwise(instances = [i32, i64])]
pub fn floor_divmod<T: Int>(a: T, b: T) -> (T, T) {
    let q = a / b;
    let r = a % b;
    if r != T::zero() && (r < T::zero()) != (b < T::zero()) {
        (q - T::one(), r + b)
    } else {
        (q, r)
    }
}

/// Three outputs of different types.
#[elementwise]
pub fn split_float(x: f64) -> (f64, f64, bool) {
    let whole = x.trunc();
    (whole, x - whole, x.is_sign_negative())
}
