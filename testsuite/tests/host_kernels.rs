//! A kernel file is an ordinary Rust module: the macros emit the user's functions unchanged, so
//! elementwise and reduction bodies and device functions are callable on the host.

use cuprum::prelude::*;

#[elementwise]
pub fn squared_diff<T: Float>(x: T, y: T) -> T {
    let d = x - y;
    d * d
}

#[reduction(identity = 0.0, reduce = |a, b| a + b, post = |a| a.sqrt(), acc = f64)]
pub fn l2norm(x: f32) -> f64 {
    (x as f64) * (x as f64)
}

#[device]
fn clamp_add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b).clamp(-100, 100)
}

#[rawkernel]
pub fn fill_index(out: &mut [u32]) {
    let i = grid_1d();
    if (i as usize) < out.len() {
        out[i as usize] = i;
    }
}

#[test]
fn bodies_run_on_the_host() {
    assert_eq!(squared_diff(3.0f32, 1.5), 2.25);
    assert_eq!(squared_diff(f16::from_f32(3.0), f16::from_f32(1.0)), f16::from_f32(4.0));
    assert_eq!(l2norm(3.0), 9.0);
    assert_eq!(clamp_add(i32::MAX, 1), -100);
    let mut out = [7u32; 2];
    fill_index(&mut out);
    assert_eq!(out, [0, 7]);
}
