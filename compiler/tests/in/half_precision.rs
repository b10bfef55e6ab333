use cuprum::prelude::*;

/// f16 arithmetic goes through f32 and rounds back, as `half` does.
#[elementwise]
pub fn scale_f16(x: f16, s: f32) -> f16 {
    let y = f16::from_f32(x.to_f32() * s);
    y + y * f16::from_f32(0.5)
}

/// bf16 with a generic Float body instantiated for the half types.
#[elementwise(instances = [f16, bf16, f32])]
pub fn gelu<T: Float>(x: T) -> T {
    let c = T::from_f64(0.7978845608028654);
    let k = T::from_f64(0.044715);
    let half = T::from_f64(0.5);
    half * x * (T::one() + (c * (x + k * x * x * x)).tanh())
}

/// Comparisons, predicates and bit access of half values.
#[rawkernel]
pub fn clamp_bf16(x: &mut [bf16], lo: bf16, hi: bf16, n: u32) {
    let i = grid_1d();
    if i < n {
        let v = x[i as usize];
        x[i as usize] = if v.is_nan() {
            bf16::from_bits(0)
        } else if v < lo {
            lo
        } else if v > hi {
            hi
        } else {
            v
        };
    }
}
