use cuprum::prelude::*;

#[rawkernel]
pub fn fill_index(out: &mut [u64]) {
    let i = index();
    out[i as usize] = i as u64;
}
