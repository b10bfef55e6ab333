use cuprum::prelude::*;

/// 32-bit indices: `Raw<T>` and `View` arguments take `u32`/`i32` indices directly, so the index
/// arithmetic stays 32-bit; slices take `usize` (an `as usize` of a `u32`).
#[elementwise]
pub fn gather32(table: Raw<f32>, idx: u32, off: i32) -> f32 {
    let j = idx.wrapping_add(off as u32);
    table[j] + table[idx] + table[index()]
}

#[rawkernel]
pub fn scale_rows(m: View<f32, 2>, mut out: ViewMut<f32, 2>, s: &[f32]) {
    let (col, row) = grid_2d();
    let shape = m.shape();
    if (row as usize) < shape[0] && (col as usize) < shape[1] {
        let r = row as i32;
        out[[row, col]] = m[[r, col as i32]] * s[row as usize];
    }
}
