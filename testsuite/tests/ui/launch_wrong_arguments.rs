// A launch is type-checked by rustc: the element type must match the other arguments (generic
// inference) and the bound, a `&mut [T]` needs `&mut Array<T>`, scalars have their exact type.
use cuprum::prelude::*;
use cuprum::runtime::{Array, LaunchConfig};

#[rawkernel]
pub fn scale<T: Float>(x: &[T], y: &mut [T], s: T) {
    let i = grid_1d() as usize;
    y[i] = x[i] * s;
}

fn main() -> cuprum::runtime::Result<()> {
    let cfg = LaunchConfig::new(1, 32);
    let x = Array::<f32>::zeros(32)?;
    let mut y64 = Array::<f64>::zeros(32)?;
    let mut y = Array::<f32>::zeros(32)?;
    let xi = Array::<i32>::zeros(32)?;
    let mut yi = Array::<i32>::zeros(32)?;
    scale::launch(&cfg, &x, &mut y64, 2.0)?;
    scale::launch(&cfg, &x, &y, 2.0)?;
    scale::launch(&cfg, &x, &mut y, 2.0f64)?;
    scale::launch(&cfg, &xi, &mut yi, 2)?;
    Ok(())
}
