use cuprum::prelude::*;

// A mistake only the whole file shows (the attribute of `quad` checks the file too): reported
// once, at the kernel's name, with its position.
#[elementwise]
pub fn twice(x: f32) -> f32 {
    x * 2.0
}

#[elementwise]
pub fn quad(x: f32) -> f32 {
    twice(x) * 2.0
}

fn main() {}
