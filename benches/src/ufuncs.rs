//! Issue 36's ufunc and random rows: a sample of eight NumPy ufuncs on 2^28 elements (`tan`,
//! `arctan2`, `power`, `logaddexp`, `isnan`, `floor_divide` of f32, `bitwise_xor` of i32, and
//! `where`), each through its `Array` method as a program calls it (the output allocated by the
//! call, from the pool after the first), as GB/s (bytes read + written / time, CUDA events,
//! median) against the device-to-device copy ceiling; and `random::Generator::normal` of f32,
//! counting the bytes it writes.

use cuprum_runtime::random::Generator;
use cuprum_runtime::{Event, Result, Stream, where_};

use super::{Row, median};

/// The median time in ms of `f` over `rounds` event-timed calls after one warm-up call (which also
/// compiles an instance that is not precompiled).
fn time_ms<R>(rounds: usize, stream: &Stream, mut f: impl FnMut() -> Result<R>) -> Result<f64> {
    f()?;
    stream.synchronize()?;
    let mut t = Vec::new();
    for _ in 0..rounds {
        let a = Event::record(stream)?;
        let r = f()?;
        let b = Event::record(stream)?;
        b.synchronize()?;
        drop(r);
        t.push(Event::elapsed_ms(&a, &b)? as f64);
    }
    Ok(median(t))
}

/// The rows; `copy` is the in-run device-to-device copy ceiling (GB/s).
pub fn rows(copy: f64, quick: bool, stream: &Stream) -> Result<Vec<Row>> {
    let rounds = if quick { 5 } else { 20 };
    let log2 = if quick { 26 } else { 28 };
    let n = 1usize << log2;
    let mut g = Generator::new(36);
    let x = g.uniform::<f32>(0.5, 2.0, n)?;
    let y = g.uniform::<f32>(-2.0, 2.0, n)?;
    let i = g.integers::<i32>(i32::MIN.into(), i32::MAX.into(), n)?;
    let j = g.integers::<i32>(i32::MIN.into(), i32::MAX.into(), n)?;
    let mask = x.gt(1.0)?;
    let gbs = |bytes: f64, ms: f64| bytes / (ms * 1e-3) / 1e9;
    let (unary, binary) = (8.0 * n as f64, 12.0 * n as f64);
    let mut rows = Vec::new();
    let mut push = |name: &'static str, bytes: f64, ms: f64, target: f64, note: &str| {
        rows.push(Row {
            name,
            value: gbs(bytes, ms),
            unit: "GB/s",
            ceiling_name: "device-to-device copy",
            ceiling: copy,
            target: Some((">=", target)),
            note: format!("2^{log2} elements{note}"),
        });
    };
    push("ufunc tan f32", unary, time_ms(rounds, stream, || x.tan())?, 0.95, "");
    push("ufunc arctan2 f32", binary, time_ms(rounds, stream, || x.arctan2(&y))?, 0.95, "");
    push("ufunc power f32", binary, time_ms(rounds, stream, || x.power(&y))?, 0.95, "");
    push("ufunc logaddexp f32", binary, time_ms(rounds, stream, || x.logaddexp(&y))?, 0.95, "");
    push("ufunc isnan f32", 5.0 * n as f64, time_ms(rounds, stream, || x.isnan())?, 0.95, ", bool output");
    push("ufunc floor_divide f32", binary, time_ms(rounds, stream, || x.floor_divide(&y))?, 0.95, "");
    push("ufunc bitwise_xor i32", binary, time_ms(rounds, stream, || &i ^ &j)?, 0.95, "");
    push("ufunc where f32", 13.0 * n as f64, time_ms(rounds, stream, || where_(&mask, &x, &y))?, 0.95, ", bool mask");
    push(
        "random normal f32",
        4.0 * n as f64,
        time_ms(rounds, stream, || g.normal::<f32>(0.0, 1.0, n))?,
        0.90,
        ", write-only bytes; Philox4x32-10, four outputs per block",
    );
    Ok(rows)
}
