use cuprum::prelude::*;

/// `if`/`else` as an expression, `else if` chains, and `if` without `else` as a statement.
#[elementwise]
pub fn piecewise(x: f32) -> f32 {
    let y = if x < -1.0 {
        -1.0
    } else if x > 1.0 {
        1.0
    } else {
        x
    };
    let mut z = y * 2.0;
    if z > 1.5 {
        z = 1.5;
    }
    z + if y == 0.0 { 1.0 } else { 0.0 }
}

/// Nested `if` expressions as arguments and in a return position.
#[device]
fn sign_i32(x: i32) -> i32 {
    if x > 0 { 1 } else if x < 0 { -1 } else { 0 }
}

#[elementwise]
pub fn sign_sum(a: i32, b: i32) -> i32 {
    sign_i32(if a > b { a - b } else { b - a }) + sign_i32(a)
}
