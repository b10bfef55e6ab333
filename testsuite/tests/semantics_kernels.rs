//! Kernels whose results on the GPU must equal the same Rust functions run on the host (a release
//! build): the executable check of docs/semantics.md. Compiled twice: as Rust (the host
//! reference) and, embedded as text, by cuprum's compiler and NVRTC.
#![allow(dead_code)]

use cuprum::prelude::*;

#[device]
pub fn wrap_i32(a: i32, b: i32) -> i32 {
    a * b + a - b * 7
}
#[device]
pub fn wrap_i64(a: i64, b: i64) -> i64 {
    a * b - (a + b) * 3
}
#[device]
pub fn narrow_u8(a: u8, b: u8) -> u8 {
    (!a).wrapping_add(b) + ((a ^ b) >> 1) * 3
}
#[device]
pub fn narrow_i8(a: i8, b: i8) -> i8 {
    (a * b) >> 2
}
#[device]
pub fn divs(a: i32, b: i32) -> i32 {
    a / b + a % b
}
#[device]
pub fn shifts(a: i32, s: u32) -> i32 {
    (a << s) ^ (a >> s)
}
#[device]
pub fn shifts_u8(a: u8, s: u32) -> u8 {
    (a << s) | (a >> (s + 3))
}
#[device]
pub fn f2i(x: f32) -> i32 {
    x as i32
}
#[device]
pub fn f2u8(x: f64) -> u8 {
    x as u8
}
#[device]
pub fn icasts(a: i64) -> i32 {
    (a as i8 as i32) + (a as u16 as i32) + ((a as f32) as i32)
}
#[device]
pub fn half_ops(a: f16, b: f16) -> f16 {
    a * b + a / b - b
}
/// The bits of `bf16::from_f32(x)`, `bf16::from_f32_pair(x, y)` and the first of
/// `f16::from_f32_pair(y, x)`, 16 bits each from the low end.
#[device]
pub fn half_conversions(x: f32, y: f32) -> u64 {
    let one = bf16::from_f32(x);
    let two = bf16::from_f32_pair(x, y);
    let h = f16::from_f32_pair(y, x);
    one.to_bits_u64() | (two[0].to_bits_u64() << 16) | (two[1].to_bits_u64() << 32) | (h[0].to_bits_u64() << 48)
}
/// The bits of `f16::from_f32(x)`, `f16::from_f32(y)`, the second of `f16::from_f32_pair(y, x)`
/// and `f16::from_f64` of an f64 made of both inputs' bits (a NaN with a 52-bit payload when `x`
/// is a NaN).
#[device]
pub fn half_conversions_f16(x: f32, y: f32) -> u64 {
    let h = f16::from_f32_pair(y, x);
    let bits = (x.to_bits_u64() << 32) | y.to_bits_u64();
    let w = f16::from_f64(f64::from_bits_u64(if x.is_nan() { bits | 0x7ff0_0000_0000_0000 } else { bits }));
    f16::from_f32(x).to_bits_u64() | (f16::from_f32(y).to_bits_u64() << 16) | (h[1].to_bits_u64() << 32) | (w.to_bits_u64() << 48)
}
#[device]
pub fn float_methods(x: f32, y: f32) -> f32 {
    x.min(y) + x.signum() + x.round() + x.clamp(-1.0, 1.0) + x.powi(3) + (x % 1.5)
}
#[device]
pub fn range_incl(lo: u8, hi: u8) -> u32 {
    let mut n = 0u32;
    for i in lo..=hi {
        n += i as u32;
    }
    n
}
#[device]
pub fn rev_step(lo: i32, hi: i32, s: u32) -> i32 {
    let mut acc = 0i32;
    for i in (lo..hi).rev().step_by(s as usize) {
        acc = acc * 31 + i;
    }
    acc
}
#[device]
pub fn labelled(n: u32) -> u32 {
    let mut c = 0u32;
    'outer: for i in 0..n {
        for j in 0..n {
            if j > i {
                continue 'outer;
            }
            if i + j > 40 {
                break 'outer;
            }
            c += i * j + 1;
        }
    }
    c
}

#[rawkernel]
pub fn k_wrap_i32(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = wrap_i32(a[i], b[i]);
    }
}
#[rawkernel]
pub fn k_wrap_i64(a: &[i64], b: &[i64], out: &mut [i64]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = wrap_i64(a[i], b[i]);
    }
}
#[rawkernel]
pub fn k_narrow(a: &[u8], b: &[u8], c: &[i8], d: &[i8], out: &mut [u8], out2: &mut [i8]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = narrow_u8(a[i], b[i]);
        out2[i] = narrow_i8(c[i], d[i]);
    }
}
#[rawkernel]
pub fn k_divs(a: &[i32], b: &[i32], out: &mut [i32]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = divs(a[i], b[i]);
    }
}
#[rawkernel]
pub fn k_shifts(a: &[i32], s: &[u32], b: &[u8], out: &mut [i32], out2: &mut [u8]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = shifts(a[i], s[i]);
        out2[i] = shifts_u8(b[i], s[i]);
    }
}
#[rawkernel]
pub fn k_casts(x: &[f32], y: &[f64], a: &[i64], out: &mut [i32], out2: &mut [u8], out3: &mut [i32]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = f2i(x[i]);
        out2[i] = f2u8(y[i]);
        out3[i] = icasts(a[i]);
    }
}
#[rawkernel]
pub fn k_half(a: &[f16], b: &[f16], out: &mut [f16]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = half_ops(a[i], b[i]);
    }
}
#[rawkernel]
pub fn k_half_conversions(x: &[f32], y: &[f32], out: &mut [u64], out_f16: &mut [u64]) {
    let i = grid_1d() as usize;
    if i < out.len() && i < out_f16.len() {
        out[i] = half_conversions(x[i], y[i]);
        out_f16[i] = half_conversions_f16(x[i], y[i]);
    }
}
#[rawkernel]
pub fn k_float_methods(x: &[f32], y: &[f32], out: &mut [f32]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = float_methods(x[i], y[i]);
    }
}
#[rawkernel]
pub fn k_loops(lo: &[u8], hi: &[u8], s: &[u32], out: &mut [u32], out2: &mut [i32], out3: &mut [u32]) {
    let i = grid_1d() as usize;
    if i < out.len() {
        out[i] = range_incl(lo[i], hi[i]);
        out2[i] = rev_step(lo[i] as i32 - 100, hi[i] as i32, s[i]);
        out3[i] = labelled(s[i] + 3);
    }
}
