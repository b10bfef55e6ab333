//! The array-manipulation rows (issue 36): `concatenate` of two 2^28 f32 arrays against the copy
//! ceiling. Each input is copied into its slice of the result by the built-in copy kernel (a
//! C-contiguous slice: the contiguous, vectorised variant), so the row reads and writes each
//! element once: 16 bytes per element of the result counted as copy bytes (4 read + 4 written
//! per element, two inputs and their two halves of the output).

use cuprum_runtime::array::concatenate;
use cuprum_runtime::elementwise::variant_counts;
use cuprum_runtime::{Array, Result, Stream};

use super::{Row, event_ms, median};

pub fn rows(copy: f64, quick: bool, stream: &Stream) -> Result<Vec<Row>> {
    let rounds = if quick { 5 } else { 20 };
    let log2 = if quick { 26 } else { 28 };
    let n = 1usize << log2;
    let a = Array::<f32>::from_vec((0..n).map(|i| (i % 1009) as f32).collect())?;
    let b = Array::<f32>::from_vec((0..n).map(|i| -((i % 997) as f32)).collect())?;
    // Warm-up (loads the copy kernel; the pool keeps the result's 2 GiB for the timed rounds),
    // and a check of the ends of both halves.
    let before = variant_counts();
    let c = concatenate(&[&a, &b], 0)?;
    let after = variant_counts();
    let (contig, vector) = (after.contig - before.contig, after.vector - before.vector);
    let ends = [
        c.slice(0, 0..1)?.item()?,
        c.slice(0, (n as isize - 1)..n as isize)?.item()?,
        c.slice(0, n as isize..n as isize + 1)?.item()?,
        c.slice(0, -1..)?.item()?,
    ];
    let want = [
        0.0,
        ((n - 1) % 1009) as f32,
        -0.0,
        -(((n - 1) % 997) as f32),
    ];
    if ends != want {
        return Err(cuprum_runtime::Error::Unsupported {
            what: format!("concatenate gave {ends:?} at the halves' ends, expected {want:?}"),
        });
    }
    drop(c);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut keep = None;
        times.push(event_ms(stream, &mut || {
            keep = Some(concatenate(&[&a, &b], 0)?);
            Ok(())
        })?);
        drop(keep);
    }
    let bytes = 16.0 * n as f64;
    Ok(vec![Row {
        name: "concatenate two f32 arrays",
        value: bytes / (median(times) * 1e-3) / 1e9,
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy,
        target: Some((">=", 0.95)),
        note: format!(
            "2 x 2^{log2} elements; {contig} contig launches ({vector} vectorised) per call, 2 \
             expected (CuPy 0.39)"
        ),
    }])
}
