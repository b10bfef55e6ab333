use cuprum::prelude::*;

/// `max`/`min` of a scalar take the other value; the array reductions are host methods of `Array`.
#[elementwise]
pub fn larger(x: f32) -> f32 {
    x.max()
}

#[elementwise]
pub fn smaller<T: Int>(x: T) -> T {
    x.min()
}

#[rawkernel]
pub fn total(a: &[f32], out: &mut [f32]) {
    out[0] = a.max();
}
