use cuprum::prelude::*;

/// A second `;` after a statement: the error points at it.
#[elementwise]
pub fn twice(x: f32) -> f32 {
    let y = x * 2.0;;
    y
}
