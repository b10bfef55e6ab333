use cuprum::prelude::*;

/// A generic sum of squares over `Number`, precompiled only for complex types: the unit includes
/// `cuprum/complex.h` for its instances, and `T::zero()` is `cuprum::num<c32>::zero()`.
#[reduction(identity = T::zero(), reduce = |a, b| a + b, instances = [Complex<f32>, Complex<f64>])]
pub fn sum_sq<T: Number>(x: T) -> T {
    x * x
}

/// A product without identity, generic, complex instances.
#[reduction(reduce = |a, b| a * b, instances = [Complex<f64>])]
pub fn prod_no_identity<T: Number>(x: T) -> T {
    x
}

/// `sum(x * conj(y))` of `Complex<f32>` accumulated in `Complex<f64>`, its modulus as the result.
#[reduction(identity = Complex::new(0.0, 0.0), reduce = |a, b| a + b, post = |a| a.norm())]
pub fn cdot_abs(x: Complex<f32>, y: Complex<f32>) -> Complex<f64> {
    let p = x * y.conj();
    Complex::new(p.re as f64, p.im as f64)
}
