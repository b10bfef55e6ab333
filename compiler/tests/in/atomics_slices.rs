use cuprum::prelude::*;

/// All eleven atomics on global slices, each for the element types CUDA supports; every atomic
/// returns the old value.
#[rawkernel]
pub fn atomics_ints(c32: &mut [i32], u32s: &mut [u32], c64: &mut [i64], u64s: &mut [u64], old: &mut [i64]) {
    let i = grid_1d();
    let mut o: i64 = 0;
    o += atomic_add(c32, 0u32, 1) as i64;
    o += atomic_sub(c32, 1usize, 2) as i64;
    o += atomic_exch(c32, 2i32, i as i32) as i64;
    o += atomic_min(c32, 3u64, -5) as i64;
    o += atomic_max(c32, 4i64, 5) as i64;
    o += atomic_and(c32, 5u32, 0x0f) as i64;
    o += atomic_or(c32, 6u32, 0x10) as i64;
    o += atomic_xor(c32, 7u32, -1) as i64;
    o += atomic_cas(c32, 8u32, 0, 1) as i64;
    o += atomic_inc(u32s, 0u32, 16) as i64;
    o += atomic_dec(u32s, 1u32, 16) as i64;
    o += atomic_add(u32s, 2u32, 3) as i64 + atomic_max(u32s, 3u32, i) as i64;
    o += atomic_add(c64, 0u32, 1) + atomic_sub(c64, 1u32, 1) + atomic_min(c64, 2u32, -1);
    o += atomic_max(c64, 3u32, 1) + atomic_and(c64, 4u32, 3) + atomic_or(c64, 5u32, 3);
    o += atomic_xor(c64, 6u32, 3) + atomic_exch(c64, 7u32, 9) + atomic_cas(c64, 8u32, 9, 10);
    let u = atomic_add(u64s, 0u32, 1) ^ atomic_sub(u64s, 1u32, 1) ^ atomic_min(u64s, 2u32, 7)
        ^ atomic_max(u64s, 3u32, 7) ^ atomic_and(u64s, 4u32, 1) ^ atomic_or(u64s, 5u32, 1)
        ^ atomic_xor(u64s, 6u32, 1) ^ atomic_exch(u64s, 7u32, 2) ^ atomic_cas(u64s, 8u32, 2, 3);
    old[i as usize] = o + u as i64;
}

/// Float atomics: add, sub, exch, min, max, cas on f32 and f64; add on f16 and bf16.
#[rawkernel]
pub fn atomics_floats(f: &mut [f32], d: &mut [f64], h: &mut [f16], b: &mut [bf16], x: f32) {
    let a = atomic_add(f, 0u32, x) + atomic_sub(f, 1u32, x) + atomic_exch(f, 2u32, x);
    let m = atomic_min(f, 3u32, x) + atomic_max(f, 4u32, x) + atomic_cas(f, 5u32, 0.0, x);
    let y = x as f64;
    let e = atomic_add(d, 0u32, y) + atomic_sub(d, 1u32, y) + atomic_exch(d, 2u32, y)
        + atomic_min(d, 3u32, y) + atomic_max(d, 4u32, y) + atomic_cas(d, 5u32, 1.0, y);
    let hh = atomic_add(h, 0u32, f16::from_f32(x));
    let bb = atomic_add(b, 0u32, bf16::from_f32(x));
    atomic_exch(f, 6u32, a + m + e as f32 + hh.to_f32() + bb.to_f32());
}

/// u16 compare-and-swap and exchange, and a generic atomic through `Number`.
#[rawkernel]
pub fn atomics_misc<T: Number>(s: &mut [u16], acc: &mut [T], v: T) {
    let old = atomic_cas(s, 0u32, 0, 1);
    atomic_exch(s, 1u32, old);
    atomic_add(acc, grid_1d(), v);
}
