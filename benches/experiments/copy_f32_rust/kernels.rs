use cuprum::prelude::*;

#[rawkernel(instances = [f32])]
pub fn a_current<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let b = block_dim().x;
    let chunk = 4 * b;
    let stride = grid_dim().x * chunk;
    let mut base = block_idx().x * chunk + thread_idx().x;
    while base < n {
        let mut v = [x[base as usize]; 4];
        for k in 1..4u32 {
            let i = base + k * b;
            if i < n {
                v[k as usize] = x[i as usize];
            }
        }
        for k in 0..4u32 {
            let i = base + k * b;
            if i < n {
                y[i as usize] = v[k as usize];
            }
        }
        base += stride;
    }
}

#[rawkernel(instances = [f32])]
pub fn b_fast_path<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let b = block_dim().x;
    let chunk = 4 * b;
    let stride = grid_dim().x * chunk;
    let mut base = block_idx().x * chunk + thread_idx().x;
    while base < n {
        if base + 3 * b < n {
            let v0 = x[base as usize];
            let v1 = x[(base + b) as usize];
            let v2 = x[(base + 2 * b) as usize];
            let v3 = x[(base + 3 * b) as usize];
            y[base as usize] = v0;
            y[(base + b) as usize] = v1;
            y[(base + 2 * b) as usize] = v2;
            y[(base + 3 * b) as usize] = v3;
        } else {
            for k in 0..4u32 {
                let i = base + k * b;
                if i < n {
                    y[i as usize] = x[i as usize];
                }
            }
        }
        base += stride;
    }
}

#[rawkernel(instances = [f32])]
pub fn c_lets<T: Scalar>(x: &[T], y: &mut [T], n: u32) {
    let b = block_dim().x;
    let chunk = 4 * b;
    let stride = grid_dim().x * chunk;
    let mut base = block_idx().x * chunk + thread_idx().x;
    while base < n {
        let mut v = [x[base as usize]; 4];
        for k in 1..4u32 {
            let i = base + k * b;
            v[k as usize] = if i < n { x[i as usize] } else { v[0] };
        }
        for k in 0..4u32 {
            let i = base + k * b;
            if i < n {
                y[i as usize] = v[k as usize];
            }
        }
        base += stride;
    }
}
