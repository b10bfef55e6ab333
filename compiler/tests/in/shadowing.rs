use cuprum::prelude::*;

/// `let` with and without types, deferred initialisation, and shadowing (each binding gets its own
/// C name, so the shadowed value is still the one used in the initializer).
#[elementwise]
pub fn shadowing(x: i32) -> i64 {
    let y = x + 1;
    let y = y * 2;
    let y: i64 = y as i64;
    let z;
    if y > 10 {
        z = y - 10;
    } else {
        z = 0;
    }
    let x = {
        let x = x as i64;
        x + z
    };
    let mut acc: i64 = 0;
    let acc2 = acc;
    acc += x;
    acc + acc2 + y
}

/// Names that are C or CUDA keywords, or cuprum's type names, are renamed.
#[elementwise]
pub fn keyword_names(int: f32, float: f32, threadIdx: f32) -> f32 {
    let double = int + float;
    let f32_ = double * threadIdx;
    let class = f32_ - 1.0;
    let new = class;
    new
}
