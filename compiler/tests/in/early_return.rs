use cuprum::prelude::*;

/// `return` and early `return` in device functions and kernels.
#[device]
fn safe_div(a: f32, b: f32) -> f32 {
    if b == 0.0 {
        return 0.0;
    }
    a / b
}

#[device]
fn clamp_index(i: i64, n: i64) -> i64 {
    if i < 0 {
        return 0;
    } else if i >= n {
        return n - 1;
    }
    return i;
}

#[rawkernel]
pub fn gather_div(x: &[f32], idx: &[i64], out: &mut [f32], n: u32) {
    let i = grid_1d();
    if i >= n {
        return;
    }
    let j = clamp_index(idx[i as usize], n as i64);
    out[i as usize] = safe_div(x[j as usize], x[i as usize]);
}

#[elementwise]
pub fn relu_or_return(x: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    x
}
