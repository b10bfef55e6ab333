use cuprum::prelude::*;

/// The integer methods: wrapping and saturating arithmetic, bit counts, rotations, `pow`, `abs`,
/// `min`/`max`/`clamp`, byte and bit reversal.
#[elementwise]
pub fn int_methods_u32(x: u32, y: u32) -> (u32, u32) {
    let a = x.wrapping_add(y).wrapping_sub(7).wrapping_mul(3) ^ x.wrapping_neg();
    let b = x.saturating_add(y) / 2 + x.saturating_sub(y) / 2;
    let c = x.count_ones() + x.count_zeros() + x.leading_zeros() + x.trailing_zeros();
    let d = x.rotate_left(5) ^ y.rotate_right(3) ^ x.swap_bytes() ^ y.reverse_bits();
    let e = x.pow(3).min(y).max(1).clamp(2, 1000);
    let f = if x.is_power_of_two() { 1 } else { 0 };
    (a ^ d, b + c + e + f)
}

/// Signed and narrow integers, where wrapping and saturation differ from C.
#[elementwise]
pub fn int_methods_i8(x: i8, y: i8) -> (i8, u32, i16) {
    let a = x.wrapping_add(y).saturating_sub(100).abs().wrapping_neg();
    let b = x.count_ones() + y.leading_zeros() + (x as u8).trailing_zeros();
    let c = (x as i16).saturating_add(i16::MAX).rotate_left(9).pow(2);
    (a, b, c)
}

/// Through a generic `Int` bound.
#[elementwise(instances = [u8, i64])]
pub fn int_methods_generic<T: Int>(x: T, y: T) -> (T, u32) {
    let a = x.wrapping_mul(y).saturating_add(x).rotate_left(3).pow(2);
    let n = x.count_ones() + y.trailing_zeros() + x.leading_zeros() + (x ^ y).low_u32();
    (a.min(y).max(x), n)
}

/// A generic real value's bits through `u64` and back (`to_bits_u64`, `T::from_bits_u64`).
#[elementwise(instances = [i32, f32, f64])]
pub fn bits_round_trip<T: Real>(x: T) -> (T, u64) {
    let b = x.to_bits_u64();
    ((T::from_bits_u64(b | (1u64 << 40))), b)
}
