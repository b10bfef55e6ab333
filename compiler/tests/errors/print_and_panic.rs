use cuprum::prelude::*;

#[rawkernel]
pub fn checked_copy(x: &[f32], y: &mut [f32], n: u32) {
    let i = grid_1d();
    assert!(i < n, "index out of range");
    println!("thread {}", i);
    if x[i as usize].is_nan() {
        panic!("NaN input");
    }
    y[i as usize] = x[i as usize];
}
