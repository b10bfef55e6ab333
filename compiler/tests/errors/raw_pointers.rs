use cuprum::prelude::*;

#[rawkernel]
pub fn poke(p: *mut f32, n: u32) {
    let i = grid_1d();
    if i < n {
        let q: *const f32 = p;
    }
}
