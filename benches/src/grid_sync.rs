//! The grid-synchronisation row (issue 18): 100 Jacobi steps over 2^16 f32 points as one
//! cooperative launch with `grid_sync()` between steps (`grid_kernels.rs`), next to the same 100
//! steps as 100 launches on one stream, in the same run (CUDA events, median of 10 rounds each,
//! timed alternately). The two results are compared first (the same arithmetic in the same order:
//! equal bit for bit).

use cuprum_runtime::LaunchConfig;
use cuprum_runtime::{Array, Error, Result, Stream};

use crate::{Row, median};

#[path = "grid_kernels.rs"]
mod kernels;

pub fn rows(stream: &Stream) -> Result<Vec<Row>> {
    let (n, steps, block) = (1usize << 16, 100u32, 256u32);
    let x0: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
    let (mut a1, mut b1) = (Array::from_slice(&x0)?, Array::from_slice(&x0)?);
    let (mut a2, mut b2) = (Array::from_slice(&x0)?, Array::from_slice(&x0)?);
    let per_step = LaunchConfig::new((n as u32).div_ceil(block), block);
    let max = kernels::jacobi_persistent::max_cooperative_blocks(&LaunchConfig::new(1u32, block))?;
    let blocks = max.min((n as u32).div_ceil(block));
    let persistent = LaunchConfig::new(blocks, block);
    let launches = |a: &mut Array<f32>, b: &mut Array<f32>| -> Result<()> {
        for k in 0..steps {
            if k % 2 == 0 {
                kernels::jacobi_step::launch(&per_step, a, b)?;
            } else {
                kernels::jacobi_step::launch(&per_step, b, a)?;
            }
        }
        Ok(())
    };
    let one = |a: &mut Array<f32>, b: &mut Array<f32>| kernels::jacobi_persistent::launch(&persistent, a, b, steps);
    launches(&mut a1, &mut b1)?;
    one(&mut a2, &mut b2)?;
    if a1.to_vec()? != a2.to_vec()? {
        return Err(Error::Unsupported { what: "the cooperative Jacobi differs from the step-per-launch one".into() });
    }
    let time = |f: &mut dyn FnMut() -> Result<()>| crate::event_ms(stream, f);
    let (mut t_one, mut t_many) = (Vec::new(), Vec::new());
    for i in 0..13 {
        let x = time(&mut || one(&mut a2, &mut b2))?;
        let y = time(&mut || launches(&mut a1, &mut b1))?;
        if i >= 3 {
            t_one.push(x);
            t_many.push(y);
        }
    }
    let (one_ms, many_ms) = (median(t_one), median(t_many));
    Ok(vec![Row {
        name: "grid_sync: 100 Jacobi steps of 2^16 f32, one launch",
        value: one_ms,
        unit: "ms",
        ceiling_name: "the same steps as 100 launches",
        ceiling: many_ms,
        target: Some(("<=", 1.0)),
        note: format!("{blocks} co-resident blocks of {block} (limit {max}); 100 launches of {} blocks on one stream", per_step.grid.x),
    }])
}
