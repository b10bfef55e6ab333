//! The fusion rows (issue 17, docs/fusion.md): `#[fuse]` functions of `fused.rs` against the
//! device-to-device copy ceiling of the same run, counting only their essential bytes (the input
//! read once, the output written once; layer norm's scale and shift rows are negligible).
//!
//! - a chain of N cheap elementwise operations on 2^28 f32, N = 1, 2, 4, 8 (target >= 0.95), and
//!   the same function unfused (one kernel per operation) for N = 8;
//! - softmax and layer norm over the rows of (8192, 8192) f32 (target >= 0.85), and unfused.
//!
//! Every fused result is checked against the unfused one before it is timed.

use cuprum_runtime::{Array, Error, Result, Stream};

use super::fused;
use super::reduction::time_ms;
use super::Row;

/// A fused row: GB/s of `bytes` moved in the event-timed median of `call`.
struct Case<'a> {
    name: &'static str,
    bytes: f64,
    target: Option<f64>,
    note: String,
    call: Box<dyn FnMut() -> Result<()> + 'a>,
}

/// The largest relative difference between two arrays (against 1 near zero).
fn max_rel(a: &Array<f32>, b: &Array<f32>) -> Result<f64> {
    let (a, b) = (a.to_vec()?, b.to_vec()?);
    Ok(a.iter().zip(&b).map(|(x, y)| ((x - y).abs() / y.abs().max(1.0)) as f64).fold(0.0, f64::max))
}

fn check(what: &str, fused: &Array<f32>, unfused: &Array<f32>, tol: f64) -> Result<()> {
    let d = max_rel(fused, unfused)?;
    if d > tol {
        return Err(Error::Unsupported { what: format!("fused {what} differs from the unfused function by {d:e} (relative)") });
    }
    Ok(())
}

fn filled(shape: &[usize], seed: u64) -> Result<Array<f32>> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((((i as u64).wrapping_mul(2654435761) ^ seed) % 1009) as f32) / 97.0 - 5.0).collect();
    Array::from_shape_vec(shape.to_vec(), v)
}

/// The rows; `copy` is the in-run device-to-device copy ceiling (GB/s).
pub fn rows(stream: &Stream, copy: f64, quick: bool, rounds: usize) -> Result<Vec<Row>> {
    let n = 1usize << if quick { 26 } else { 28 };
    let x = filled(&[n], 1)?;
    let (r, c) = if quick { (2048, 8192) } else { (8192, 8192) };
    let m = filled(&[r, c], 7)?;
    let gamma = filled(&[c], 3)?;
    let beta = filled(&[c], 5)?;
    let x_ref = &x;
    let chain_bytes = (2 * 4 * n) as f64;
    type Chain = (&'static str, fn(&Array<f32>) -> Result<Array<f32>>, fn(&Array<f32>) -> Result<Array<f32>>);
    let chains: [Chain; 4] = [
        ("#[fuse] chain of 1 op, 2^28 f32", fused::chain1::call, fused::chain1),
        ("#[fuse] chain of 2 ops, 2^28 f32", fused::chain2::call, fused::chain2),
        ("#[fuse] chain of 4 ops, 2^28 f32", fused::chain4::call, fused::chain4),
        ("#[fuse] chain of 8 ops, 2^28 f32", fused::chain8::call, fused::chain8),
    ];
    let mut cases: Vec<Case<'_>> = Vec::new();
    for (name, call, unfused) in chains {
        check(name, &call(x_ref)?, &unfused(x_ref)?, 1e-6)?;
        cases.push(Case { name, bytes: chain_bytes, target: Some(0.95), note: "one elementwise kernel; x read once, y written once".into(), call: Box::new(move || call(x_ref).map(drop)) });
    }
    cases.push(Case {
        name: "chain of 8 ops unfused (the same function), 2^28 f32",
        bytes: chain_bytes,
        target: None,
        note: "8 kernels, 7 intermediate arrays; essential bytes only".into(),
        call: Box::new(move || fused::chain8(x_ref).map(drop)),
    });

    let row_bytes = (2 * 4 * r * c) as f64;
    check("softmax", &fused::softmax::call(&m)?, &fused::softmax(&m)?, 1e-5)?;
    check("layer norm", &fused::layer_norm::call(&m, &gamma, &beta, 1e-5)?, &fused::layer_norm(&m, &gamma, &beta, 1e-5)?, 1e-4)?;
    let (mr, gr, br) = (&m, &gamma, &beta);
    // The launch the generated `call` makes (ROW_REGS = 32 columns per thread in registers, blocks of ROW_BLOCK = 256).
    let (config, _) = cuprum_runtime::__workspace::fuse::RowPlan::new("softmax", &["x"], &[&[r, c]], &[-1])?.config(0, 4, 32, 256);
    let threads = config.block.x;
    let shape = format!("({r}, {c}) f32");
    cases.push(Case {
        name: "#[fuse] softmax over rows, (8192, 8192) f32",
        bytes: row_bytes,
        target: Some(0.85),
        note: format!("{shape}; one kernel, a block of {threads} per row, 3 passes over the row, the thread's 32 columns of the row loaded at once into registers"),
        call: Box::new(move || fused::softmax::call(mr).map(drop)),
    });
    cases.push(Case {
        name: "softmax unfused (the same function)",
        bytes: row_bytes,
        target: None,
        note: format!("{shape}; max, subtract, exp, sum, divide: 5 kernels"),
        call: Box::new(move || fused::softmax(mr).map(drop)),
    });
    cases.push(Case {
        name: "#[fuse] layer norm over rows, (8192, 8192) f32",
        bytes: row_bytes,
        target: Some(0.85),
        note: format!("{shape}; one kernel, 3 passes over the row; scale and shift broadcast per column"),
        call: Box::new(move || fused::layer_norm::call(mr, gr, br, 1e-5).map(drop)),
    });
    cases.push(Case {
        name: "layer norm unfused (the same function)",
        bytes: row_bytes,
        target: None,
        note: format!("{shape}; 10 kernels"),
        call: Box::new(move || fused::layer_norm(mr, gr, br, 1e-5).map(drop)),
    });

    let mut rows = Vec::new();
    for mut case in cases {
        let t = time_ms(stream, rounds, &mut case.call)?;
        rows.push(Row {
            name: case.name,
            value: case.bytes / (t * 1e-3) / 1e9,
            unit: "GB/s",
            ceiling_name: "device-to-device copy",
            ceiling: copy,
            target: case.target.map(|t| (">=", t)),
            note: format!("{}; {t:.3} ms", case.note),
        });
    }
    Ok(rows)
}
