use cuprum::prelude::*;

/// Two generic parameters with a list of precompiled instances (a tuple per instance), and the
/// default instances of an `Int` bound.
#[elementwise(instances = [(f32, i32), (f64, i64), (f16, u8)])]
pub fn scale_by_int<T: Float, I: Int>(x: T, k: I) -> T {
    x * T::from_f64(k.to_f64())
}

#[elementwise]
pub fn popcount<I: Int>(x: I) -> u32 {
    x.count_ones()
}

/// Bounds in a `where` clause.
#[elementwise(instances = [f32])]
pub fn where_bound<T>(x: T) -> T
where
    T: Float,
{
    x.abs()
}
