//! The scan and counting rows (issue 36): `cumsum` of 2^28 f32 (a single-pass scan with
//! decoupled look-back: 8 bytes per element, what a copy moves) and `bincount` of 2^28 `u8`
//! into 256 bins (counting the bytes read, 1 per element, against the copy ceiling's bytes per
//! second), each against the copy ceiling of the same run; `histogram` and `searchsorted` are
//! printed without a target.

use cuprum_runtime::{Array, Result, Side, Stream};

use super::{Row, event_ms, median};

pub fn rows(copy: f64, quick: bool, stream: &Stream) -> Result<Vec<Row>> {
    let rounds = if quick { 5 } else { 20 };
    let log2 = if quick { 26 } else { 28 };
    let n = 1usize << log2;
    let mut rows = Vec::new();

    // cumsum: integer values, so that the check is exact.
    let x = Array::<f32>::from_vec((0..n).map(|i| (i % 3) as f32).collect())?;
    let y = x.cumsum(None)?;
    let last = y.slice(0, -1..)?.to_vec()?[0];
    let want = (0..n).map(|i| (i % 3) as f64).sum::<f64>();
    if (last as f64 - want).abs() > want * 1e-6 {
        return Err(cuprum_runtime::Error::Unsupported { what: format!("cumsum's last element is {last}, expected {want}") });
    }
    drop(y);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut keep = None;
        times.push(event_ms(stream, &mut || {
            keep = Some(x.cumsum(None)?);
            Ok(())
        })?);
        drop(keep);
    }
    rows.push(Row {
        name: "cumsum of f32",
        value: 8.0 * n as f64 / (median(times) * 1e-3) / 1e9,
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy,
        target: Some((">=", 0.85)),
        note: format!("2^{log2} elements, 8 bytes each (torch 0.60, CuPy 0.26)"),
    });
    drop(x);

    // bincount of bytes into 256 bins: the bytes read against the copy's bytes per second.
    let b = Array::<u8>::from_vec((0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect())?;
    let counts = b.bincount(256)?.to_vec()?;
    if counts.iter().sum::<i64>() != n as i64 {
        return Err(cuprum_runtime::Error::Unsupported { what: "bincount lost counts".into() });
    }
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        times.push(event_ms(stream, &mut || b.bincount(256).map(drop))?);
    }
    rows.push(Row {
        name: "bincount of u8 into 256 bins",
        value: n as f64 / (median(times) * 1e-3) / 1e9,
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy,
        target: Some((">=", 0.6)),
        note: format!("2^{log2} bytes read; minlength 256, so no count is read back (torch 0.038, CuPy 0.021)"),
    });
    drop(b);

    // histogram of f32 with 100 bins over a given range, and searchsorted: no target.
    let h = Array::<f32>::from_vec((0..n).map(|i| ((i % 10_007) as f32) * 1e-4).collect())?;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        times.push(event_ms(stream, &mut || h.histogram(100, Some((0.0, 1.0))).map(drop))?);
    }
    rows.push(Row {
        name: "histogram of f32, 100 bins, given range",
        value: 4.0 * n as f64 / (median(times) * 1e-3) / 1e9,
        unit: "GB/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy,
        target: None,
        note: format!("2^{log2} elements read (4 bytes each)"),
    });
    drop(h);
    let sorted = Array::<f32>::from_vec((0..1 << 20).map(|i| i as f32).collect())?;
    let v = Array::<f32>::from_vec((0..n / 4).map(|i| ((i.wrapping_mul(2_654_435_761)) % (1 << 20)) as f32).collect())?;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        times.push(event_ms(stream, &mut || sorted.searchsorted(&v, Side::Left).map(drop))?);
    }
    rows.push(Row {
        name: "searchsorted of 2^26 f32 in 2^20 sorted",
        value: (n / 4) as f64 / (median(times) * 1e-3) / 1e9,
        unit: "Gq/s",
        ceiling_name: "device-to-device copy",
        ceiling: copy,
        target: None,
        note: "queries per second (random positions: 20 dependent loads each)".into(),
    });
    Ok(rows)
}
