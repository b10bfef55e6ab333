use cuprum::prelude::*;

/// `load4`/`store4` used wrongly: every mistake at its span.
#[rawkernel]
pub fn misuse(a: &[f32], out: &mut [f32], n: u32) {
    let s = shared_array::<f32, 64>();
    // They take slice arguments, not shared arrays or scalars.
    let _ = load4(s, 0u32);
    let _ = load4(n, 0u32);
    // A store needs a writable slice and four elements of its type.
    store4(a, 0u32, [1.0f32; 4]);
    store4(out, 0u32, [1u32; 4]);
    store4(out, 0u32, [1.0f32; 3]);
    // The index is an integer.
    let v = load4(a, 1.5f32);
    out[0] = v[0] + s[0];
}

