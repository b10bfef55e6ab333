use cuprum::prelude::*;

/// Arithmetic, bitwise and comparison operators on integers.
#[elementwise]
pub fn int_ops(a: i32, b: i32) -> (i32, i32, bool) {
    let sum = a + b - a * b;
    let quot = if b != 0 { a / b + a % b } else { 0 };
    let bits = (a & b) | (a ^ !b);
    let cmp = a < b || a <= b && a != b || a > b && a >= b || a == b;
    (sum + quot, bits, cmp)
}

/// The same operators on floats, with unary minus and `%` (fmod).
#[elementwise]
pub fn float_ops(a: f64, b: f64) -> f64 {
    let c = -a + b * 2.0 - a / b;
    let r = a % b;
    if c >= r { c - r } else { -(c + r) }
}

/// Generic operators: `Int` allows bitwise ones, `Real` allows ordering.
#[elementwise(instances = [u8, i64])]
pub fn generic_bits<T: Int>(a: T, b: T) -> T {
    let m = (a & b) ^ (a | b);
    if m > a { m - a } else { m % (b | T::one()) }
}
