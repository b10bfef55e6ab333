use cuprum::prelude::*;

#[elementwise]
pub fn position(x: f32) -> u64 {
    reduce_index() as u64
}

#[reduction(identity = 0, reduce = |a, b| a + b + reduce_index() as u64)]
pub fn weighted(x: f32) -> u64 {
    reduce_index() as u64
}

#[rawkernel]
pub fn fill(out: &mut [u64]) {
    out[0] = reduce_index() as u64;
}
