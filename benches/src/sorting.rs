//! The sorting rows (issue 36): `sort` and `argsort` of 2^26 random f32 keys (a stable LSD radix
//! sort, 5 bits per pass) in Gkeys/s against the target of 40 Gkeys/s (CuPy's CUB reaches 36.9,
//! torch 22.4); the ceiling column is the copy ceiling of the same run in keys per second (a copy
//! of an f32 key moves 8 bytes), and the target is the ratio that 40 Gkeys/s is of it.

use cuprum_runtime::{Array, Result, Stream};

use super::{Row, event_ms, median};

pub fn rows(copy: f64, quick: bool, stream: &Stream) -> Result<Vec<Row>> {
    let rounds = if quick { 5 } else { 20 };
    let log2 = 26;
    let n = 1usize << log2;
    // The copy ceiling in Gkeys/s: a copy of an f32 key reads 4 bytes and writes 4.
    let copy_keys = copy / 8.0;
    let target = 40.0 / copy_keys;
    let mut rows = Vec::new();
    let host: Vec<f32> = (0..n as u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            (h as f32 - 8_388_608.0) * 1e-3
        })
        .collect();
    let x = Array::<f32>::from_vec(host.clone())?;
    let s = x.sort(None)?.to_vec()?;
    let mut want = host.clone();
    want.sort_by(f32::total_cmp);
    if s != want {
        return Err(cuprum_runtime::Error::Unsupported { what: "sort of 2^26 f32 differs from the host's".into() });
    }
    let idx = x.argsort(None)?.to_vec()?;
    if idx.iter().zip(&want).any(|(&i, w)| host[i as usize] != *w) {
        return Err(cuprum_runtime::Error::Unsupported { what: "argsort of 2^26 f32 differs from the host's".into() });
    }
    drop((s, idx, want));
    for (name, arg) in [("sort of f32 keys", false), ("argsort of f32 keys", true)] {
        let mut times = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            times.push(event_ms(stream, &mut || if arg { x.argsort(None).map(drop) } else { x.sort(None).map(drop) })?);
        }
        rows.push(Row {
            name,
            value: n as f64 / (median(times) * 1e-3) / 1e9,
            unit: "Gkeys/s",
            ceiling_name: "device-to-device copy (keys/s)",
            ceiling: copy_keys,
            target: if arg { None } else { Some((">=", target)) },
            note: format!(
                "2^{log2} random keys, stable; target 40 Gkeys/s = {target:.3} of the copy's keys/s (CuPy's CUB 36.9, torch 22.4){}",
                if arg { "; i64 indices moved with the keys" } else { "" }
            ),
        });
    }
    Ok(rows)
}
