use cuprum::prelude::*;

/// Blocks as expressions: scoped temporaries, nested blocks, a block as an argument.
#[elementwise]
pub fn blocks(x: f32, y: f32) -> f32 {
    let a = {
        let t = x * 2.0;
        t + 1.0
    };
    let b = {
        let t = {
            let u = y - 1.0;
            u * u
        };
        t.sqrt()
    };
    let c = (a + b).max({
        let m = a - b;
        m
    });
    {
        c * 0.5
    }
}
