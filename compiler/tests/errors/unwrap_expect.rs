use cuprum::prelude::*;

#[elementwise]
pub fn checked_div(a: i32, b: i32) -> i32 {
    let q = a.checked_div(b).unwrap();
    q + a.checked_rem(b).expect("nonzero")
}
