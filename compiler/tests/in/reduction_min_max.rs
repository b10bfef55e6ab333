use cuprum::prelude::*;

/// Maximum with -inf as the identity.
#[reduction(identity = T::neg_infinity(), reduce = |a, b| a.max(b))]
pub fn max_all<T: Float>(x: T) -> T {
    x
}

/// Count of nonzero integers (no post, an integer accumulator).
#[reduction(identity = 0, reduce = |a, b| a + b, instances = [i32, u8])]
pub fn count_nonzero<T: Int>(x: T) -> i64 {
    if x != T::zero() { 1 } else { 0 }
}

/// Sum without an identity: an empty input is an error at run time.
#[reduction(reduce = |a: u64, b: u64| a.wrapping_add(b))]
pub fn sum_u64(x: u32) -> u64 {
    x as u64
}
