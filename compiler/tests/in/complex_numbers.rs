use cuprum::prelude::*;

/// Complex<f32> arithmetic, `conj`, `norm`, field access.
#[elementwise]
pub fn mul_conj(a: Complex<f32>, b: Complex<f32>) -> Complex<f32> {
    a * b.conj()
}

/// Complex<f64>: constructing values, `re`/`im`, `exp`, `norm_sqr`.
#[elementwise]
pub fn phase_rotate(z: Complex<f64>, theta: f64) -> (Complex<f64>, f64) {
    let r = Complex::new(0.0, theta).exp();
    let w = z * r;
    (w, w.re * w.re + w.im * w.im - z.norm_sqr())
}

/// A generic kernel instantiated for complex types through `Number`.
#[elementwise(instances = [Complex<f32>, Complex<f64>, f32])]
pub fn fma_number<T: Number>(a: T, b: T, c: T) -> T {
    a * b + c
}

/// Complex division, `norm`, `arg`, `ln`, `sqrt`, and the struct-literal form.
#[elementwise]
pub fn complex_misc(a: Complex<f64>, b: Complex<f64>) -> (Complex<f64>, f64) {
    let q = a / b - Complex { re: 1.0, im: -1.0 };
    let r = q.ln() + q.sqrt();
    (r, q.norm() + q.arg())
}
