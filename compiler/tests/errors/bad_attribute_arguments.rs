use cuprum::prelude::*;

#[rawkernel(fastmath)]
pub fn k1(x: &mut [f32]) {
    x[0] = 1.0;
}

#[reduction(identity = 0, reduce = |a| a)]
pub fn k2(x: f32) -> f32 {
    x
}

#[elementwise(instances = [f32, u8])]
pub fn k3<T: Float>(x: T) -> T {
    x
}

#[device(inline)]
fn k4(x: f32) -> f32 {
    x
}

#[reduction]
pub fn k5(x: f32) -> f32 {
    x
}
