use cuprum::prelude::*;

#[elementwise]
pub fn scaled<T: Float>(x: T, y: T) -> T {
    let s = x.unwrap();
    let t = Some(y);
    let u = (0..4).map(|k| k).sum::<i32>();
    x * y
}

fn main() {}
