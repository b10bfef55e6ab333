use cuprum::prelude::*;

/// Every compound assignment operator, on integers (wrapping, no promotion) and floats.
#[rawkernel]
pub fn compound_ops(ints: &mut [u16], floats: &mut [f32], signed: &mut [i8]) {
    let i = grid_1d() as usize;
    let mut a = ints[i];
    a += 40000;
    a -= 3;
    a *= 7;
    a /= 3;
    a %= 1000;
    a &= 0xff0f;
    a |= 0x10;
    a ^= 0x5555;
    a <<= 3;
    a >>= 1;
    ints[i] = a;
    let mut f = floats[i];
    f += 1.5;
    f -= 0.25;
    f *= 2.0;
    f /= 3.0;
    f %= 10.0;
    floats[i] = f;
    signed[i] += 100;
    signed[i] *= -2;
    signed[i] >>= 1u32;
    signed[i] <<= 7i64;
    signed[i] >>= ints[i] as i64;
}

/// A compound assignment whose place calls a function: the call happens once.
#[rawkernel]
pub fn bump_slot(slots: &mut [u8], next: &mut [u32]) {
    slots[(atomic_add(next, 0u32, 1) % 4) as usize] += 1;
}
