use cuprum::prelude::*;

/// Shifts follow Rust's release behaviour: the amount is masked to the width, `>>` is arithmetic
/// on signed types and logical on unsigned, and the amount may have any integer type.
#[rawkernel]
pub fn shifts(a: &mut [u32], b: &mut [i32], c: &mut [u8], d: &mut [i64], k: u32) {
    let i = grid_1d() as usize;
    a[i] = a[i] << k;
    a[i + 1] = a[i + 1] >> (k + 1);
    b[i] = b[i] >> 31;
    b[i + 1] = -1 << (k as u8 + 33);
    c[i] = c[i] << 7 | c[i] >> 1;
    c[i + 1] = 0xf0u8 >> (k as i32 + 9);
    d[i] = d[i] << 63i64;
    d[i + 1] = d[i + 1] >> k as usize;
}

/// Shifts of a generic integer by a `u32` amount, from a generic raw kernel.
#[device]
fn mix_bits<T: Int>(x: T, n: u32) -> T {
    (x << n) ^ (x >> (n + 1))
}

#[rawkernel(instances = [u8, i16, u64])]
pub fn mix_all<T: Int>(x: &mut [T], n: u32) {
    let i = grid_1d() as usize;
    x[i] = mix_bits(x[i], n);
    x[i] <<= n;
}
