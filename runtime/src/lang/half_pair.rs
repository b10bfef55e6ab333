//! `f16::from_f32_pair(a, b)` and `bf16::from_f32_pair(a, b)`: two `f32`s to a pair of 16-bit
//! floats at once, the conversion a kernel makes of a tile of `f32` accumulators into 16-bit
//! operands (the probabilities of attention, the A operand of the next product).
//!
//! On a GPU of compute capability 8.0 or newer the pair is two conversion instructions that the
//! assembler packs into one when the pair fills one 32-bit register (an mma operand), without
//! the check `bf16::from_f32` makes to keep a NaN's sign and payload: the FlashAttention-3
//! example's bf16 row ran at 502 TFLOP/s on an H200 with two `from_f32` and 592 with the pair.
//! The values are rounded as `from_f32` rounds them (to nearest, ties to even; overflow to
//! infinity); every NaN becomes the NaN of bits `0x7fff`, as the instruction gives it, on every
//! device.

use half::{bf16, f16};

/// The 16-bit floats whose pairs convert in one instruction.
pub trait HalfPair: Sized {
    /// `[Self::from_f32(a), Self::from_f32(b)]`, except that a NaN becomes the NaN of bits
    /// `0x7fff` (module docs).
    ///
    /// ```
    /// use cuprum_runtime::prelude::*;
    ///
    /// let [x, y] = bf16::from_f32_pair(1.0 + 1.0 / 256.0, f32::NAN);
    /// assert_eq!((x.to_bits(), y.to_bits()), (0x3f80, 0x7fff)); // ties to even; the NaN
    /// ```
    fn from_f32_pair(a: f32, b: f32) -> [Self; 2];
}

impl HalfPair for f16 {
    fn from_f32_pair(a: f32, b: f32) -> [f16; 2] {
        let one = |x: f32| if x.is_nan() { f16::from_bits(0x7fff) } else { f16::from_f32(x) };
        [one(a), one(b)]
    }
}

impl HalfPair for bf16 {
    fn from_f32_pair(a: f32, b: f32) -> [bf16; 2] {
        let one = |x: f32| if x.is_nan() { bf16::from_bits(0x7fff) } else { bf16::from_f32(x) };
        [one(a), one(b)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_round_as_from_f32_and_canonicalise_nans() {
        let xs = [0.0f32, -0.0, 1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, 65520.0, f32::MAX, 1e-40, -3.5, f32::INFINITY, f32::NEG_INFINITY];
        for &a in &xs {
            for &b in &xs {
                let [x, y] = bf16::from_f32_pair(a, b);
                assert_eq!((x.to_bits(), y.to_bits()), (bf16::from_f32(a).to_bits(), bf16::from_f32(b).to_bits()));
                let [x, y] = f16::from_f32_pair(a, b);
                assert_eq!((x.to_bits(), y.to_bits()), (f16::from_f32(a).to_bits(), f16::from_f32(b).to_bits()));
            }
        }
        for nan in [f32::NAN, -f32::NAN, f32::from_bits(0x7fa1_2345), f32::from_bits(0xffb5_4321)] {
            assert_eq!(bf16::from_f32_pair(nan, 1.0).map(|v| v.to_bits()), [0x7fff, 0x3f80]);
            assert_eq!(f16::from_f32_pair(2.0, nan).map(|v| v.to_bits()), [0x4000, 0x7fff]);
        }
    }
}
