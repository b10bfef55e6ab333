use cuprum::prelude::*;

/// Every integer type, with Rust's semantics: arithmetic wraps in the operand type (no C integer
/// promotion: `u8 + u8` is `u8`), division by -1 of MIN wraps, `-x` wraps at MIN.
#[rawkernel]
pub fn int_wrapping(
    a8: &mut [i8],
    b8: &mut [u8],
    a16: &mut [i16],
    b16: &mut [u16],
    a32: &mut [i32],
    b32: &mut [u32],
    a64: &mut [i64],
    b64: &mut [u64],
) {
    let i = grid_1d() as usize;
    let x: u8 = b8[i];
    let y: u8 = 200;
    b8[i] = x + y;
    b8[i + 1] = x * y - 3;
    a8[i] = a8[i] * 3 + 100;
    a8[i + 1] = -a8[i + 1];
    a16[i] = a16[i] * a16[i] / 7 - 1;
    b16[i] = b16[i] * 2 + 65535;
    a32[i] = a32[i] / -1 + i32::MIN;
    a32[i + 1] = a32[i + 1] % 7 - 2147483647;
    b32[i] = b32[i] * 3 + 4294967295;
    a64[i] = a64[i] * 1000000007 - i64::MAX;
    b64[i] = b64[i] - 1 + 18446744073709551615;
    let m: i64 = -9223372036854775808;
    a64[i + 1] = m / a64[i + 1];
}
