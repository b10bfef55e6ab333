use cuprum::prelude::*;

/// `&mut T` out-parameters of a device function become C++ references.
#[device]
fn min_max(a: f32, b: f32, lo: &mut f32, hi: &mut f32) {
    if a < b {
        *lo = a;
        *hi = b;
    } else {
        *lo = b;
        *hi = a;
    }
}

/// A generic out-parameter that is read and updated.
#[device]
fn bump<T: Int>(counter: &mut T, by: T) -> bool {
    *counter = counter.wrapping_add(by);
    *counter == T::zero()
}

#[rawkernel]
pub fn order_pairs(x: &[f32], y: &[f32], lo: &mut [f32], hi: &mut [f32], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let mut a = 0.0f32;
    let mut b = 0.0f32;
    min_max(x[i as usize], y[i as usize], &mut a, &mut b);
    lo[i as usize] = a;
    hi[i as usize] = b;
    let mut c = 250u8;
    let mut wrapped = false;
    for _ in 0..10 {
        wrapped = wrapped || bump(&mut c, 1u8);
    }
    if wrapped {
        hi[i as usize] += 1.0;
    }
}
