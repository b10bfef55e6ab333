//! The built-in kernels of `random` (issue 36): Philox4x32-10 (Salmon et al., "Parallel random
//! numbers: as easy as 1, 2, 3", SC 2011; the constants of Random123 and cuRAND), counter-based:
//! element group `i` of a call is the block of the counter `base + i` under the key `(k0, k1)`,
//! four 32-bit words. A module of the runtime (`random` includes it as `kernels`).
//!
//! Device functions spell wrapping arithmetic out (`wrapping_add`): their host code uses Rust's
//! operators, which a debug build checks for overflow.
//!
//! Every kernel here uses only exactly rounded operations (integer arithmetic, conversions of
//! integers to floats, `+ - * /`, `sqrt`, `mul_add`, bit casts), so that the
//! CPU device, which runs the same code on the host, gives the same bits as a GPU (units are
//! compiled without contraction, docs/semantics.md). `normal` therefore computes its logarithm,
//! sine and cosine with its own polynomials (below) instead of the device's math library, whose
//! last bits differ from the host's.
//!
//! The elementwise kernels make one Philox block per thread and write four (`f32`) or two (`f64`,
//! `i64`) outputs, each to its own quarter (or half) of the result, so that every store of a warp
//! is contiguous. `normal_f32` is a raw kernel (a grid-stride loop, its round keys computed once
//! per thread in uniform registers): block `i` writes elements `4 i..4 i + 4` in one 16-byte
//! store; it is compute-bound, and its Box-Muller is counted in instructions (below).
//!
//! Precompiled: all (concrete types; `integers` for i64).

use crate::lang::prelude::*;
use cuprum_macros::{device, elementwise, rawkernel};

/// One Philox4x32 round's multipliers and the key's Weyl increments.
const M0: u64 = 0xD251_1F53;
const M1: u64 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32-10 of the counter `(lo, hi, 0, 0)` under the key `(k0, k1)`: the four words.
#[device(crate = crate)]
pub fn philox(k0: u32, k1: u32, lo: u32, hi: u32) -> [u32; 4] {
    let mut c0 = lo;
    let mut c1 = hi;
    let mut c2 = 0u32;
    let mut c3 = 0u32;
    let mut a = k0;
    let mut b = k1;
    for _ in 0..10 {
        let p0 = M0 * (c0 as u64);
        let p1 = M1 * (c2 as u64);
        let n0 = ((p1 >> 32) as u32) ^ c1 ^ a;
        let n2 = ((p0 >> 32) as u32) ^ c3 ^ b;
        c0 = n0;
        c1 = p1 as u32;
        c2 = n2;
        c3 = p0 as u32;
        a = a.wrapping_add(W0);
        b = b.wrapping_add(W1);
    }
    [c0, c1, c2, c3]
}

/// The counter of element group `i`: `base + i`.
#[device(crate = crate)]
pub fn counter(base_lo: u32, base_hi: u32, i: u64) -> u64 {
    (((base_hi as u64) << 32) | (base_lo as u64)).wrapping_add(i)
}

// ---- uniform ------------------------------------------------------------------------------

/// Four `f32`s uniform in `[lo, lo + scale)`: the top 24 bits of each word times 2^-24.
#[elementwise(crate = crate)]
pub fn uniform_f32(k0: u32, k1: u32, base_lo: u32, base_hi: u32, lo: f32, scale: f32) -> (f32, f32, f32, f32) {
    let c = counter(base_lo, base_hi, index() as u64);
    let r = philox(k0, k1, c as u32, (c >> 32) as u32);
    let unit = 1.0f32 / 16777216.0;
    (
        lo + scale * (((r[0] >> 8) as f32) * unit),
        lo + scale * (((r[1] >> 8) as f32) * unit),
        lo + scale * (((r[2] >> 8) as f32) * unit),
        lo + scale * (((r[3] >> 8) as f32) * unit),
    )
}

/// A 53-bit uniform in `[0, 1)` from two words (27 and 26 of their top bits).
#[device(crate = crate)]
pub fn unit_f64(a: u32, b: u32) -> f64 {
    ((((a >> 5) as u64) << 26) | ((b >> 6) as u64)) as f64 * (1.0 / 9007199254740992.0)
}

/// Two `f64`s uniform in `[lo, lo + scale)`.
#[elementwise(crate = crate)]
pub fn uniform_f64(k0: u32, k1: u32, base_lo: u32, base_hi: u32, lo: f64, scale: f64) -> (f64, f64) {
    let c = counter(base_lo, base_hi, index() as u64);
    let r = philox(k0, k1, c as u32, (c >> 32) as u32);
    (lo + scale * unit_f64(r[0], r[1]), lo + scale * unit_f64(r[2], r[3]))
}

// ---- integers -----------------------------------------------------------------------------

/// The high 64 bits of the 128-bit product `a * b`, from 32-bit halves.
#[device(crate = crate)]
pub fn mul_hi64(a: u64, b: u64) -> u64 {
    let (a_lo, a_hi) = (a & 0xffff_ffff, a >> 32);
    let (b_lo, b_hi) = (b & 0xffff_ffff, b >> 32);
    let ll = a_lo * b_lo;
    let lh = a_lo * b_hi;
    let hl = a_hi * b_lo;
    let mid = (ll >> 32) + (lh & 0xffff_ffff) + (hl & 0xffff_ffff);
    a_hi * b_hi + (lh >> 32) + (hl >> 32) + (mid >> 32)
}

/// Two integers in `[low, low + range)` (`range` 0 means 2^64): the high half of 64 random bits
/// times `range` (Lemire's multiply-shift without rejection: a bias below `range / 2^64`).
#[elementwise(crate = crate, instances = [i64])]
pub fn integers<T: Int>(k0: u32, k1: u32, base_lo: u32, base_hi: u32, low: i64, range: u64) -> (T, T) {
    let c = counter(base_lo, base_hi, index() as u64);
    let r = philox(k0, k1, c as u32, (c >> 32) as u32);
    let x = ((r[0] as u64) << 32) | (r[1] as u64);
    let y = ((r[2] as u64) << 32) | (r[3] as u64);
    let (dx, dy) = if range == 0 { (x, y) } else { (mul_hi64(x, range), mul_hi64(y, range)) };
    (T::from_i64(low.wrapping_add(dx as i64)), T::from_i64(low.wrapping_add(dy as i64)))
}

// ---- normal -------------------------------------------------------------------------------
//
// `f32`: Box-Muller from two words `a` and `b` of a Philox block, in about 45 instructions per
// pair of outputs, each step exactly rounded:
// - the radius `sqrt(-2 ln u)` of `u = (a + 1/2) 2^-32` (`a + 1/2` rounded once to `f32`; `u` in
//   `[2^-33, 1]`, so the largest radius is 6.76): `u = m 2^k` with `m` in [sqrt(1/2), sqrt(2))
//   by integer operations on its bits, then `-2 ln u = RHO2 (k CP 2^23 + f Q(f))` with
//   `f = m - 1` and `Q` a monic polynomial of degree 7 (`RHO2 Q` is the minimax approximation of
//   `-2 ln(1 + f) / f` in relative error, 1.7e-7), and one `sqrt`;
// - the angle: `g` uniform in [-1/2, 1/2) from the 23 high bits of `b` (exact), `cos(πg/2) =
//   LAM C(g²)` and `sin(πg/2) = LAM g S(g²)` with `C` monic of degree 3 and `S` of degree 3
//   (minimax, relative errors 3.3e-8 and 3.2e-9); bit 0 of `b` negates the cosine, bit 1 swaps
//   the two. The dihedral group of the square maps the arc [-π/4, π/4) onto the whole circle,
//   each point twice, so the angle is uniform;
// - the constant factors meet in `SIGMA = sqrt(RHO2) LAM`: `mean + (std SIGMA) sqrt(..) C(g²)`.
// Against the same transform in `f64`, the outputs of standard normals are within 3.5e-7 relative
// (5 ulps; 0.7 on average). The first two monic steps are additions: a fused multiply-add with
// two constants costs a GPU one more instruction to load one of them.
//
// `f64`: the logarithm by `u = m * 2^e` with `m` in [sqrt(1/2), sqrt(2)), `ln m = 2 atanh(s)` with
// `s = (m - 1) / (m + 1)`, `|s| < 0.172`, by its odd series. The angle: `4v = q + r` with the
// quadrant `q` the nearest integer and `r` in [-1/2, 1/2), exact; `x = r π/2` in [-π/4, π/4),
// whose sine and cosine are Taylor polynomials (the truncation below the type's half ulp), then
// rotated by `q` quarter turns.

/// `-2 ln u / RHO2` of `u = (a + 1/2) 2^-32` (see above), in `f32`: the square of the radius.
#[device(crate = crate)]
pub fn radius_sq_f32(a: u32) -> f32 {
    // The bits of `u`: those of `a + 1/2` less 32 in the exponent (`u` is at least 2^-33).
    let bits = ((a as f32) + 0.5).to_bits().wrapping_sub(32 << 23);
    // `bits - bits(sqrt(1/2))`: its exponent field is `k`, with `u = m 2^k`.
    let k_bits = bits.wrapping_sub(0x3f35_04f3) & 0xff80_0000;
    let f = f32::from_bits(bits.wrapping_sub(k_bits)) - 1.0;
    let mut q = f + -1.6051152;
    q = f.mul_add(q, 1.7068614);
    q = f.mul_add(q, -1.9689953);
    q = f.mul_add(q, 2.4706132);
    q = f.mul_add(q, -3.2982917);
    q = f.mul_add(q, 4.9472175);
    q = f.mul_add(q, -9.894362);
    // `k 2^23` is exact in `f32`; the constant is `-2 ln 2 / RHO2` times 2^-23.
    ((k_bits as i32) as f32).mul_add(-8.1756707e-7, f * q)
}

/// `(cos θ, sin θ) / LAM` of a uniform angle `θ` from the word `b` (see above), in `f32`.
#[device(crate = crate)]
pub fn circle_f32(b: u32) -> (f32, f32) {
    let g = f32::from_bits((b >> 9) + 0x3f80_0000) - 1.5;
    let z = g * g;
    let mut s = z.mul_add(0.22558714, -3.9061556);
    s = z.mul_add(s, 31.667078);
    s = z.mul_add(s, -77.00517);
    let sin = g * s;
    let mut c = z + -12.43199;
    c = z.mul_add(c, 60.479534);
    c = z.mul_add(c, -49.023014);
    // Bit 0 of `b` flips the sign bit (an add of 2^31 to the bits).
    let cos = f32::from_bits(c.to_bits().wrapping_add(b << 31));
    if (b & 2) == 0 { (cos, sin) } else { (sin, cos) }
}

/// Two `f32`s normal with mean `mean` and standard deviation `std` from the words `a` and `b`,
/// given `rsq = radius_sq_f32(a).sqrt()`.
#[device(crate = crate)]
pub fn normal_pair_f32(rsq: f32, b: u32, mean: f32, std: f32) -> (f32, f32) {
    // `SIGMA`: the factors `sqrt(RHO2)` of the radius and `LAM` of the circle's polynomials.
    let r = (std * -0.009171092) * rsq;
    let (x, y) = circle_f32(b);
    (r.mul_add(x, mean), r.mul_add(y, mean))
}

/// Philox4x32-10 of the counter `(lo, hi, 0, 0)` with the round keys `ka`, `kb` (the key plus
/// `r` Weyl increments in round `r`, from [`round_keys`]): [`philox`]'s words.
#[device(crate = crate)]
pub fn philox_keyed(ka: [u32; 10], kb: [u32; 10], lo: u32, hi: u32) -> [u32; 4] {
    let mut c0 = lo;
    let mut c1 = hi;
    let mut c2 = 0u32;
    let mut c3 = 0u32;
    for r in 0..10 {
        let p0 = M0 * (c0 as u64);
        let p1 = M1 * (c2 as u64);
        let n0 = ((p1 >> 32) as u32) ^ c1 ^ ka[r];
        let n2 = ((p0 >> 32) as u32) ^ c3 ^ kb[r];
        c0 = n0;
        c1 = p1 as u32;
        c2 = n2;
        c3 = p0 as u32;
    }
    [c0, c1, c2, c3]
}

/// Eight `f32`s normal with mean `mean` and standard deviation `std`: Philox blocks `base + i`
/// and `base + j` (four Box-Muller pairs) written to `y[4 i..4 i + 4]` and `y[4 j..4 j + 4]`. Both
/// blocks' rounds, then the four logarithms, then the four square roots: each stage's
/// independent chains sit in one basic block, which the compiler interleaves (a square root's
/// slow path is a branch, which code written block after block would put between them). With
/// `two == false`, block `i` only.
///
/// # Safety
///
/// `y` holds at least `4 i + 4` elements, and `4 j + 4` when `two` (the stores are not checked).
#[device(crate = crate, unchecked)]
#[allow(clippy::too_many_arguments)] // two blocks, the key schedule, the counter and the law
pub unsafe fn normal_blocks_f32(
    y: &mut [f32],
    i: u32,
    j: u32,
    two: bool,
    ka: [u32; 10],
    kb: [u32; 10],
    base: u64,
    mean: f32,
    std: f32,
) {
    let c = base.wrapping_add(i as u64);
    let d = base.wrapping_add(j as u64);
    let r = philox_keyed(ka, kb, c as u32, (c >> 32) as u32);
    let s = philox_keyed(ka, kb, d as u32, (d >> 32) as u32);
    let q = [radius_sq_f32(r[0]), radius_sq_f32(r[2]), radius_sq_f32(s[0]), radius_sq_f32(s[2])];
    let t = [q[0].sqrt(), q[1].sqrt(), q[2].sqrt(), q[3].sqrt()];
    let (z0, z1) = normal_pair_f32(t[0], r[1], mean, std);
    let (z2, z3) = normal_pair_f32(t[1], r[3], mean, std);
    store4(y, 4 * (i as usize), [z0, z1, z2, z3]);
    if two {
        let (w0, w1) = normal_pair_f32(t[2], s[1], mean, std);
        let (w2, w3) = normal_pair_f32(t[3], s[3], mean, std);
        store4(y, 4 * (j as usize), [w0, w1, w2, w3]);
    }
}

/// `f32`s normal with mean `mean` and standard deviation `std`: Philox block `base + i` gives
/// `y[4 i..4 i + 4]`, two Box-Muller pairs, for `i < blocks`. Any grid of fewer than 2^31
/// threads (a grid-stride loop); `y` holds at least `4 * blocks` elements, `blocks` at most 2^31.
#[rawkernel(crate = crate, unchecked)]
pub fn normal_f32(y: &mut [f32], blocks: u32, k0: u32, k1: u32, base: u64, mean: f32, std: f32) {
    // The round keys, once per thread (registers, not recomputed per block).
    let mut ka = [0u32; 10];
    let mut kb = [0u32; 10];
    for r in 0..10 {
        ka[r] = k0.wrapping_add(W0.wrapping_mul(r as u32));
        kb[r] = k1.wrapping_add(W1.wrapping_mul(r as u32));
    }
    let mut i = grid_1d();
    let step = grid_size_1d();
    // Two blocks a grid apart per step. `i + step` stays below 2^32: `i < blocks + step`, both
    // at most 2^31.
    while i + step < blocks {
        // SAFETY: `i < i + step < blocks`, and `y` holds `4 * blocks` elements.
        unsafe { normal_blocks_f32(y, i, i + step, true, ka, kb, base, mean, std) };
        i += 2 * step;
    }
    if i < blocks {
        // SAFETY: `i < blocks`, and `y` holds `4 * blocks` elements (block `i + step` is computed
        // but not stored).
        unsafe { normal_blocks_f32(y, i, i + step, false, ka, kb, base, mean, std) };
    }
}

/// `sqrt(-2 ln u)` of `u` in (0, 1], in `f64`.
#[device(crate = crate)]
pub fn radius_f64(u: f64) -> f64 {
    let bits = u.to_bits();
    let mut e = ((bits >> 52) as i32) - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = s2.mul_add(1.0 / 21.0, 1.0 / 19.0);
    p = s2.mul_add(p, 1.0 / 17.0);
    p = s2.mul_add(p, 1.0 / 15.0);
    p = s2.mul_add(p, 1.0 / 13.0);
    p = s2.mul_add(p, 1.0 / 11.0);
    p = s2.mul_add(p, 1.0 / 9.0);
    p = s2.mul_add(p, 1.0 / 7.0);
    p = s2.mul_add(p, 1.0 / 5.0);
    p = s2.mul_add(p, 1.0 / 3.0);
    p = s2.mul_add(p, 1.0);
    // ln 2 in two parts: `e * LN2_HI` is exact for |e| < 2^11.
    let ln_u = (e as f64).mul_add(1.9082149292705877e-10, (e as f64).mul_add(0.6931471803691238, 2.0 * s * p));
    (-2.0 * ln_u).sqrt()
}

/// `(cos 2πv, sin 2πv)` of `v = w * 2^-53`, `w` below 2^53, in `f64`.
#[device(crate = crate)]
pub fn circle_f64(w: u64) -> (f64, f64) {
    let q = (w + (1u64 << 50)) >> 51;
    let r = ((w as i64) - ((q << 51) as i64)) as f64 * (1.0 / 2251799813685248.0);
    let x = r * std::f64::consts::FRAC_PI_2;
    let x2 = x * x;
    let mut s = x2.mul_add(1.0 / 355687428096000.0, -1.0 / 1307674368000.0);
    s = x2.mul_add(s, 1.0 / 6227020800.0);
    s = x2.mul_add(s, -1.0 / 39916800.0);
    s = x2.mul_add(s, 1.0 / 362880.0);
    s = x2.mul_add(s, -1.0 / 5040.0);
    s = x2.mul_add(s, 1.0 / 120.0);
    s = x2.mul_add(s, -1.0 / 6.0);
    let sin = (x * x2).mul_add(s, x);
    let mut c = x2.mul_add(1.0 / 6402373705728000.0, -1.0 / 20922789888000.0);
    c = x2.mul_add(c, 1.0 / 87178291200.0);
    c = x2.mul_add(c, -1.0 / 479001600.0);
    c = x2.mul_add(c, 1.0 / 3628800.0);
    c = x2.mul_add(c, -1.0 / 40320.0);
    c = x2.mul_add(c, 1.0 / 720.0);
    c = x2.mul_add(c, -1.0 / 24.0);
    c = x2.mul_add(c, 0.5);
    let cos = x2.mul_add(-c, 1.0);
    let k = q & 3;
    if k == 0 {
        (cos, sin)
    } else if k == 1 {
        (-sin, cos)
    } else if k == 2 {
        (-cos, -sin)
    } else {
        (sin, -cos)
    }
}

/// Two `f64`s normal with mean `mean` and standard deviation `std`: one Box-Muller pair.
#[elementwise(crate = crate)]
pub fn normal_f64(k0: u32, k1: u32, base_lo: u32, base_hi: u32, mean: f64, std: f64) -> (f64, f64) {
    let c = counter(base_lo, base_hi, index() as u64);
    let r = philox(k0, k1, c as u32, (c >> 32) as u32);
    let u = ((((r[0] >> 5) as u64) << 26) | ((r[1] >> 6) as u64)) + 1;
    let v = (((r[2] >> 5) as u64) << 26) | ((r[3] >> 6) as u64);
    let rad = radius_f64(u as f64 * (1.0 / 9007199254740992.0));
    let (cv, sv) = circle_f64(v);
    (mean + std * (rad * cv), mean + std * (rad * sv))
}
