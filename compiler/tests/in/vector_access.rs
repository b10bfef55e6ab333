use cuprum::prelude::*;

/// `load4`/`store4`: four consecutive elements in one access where the address allows it
/// (`cuprum/vector.h`), checked like `x[i]`.
#[rawkernel(instances = [f32, f16, f64, u8])]
pub fn copy4<T: Scalar>(x: &[T], y: &mut [T]) {
    let i = 4 * grid_1d() as usize;
    if i < x.len() {
        let v = load4(x, i);
        store4(y, i, v);
    }
}

/// Through a `&mut [T]` (no read-only cache), elements changed in between, in an unchecked kernel
/// (no checks emitted).
#[rawkernel(unchecked)]
pub fn scale4(x: &mut [f32], a: f32) {
    let i = 4 * grid_1d() as usize;
    let mut v = load4(x, i);
    for k in 0..4usize {
        v[k] *= a;
    }
    store4(x, i, v);
}

/// From a device function, given the slice.
#[device]
fn sum4(x: &[f32], i: u32) -> f32 {
    let v = load4(x, i);
    v[0] + v[1] + v[2] + v[3]
}

#[rawkernel]
pub fn sums4(x: &[f32], out: &mut [f32]) {
    let i = grid_1d();
    if (i as usize) < out.len() {
        out[i as usize] = sum4(x, 4 * i);
    }
}
