use cuprum::prelude::*;

#[device]
fn factorial(n: u64) -> u64 {
    if n <= 1 { 1 } else { n * factorial(n - 1) }
}

#[elementwise]
pub fn fact(n: u64) -> u64 {
    factorial(n)
}
