use cuprum::prelude::*;

/// `loop` with `break value`: Newton's method for the square root.
#[elementwise]
pub fn newton_sqrt(x: f64) -> f64 {
    let mut g = if x > 1.0 { x } else { 1.0 };
    let mut k = 0;
    let r = loop {
        let next = 0.5 * (g + x / g);
        if (next - g).abs() < 1e-12 || k == 50 {
            break next;
        }
        g = next;
        k += 1;
    };
    r
}

/// A `loop` as the tail of a device function, and `loop` without a value.
#[device]
fn first_set_bit(mut x: u32) -> u32 {
    let mut i = 0u32;
    loop {
        if x & 1 == 1 || i == 32 {
            break i;
        }
        x >>= 1;
        i += 1;
    }
}

#[elementwise]
pub fn lowest_bit(x: u32) -> u32 {
    let mut spins = 0u32;
    loop {
        spins += 1;
        if spins > 3 {
            break;
        }
    }
    first_set_bit(x) + spins
}
