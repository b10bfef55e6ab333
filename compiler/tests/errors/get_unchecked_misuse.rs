use cuprum::prelude::*;

#[rawkernel]
pub fn outside_unsafe(x: &[f32], y: &mut [f32]) {
    y[0] = *x.get_unchecked(1);
}

#[rawkernel]
pub fn read_only(x: &[f32], v: View<f32, 2>) {
    unsafe {
        *x.get_unchecked_mut(0) = 1.0;
        *v.get_unchecked_mut([0usize, 1]) = 2.0;
    }
}

#[elementwise]
pub fn raw_write(x: f32, r: Raw<f32>) -> f32 {
    unsafe { *r.get_unchecked_mut(index()) = x; }
    x
}

#[rawkernel(unchecked = true)]
pub fn with_value(y: &mut [f32]) {
    unsafe { *y.get_unchecked_mut(0usize, 1usize) = 0.0; }
}

#[elementwise(unchecked)]
pub fn elementwise_opt_out(x: f32) -> f32 {
    x
}

#[device(unchecked)]
fn safe_but_unchecked(a: &[f32], i: usize) -> f32 {
    a[i]
}
