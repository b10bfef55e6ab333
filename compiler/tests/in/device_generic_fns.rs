use cuprum::prelude::*;

/// A generic device function, its type inferred at the call.
#[device]
fn lerp<T: Float>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

/// A generic device function whose type cannot be inferred from the arguments.
#[device]
fn half_of<T: Float>(x: f64) -> T {
    T::from_f64(x * 0.5)
}

/// Calls with inferred and turbofish generics, and a device function calling another.
#[device]
fn smoothstep<T: Float>(e0: T, e1: T, x: T) -> T {
    let t = ((x - e0) / (e1 - e0)).clamp(T::zero(), T::one());
    t * t * (T::from_f64(3.0) - T::from_f64(2.0) * t)
}

#[rawkernel]
pub fn blend<T: Float>(a: &[T], b: &[T], out: &mut [T], n: u32) {
    let i = grid_1d();
    if i < n {
        let k = i as usize;
        let t = smoothstep(T::zero(), T::one(), a[k]);
        let h = half_of::<T>(1.0);
        out[k] = lerp(a[k], b[k], t) + lerp::<T>(h, h, t);
    }
}

/// A concrete device function called from a concrete kernel.
#[device]
fn square(x: f32) -> f32 {
    x * x
}

/// A device function whose name is a C math function is renamed in C++; a local may have the
/// name of a device function; an elementwise parameter named `shape` does not clash with the
/// generated entry point.
#[device]
fn norm(x: f32, y: f32) -> f32 {
    (x * x + y * y).sqrt()
}

#[elementwise]
pub fn sum_of_squares(x: f32, shape: f32) -> f32 {
    let square = square(x);
    square + norm(shape, shape)
}
