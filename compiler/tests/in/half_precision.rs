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

/// Pairs of f32 to the 16-bit types (`from_f32_pair`: every NaN to 0x7fff).
#[rawkernel]
pub fn pack_pairs(x: &[f32], out: &mut [bf16], outh: &mut [f16]) {
    let i = 2 * grid_1d() as usize;
    if i + 1 < x.len() && i + 1 < out.len() && i + 1 < outh.len() {
        let two = bf16::from_f32_pair(x[i], x[i + 1]);
        out[i] = two[0];
        out[i + 1] = two[1];
        let h = f16::from_f32_pair(x[i], x[i + 1]);
        outh[i] = h[0];
        outh[i + 1] = h[1];
    }
}
