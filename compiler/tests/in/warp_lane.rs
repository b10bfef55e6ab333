use cuprum::prelude::*;

/// `lane_id()`, `warp_size()`, `sync_warp(mask)`: lanes of a warp vote through shared memory.
#[rawkernel]
pub fn warp_ballot(x: &[i32], out: &mut [u32], n: u32) {
    let i = grid_1d();
    let lane = lane_id();
    let warp = thread_idx().x / warp_size();
    let votes = shared_array::<u32, 32>();
    if lane == 0 {
        votes[warp as usize] = 0;
    }
    sync_warp(0xffff_ffff);
    let mine = if i < n && x[i as usize] > 0 { 1u32 << lane } else { 0 };
    atomic_or(votes, warp, mine);
    sync_warp(u32::MAX);
    if lane == 0 && i < n {
        out[(i / warp_size()) as usize] = votes[warp as usize];
    }
}

/// Memory fences: publish a value, then a flag another block polls.
#[rawkernel]
pub fn publish(data: &mut [f32], flag: &mut [u32], v: f32) {
    if grid_1d() == 0 {
        data[0] = v;
        thread_fence();
        atomic_exch(flag, 0u32, 1);
        thread_fence_block();
    }
}
