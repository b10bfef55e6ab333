use cuprum::prelude::*;

#[elementwise]
pub fn bucket(x: f32) -> i32 {
    match x {
        0.0 => 0,
        _ => 1,
    }
}
