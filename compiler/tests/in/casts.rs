use cuprum::prelude::*;

/// Rust `as` casts: float -> int saturates (NaN -> 0), int -> float rounds, int -> int wraps or
/// extends, bool -> int, and f32 <-> f64.
#[rawkernel]
pub fn casts(f: &[f32], d: &[f64], ints: &mut [i32], bytes: &mut [u8], wide: &mut [u64], out: &mut [f32]) {
    let i = grid_1d() as usize;
    ints[i] = f[i] as i32;
    bytes[i] = f[i] as u8;
    bytes[i + 1] = d[i] as u8;
    wide[i] = d[i] as u64;
    wide[i + 1] = -1.5f64 as u64;
    ints[i + 1] = d[i] as i32 + (d[i] as i16) as i32 + (f[i] as i8) as i32;
    let big: i64 = 300 + ints[i] as i64;
    bytes[i + 2] = big as u8;
    ints[i + 2] = big as u16 as i16 as i32;
    wide[i + 2] = ints[i] as u64;
    out[i] = big as f32 + wide[i] as f32 + d[i] as f32;
    out[i + 1] = (true as i32) as f32 + (bytes[i] > 3) as u8 as f32;
    let back = out[i] as f64 as f32;
    out[i + 2] = back;
    wide[i + 3] = (i as u32) as u64 + 7usize as u64;
}
