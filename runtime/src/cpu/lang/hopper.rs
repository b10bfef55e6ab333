//! Hopper's barriers, copies and warpgroup multiplies on the CPU device (`lang::hopper`): a
//! `tma_load_2d` copies at once and completes its bytes on the barrier, an `mbarrier_wait`
//! suspends the thread until its phase has completed (each CUDA thread is a coroutine in a kernel
//! that waits: `compiler/src/expand/host_kernel.rs`), and a `wgmma_m64nNk16` computes the calling
//! thread's part of the product from shared memory at once, so its fence, commit and wait have
//! nothing to do (`wgmma_m64nNk16_rs` gathers its warp's A fragments through the warp's exchange
//! slots first, as `mma_m16n8k16` does). A named barrier counts its arrivals in the block
//! (`context::Block::named`) and suspends its waiters until the count is reached. Indices are
//! checked as on a GPU; the shared arrays' alignment (the GPU's 1024-byte tiles) is not, host
//! memory has its own.

use super::context::{self, Stop};
use super::memory::{Load, Slice, Store, misaligned, out_of_range};
use crate::element::Element;
use super::tensor::all_lanes;
use crate::lang::hopper::{Barrier, Form, K16, K16_BT, K32_FP8, MmaFp8, wgmma_forms, wgmma_rs_thread};
use crate::lang::intrinsics::KernelIndex;
use crate::lang::tensor::MmaHalf;

/// A `&TensorMap<T>` kernel argument on the CPU device: the array it reads (locked by the
/// launch) and the box it copies.
pub struct TensorMap<'a, T> {
    src: Slice<'a, T>,
    shape: [usize; 2],
    box_shape: [usize; 2],
    swizzle_bytes: usize,
}

impl<T> Clone for TensorMap<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for TensorMap<'_, T> {}

impl<'a, T: Element> TensorMap<'a, T> {
    /// The map of the C-contiguous `rows x cols` array `src` copying boxes of `box_shape`
    /// (`[rows, cols]`) with the swizzle of `swizzle_bytes` (0, 32, 64 or 128).
    pub fn new(src: Slice<'a, T>, shape: [usize; 2], box_shape: [usize; 2], swizzle_bytes: usize) -> Self {
        TensorMap { src, shape, box_shape, swizzle_bytes }
    }

    fn box_bytes(&self) -> usize {
        self.box_shape[0] * self.box_shape[1] * size_of::<T>()
    }
}

/// The barrier at `i`, or `None` with the violation recorded.
fn barrier<I: KernelIndex>(bars: &Slice<'_, u64>, i: I) -> Option<usize> {
    let k = i.to_usize();
    if k < bars.len() {
        Some(k)
    } else {
        out_of_range(i.to_i128(), bars.len());
        None
    }
}

fn update<I: KernelIndex>(bars: Slice<'_, u64>, i: I, f: impl FnOnce(Barrier) -> Barrier) {
    if let Some(k) = barrier(&bars, i) {
        bars.store(k, f(Barrier::from_bits(bars.load(k))).bits());
    }
}

/// `mbarrier_init` (`lang::hopper`).
pub fn mbarrier_init<I: KernelIndex>(bars: Slice<'_, u64>, i: I, count: u32) {
    update(bars, i, |_| Barrier::new(count));
}

/// `mbarrier_arrive` (`lang::hopper`).
pub fn mbarrier_arrive<I: KernelIndex>(bars: Slice<'_, u64>, i: I) {
    update(bars, i, |b| b.arrive(0));
}

/// `mbarrier_arrive_expect_tx` (`lang::hopper`).
pub fn mbarrier_arrive_expect_tx<I: KernelIndex>(bars: Slice<'_, u64>, i: I, bytes: u32) {
    update(bars, i, |b| b.arrive(bytes));
}

/// `mbarrier_wait` (`lang::hopper`): the thread stops until every thread of its block has
/// stopped or finished, then looks again, so the threads that complete the phase run meanwhile.
/// Outside a coroutine (one thread) it returns.
pub fn mbarrier_wait<I: KernelIndex>(bars: Slice<'_, u64>, i: I, parity: u32) {
    let Some(k) = barrier(&bars, i) else { return };
    while !Barrier::from_bits(bars.load(k)).done(parity) {
        match context::current() {
            Some(c) if c.suspend(Stop::Barrier) => {}
            _ => return,
        }
    }
}

/// `tma_load_2d` (`lang::hopper`): the box at once, zeros outside the array, in the map's
/// swizzle; its bytes complete on the barrier (also when the destination is rejected, as on a
/// GPU, so that waiting threads go on).
pub fn tma_load_2d<T: Element + Copy, I: KernelIndex, J: KernelIndex>(dst: Slice<'_, T>, di: I, map: TensorMap<'_, T>, x: i32, y: i32, bars: Slice<'_, u64>, bi: J) {
    if barrier(&bars, bi).is_none() {
        return;
    }
    let [br, bc] = map.box_shape;
    let (d, n) = (di.to_usize(), br * bc);
    let align = (if map.swizzle_bytes == 128 { 1024 } else { 128 }) / size_of::<T>().max(1);
    let ok = d < dst.len() && n <= dst.len() - d && d % align == 0;
    if !ok {
        if d < dst.len() && d % align != 0 {
            misaligned(di.to_i128(), align);
        } else {
            out_of_range(if d < dst.len() { (d + n - 1) as i128 } else { di.to_i128() }, dst.len());
        }
    } else {
        // The swizzle permutes 16-byte chunks by the address: bits 4.. of a byte offset take the
        // XOR of bits 7.. (3 bits for 128 bytes, 2 for 64, 1 for 32), from an aligned start.
        let mask = match map.swizzle_bytes {
            128 => 7,
            64 => 3,
            32 => 1,
            _ => 0,
        };
        let size = size_of::<T>();
        let [rows, cols] = map.shape;
        for r in 0..br {
            for c in 0..bc {
                let (gr, gc) = (y as i64 + r as i64, x as i64 + c as i64);
                let v = if gr >= 0 && gc >= 0 && (gr as usize) < rows && (gc as usize) < cols {
                    map.src.load(gr as usize * cols + gc as usize)
                } else {
                    super::zero::<T>()
                };
                let o = (r * bc + c) * size;
                let o = o ^ (((o >> 7) & mask) << 4);
                dst.store(d + o / size, v);
            }
        }
    }
    update(bars, bi, |b| b.complete_tx(map.box_bytes() as u32));
}

/// `wgmma_fence` (`lang::hopper`): nothing to order.
pub fn wgmma_fence() {}

/// `wgmma_commit` (`lang::hopper`): the multiplies are done.
pub fn wgmma_commit() {}

/// `wgmma_wait` (`lang::hopper`): the multiplies are done.
pub fn wgmma_wait<const PENDING: u32>(acc: &mut [f32]) {
    let _ = acc;
}

/// `warpgroup_reg_alloc` (`lang::hopper`): nothing on the host.
pub fn warpgroup_reg_alloc<const REGS: u32>() {}

/// `warpgroup_reg_dealloc` (`lang::hopper`): nothing on the host.
pub fn warpgroup_reg_dealloc<const REGS: u32>() {}

/// The running CUDA thread's index in its block (0 outside a kernel).
fn thread_index() -> u32 {
    context::current().map_or(0, |c| c.linear.get())
}

/// Reports an index that `form`'s [`Form::operands`] or [`Form::b_operand`] rejected: A's
/// (`is_b` false) or B's, misaligned or out of its array of `len` elements.
fn reject(form: Form, is_b: bool, misaligned_index: bool, i: i128, len: usize) {
    if misaligned_index {
        misaligned(i, form.alignment(is_b));
    } else {
        out_of_range(i, len);
    }
}

/// A form from shared memory on the CPU device (`lang::hopper`'s [`Form`]): the calling thread's
/// part at once. A wrong index is reported as on a GPU and the arrays' first tiles are used, if
/// the arrays hold them (else nothing is computed).
#[allow(clippy::too_many_arguments)] // a multiply's operands, its form and the values' reading
fn wgmma_smem<T: Element, I: KernelIndex, J: KernelIndex>(form: Form, acc: &mut [f32], n: usize, a: Slice<'_, T>, ai: I, b: Slice<'_, T>, bi: J, exact: fn(T) -> f64) {
    let at = match form.operands(ai.to_usize(), a.len(), bi.to_usize(), b.len(), n) {
        Ok(at) => at,
        Err((is_b, mis)) => {
            let (i, len) = if is_b { (bi.to_i128(), b.len()) } else { (ai.to_i128(), a.len()) };
            reject(form, is_b, mis, i, len);
            if a.len() < form.tile || b.len() < form.b_len(n) {
                return;
            }
            (0, 0, 0, 0)
        }
    };
    form.thread(acc, thread_index(), n, at, |k| exact(a.load(k)), |k| exact(b.load(k)));
}

/// `wgmma_m64nNk16_rs` on the CPU device: the warp's A fragments gathered, then the calling
/// thread's part at once (B checked as `wgmma_m64nNk16`'s).
fn wgmma_rs<T: MmaHalf + Element, J: KernelIndex>(acc: &mut [f32], n: usize, a: [T; 8], b: Slice<'_, T>, bi: J) {
    // Every lane gathers its warp's fragments first (a warp operation: also when B is wrong, so
    // that the lanes stay together).
    let frags = all_lanes(a);
    let at = match K16.b_operand(bi.to_usize(), b.len(), n) {
        Ok(at) => at,
        Err(mis) => {
            reject(K16, true, mis, bi.to_i128(), b.len());
            if b.len() < K16.b_len(n) {
                return;
            }
            (0, 0)
        }
    };
    wgmma_rs_thread(acc, thread_index(), n, &frags, at, |k| b.load(k).to_f64_exact());
}

wgmma_forms! {
    cpu "the operands are checked (the GPU's form is the one that trusts them)": [T: MmaHalf + Element + Copy, I: KernelIndex, J: KernelIndex] (a: Slice<'_, T>, ai: I, b: Slice<'_, T>, bi: J)
        |acc, n| wgmma_smem(K16, acc, n, a, ai, b, bi, T::to_f64_exact)
        => [wgmma_m64n64k16, wgmma_m64n64k16_unchecked, wgmma_m64n128k16, wgmma_m64n128k16_unchecked, wgmma_m64n256k16, wgmma_m64n256k16_unchecked];
    cpu "the operands are checked (the GPU's form is the one that trusts them)": [T: MmaFp8 + Element, I: KernelIndex, J: KernelIndex] (a: Slice<'_, T>, ai: I, b: Slice<'_, T>, bi: J)
        |acc, n| wgmma_smem(K32_FP8, acc, n, a, ai, b, bi, T::to_f64_exact)
        => [wgmma_m64n64k32, wgmma_m64n64k32_unchecked, wgmma_m64n128k32, wgmma_m64n128k32_unchecked, wgmma_m64n256k32, wgmma_m64n256k32_unchecked];
    cpu "the operands are checked (the GPU's form is the one that trusts them)": [T: MmaHalf + Element, I: KernelIndex, J: KernelIndex] (a: Slice<'_, T>, ai: I, b: Slice<'_, T>, bi: J)
        |acc, n| wgmma_smem(K16_BT, acc, n, a, ai, b, bi, T::to_f64_exact)
        => [wgmma_m64n64k16_bt, wgmma_m64n64k16_bt_unchecked, wgmma_m64n128k16_bt, wgmma_m64n128k16_bt_unchecked, wgmma_m64n256k16_bt, wgmma_m64n256k16_bt_unchecked];
    cpu "the operand is checked (the GPU's form is the one that trusts it)": [T: MmaHalf + Element, J: KernelIndex] (a: [T; 8], b: Slice<'_, T>, bi: J)
        |acc, n| wgmma_rs(acc, n, a, b, bi)
        => [wgmma_m64n64k16_rs, wgmma_m64n64k16_rs_unchecked, wgmma_m64n128k16_rs, wgmma_m64n128k16_rs_unchecked, wgmma_m64n256k16_rs, wgmma_m64n256k16_rs_unchecked];
}

/// One arrival at named barrier `id` of the running thread's block: the barrier and the round the
/// arrival joined (`None`: there is no block, or `id` is out of range, which is reported).
fn named_arrive(id: u32, threads: u32) -> Option<(usize, u32)> {
    let c = context::current()?;
    let k = id as usize;
    if k >= 16 {
        out_of_range(id as i128, 16);
        return None;
    }
    let mut named = c.block().named.borrow_mut();
    let (arrived, round) = &mut named[k];
    let joined = *round;
    *arrived += 1;
    if *arrived >= threads {
        *arrived = 0;
        *round = round.wrapping_add(1);
    }
    Some((k, joined))
}

/// `named_barrier_sync` (`lang::hopper`): the thread arrives and suspends until the round it
/// joined has completed (looking again after each stop of the block, as `mbarrier_wait`). The
/// thread whose arrival completes the round stops once too, so that the threads of a round go on
/// together: a warp operation after the barrier then finds every lane of the warp (one that went
/// on alone would exchange with lanes still stopped here). An `id` past 15 is reported as an index
/// out of range and does not wait.
pub fn named_barrier_sync(id: u32, threads: u32) {
    let Some((k, round)) = named_arrive(id, threads) else { return };
    let Some(c) = context::current() else { return };
    loop {
        if !c.suspend(Stop::Barrier) {
            return;
        }
        if c.block().named.borrow()[k].1 != round {
            return;
        }
    }
}

/// `named_barrier_arrive` (`lang::hopper`): the thread arrives and goes on.
pub fn named_barrier_arrive(id: u32, threads: u32) {
    let _ = named_arrive(id, threads);
}
