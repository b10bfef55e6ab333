use cuprum::prelude::*;

/// `while` loops: the Collatz step count, with a condition that calls a method.
#[elementwise]
pub fn collatz_steps(start: u64) -> u32 {
    let mut n = start;
    let mut steps = 0u32;
    while n != 1 && n != 0 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

/// A `while` whose condition is a block expression.
#[elementwise]
pub fn digits(x: u32) -> u32 {
    let mut v = x;
    let mut count = 1;
    while {
        v /= 10;
        v > 0
    } {
        count += 1;
    }
    count
}
