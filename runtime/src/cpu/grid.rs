//! Raw kernels on the CPU device (docs/cpu.md, "Raw kernels on the CPU"): the grid runner.
//!
//! `#[rawkernel]` writes, next to a kernel's CUDA code, a host copy of its function
//! (`cpu::lang`: slices and views are handles, intrinsics read the running CUDA thread) and a
//! launch path for the CPU device that builds a [`Grid`] from the launch's configuration and
//! arrays and hands [`Grid::run`] a closure calling the host copy with the arguments. The runner:
//!
//! - checks the configuration against the CPU device's limits (those of a CUDA device of
//!   compute capability 9.0), as a GPU launch does, and locks every array's buffer for the
//!   launch (exclusive when written);
//! - spreads the blocks over host threads when every array's element type is accessed
//!   atomically (`cpu::lang::memory`), else runs them on one;
//! - runs a block's threads in order, each a plain call, when the kernel has no barrier and no
//!   warp operation (`lockstep == false`); when its barriers are all top-level statements, the
//!   macro's block function runs each barrier-free region over the block's threads
//!   ([`Grid::run_blocks`], [`BlockRun::each`]); otherwise each CUDA thread is a coroutine
//!   (`corosensei`, stacks pooled): a thread runs until it stops at `sync_threads()` or a warp
//!   operation; a warp's lanes run until each has stopped or finished, then the warp's shuffle
//!   values are published and its lanes go on, until every thread of the block has stopped at
//!   the barrier or finished; then the barrier opens, and so on until all have finished. A
//!   block's threads therefore see each other's shared-memory writes at barriers as on a GPU,
//!   and the 32 lanes of a warp exchange values as on a GPU;
//! - runs a kernel that calls `grid_sync()` as a cooperative launch ([`Grid::run_cooperative`]):
//!   its grid checked against the CPU device's co-residency model ([`co_residency`]), every CUDA
//!   thread of every block a coroutine of one scheduler on the launching thread, each block run
//!   as above until its threads have finished or stopped at `grid_sync()`, then all go on;
//! - catches a panic in the kernel's code (a debug build's overflow check) as an error.

use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::launch::config::{CoResidency, LaunchConfig, LaunchLimits, check_config, check_cooperative};
use super::buffers::{Held, lock_buffers};
use crate::launch::operand::Arg;
use crate::error::Result;
use super::lang::context::{self, Block, GridInfo, Stop, ThreadCtx};
use crate::dim3::Dim3;
use crate::sync;

/// The stack of one CUDA thread run as a coroutine (its locals and calls; guard page below).
const STACK_BYTES: usize = 256 * 1024;

/// Stacks kept for the next blocks and launches.
const POOL_MAX: usize = 4096;

fn pool() -> &'static Mutex<Vec<DefaultStack>> {
    static POOL: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());
    &POOL
}

/// A raw kernel's launch on the CPU device: its geometry and the locks it holds.
pub struct Grid<'a> {
    info: GridInfo,
    parallel: bool,
    _held: Vec<Held<'a>>,
}

/// One block of a kernel split into regions ([`Grid::run_blocks`]): the generated block function
/// runs each region over the block's threads with [`BlockRun::each`].
pub struct BlockRun<'a> {
    grid: &'a GridInfo,
    block: &'a Block,
    block_idx: Dim3,
    threads: usize,
}

impl BlockRun<'_> {
    /// The number of threads in the block.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// CUDA `blockIdx` of the block.
    #[inline]
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// CUDA `blockDim`.
    #[inline]
    pub fn block_dim(&self) -> Dim3 {
        self.grid.block_dim
    }

    /// CUDA `gridDim`.
    #[inline]
    pub fn grid_dim(&self) -> Dim3 {
        self.grid.grid_dim
    }

    /// The context of the block's first thread.
    fn context(&self) -> ThreadCtx {
        ThreadCtx {
            grid: self.grid,
            block: self.block,
            block_idx: self.block_idx,
            thread_idx: Cell::new(Dim3::default()),
            linear: Cell::new(0),
            yielder: Cell::new(std::ptr::null()),
            function: Cell::new(self.grid.kernel),
        }
    }

    /// `f()` with the block's first thread current: what the block function computes once for
    /// all its threads (a `shared_array` or `dynamic_shared` binding, the same for each).
    #[inline]
    pub fn once<R>(&self, f: impl FnOnce() -> R) -> R {
        let ctx = self.context();
        context::enter(&ctx);
        let r = f();
        context::enter(std::ptr::null());
        r
    }

    /// Calls `f(k, thread_idx)` for each thread `k` of the block in order (x fastest), with that
    /// thread current (what the intrinsics read).
    #[inline]
    pub fn each(&self, mut f: impl FnMut(usize, Dim3)) {
        let d = self.grid.block_dim;
        let ctx = self.context();
        // The context is current for the whole region; each thread updates its indices.
        context::enter(&ctx);
        let mut k = 0usize;
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    let t = Dim3 { x, y, z };
                    ctx.thread_idx.set(t);
                    ctx.linear.set(k as u32);
                    f(k, t);
                    k += 1;
                }
            }
        }
        context::enter(std::ptr::null());
    }
}

/// The kernel body a launch runs once per CUDA thread, with its lifetime erased so that a
/// coroutine (which must be `'static`) can hold it: [`Grid::run`] finishes or drops every
/// coroutine before it returns, so the closure outlives them all.
#[derive(Clone, Copy)]
struct Body(*const (dyn Fn() + Sync + 'static));

// SAFETY: the closure is `Sync` and outlives every thread that calls it (see `Body`).
unsafe impl Send for Body {}
// SAFETY: as above: sharing the pointer shares a `Sync` closure.
unsafe impl Sync for Body {}

impl Body {
    fn call(self) {
        // SAFETY: see `Body`: the closure is alive while any CUDA thread runs.
        unsafe { (*self.0)() }
    }
}

impl<'a> Grid<'a> {
    /// The launch of `kernel` with `cfg` over `arrays` (`Arg::In` read, `Arg::Out` written;
    /// all on the CPU device, as the launch checked), or the error of a configuration the
    /// device cannot run.
    pub fn new(kernel: &'static str, cfg: &LaunchConfig<'_>, arrays: &'a [Arg<'a>]) -> Result<Grid<'a>> {
        // A `#[rawkernel]` launch on a GPU raises the kernel's dynamic shared memory limit up to
        // the device's opt-in maximum (`launch::launch`): here the limit is that maximum at once.
        check_config(kernel, cfg.grid, cfg.block, cfg.shared_mem_bytes, &LaunchLimits::cpu_device())?;
        let parallel = arrays.iter().all(|a| match a {
            Arg::In(x) | Arg::Out(x) | Arg::Raw(x) => super::lang::atomic_width(x.elem.size(), x.elem.align()),
            Arg::Scalar(_) => true,
        });
        Ok(Grid {
            info: GridInfo { kernel, grid_dim: cfg.grid, block_dim: cfg.block, dynamic_bytes: cfg.shared_mem_bytes as usize },
            parallel,
            _held: lock_buffers(arrays),
        })
    }

    /// Runs `body` once per CUDA thread of the grid (see the module); `lockstep` when the kernel
    /// has barriers or warp operations. A panic in `body` is an error naming the kernel.
    pub fn run(&self, lockstep: bool, body: &(dyn Fn() + Sync)) -> Result<()> {
        let p: *const (dyn Fn() + Sync + '_) = body;
        // SAFETY: only the lifetime bound changes (see `Body`).
        let body = Body(unsafe { std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(p) });
        self.run_each_block(&|b| if lockstep { self.run_lockstep(b, body) } else { self.run_plain(b, body) })
    }

    /// Runs `block` once per block of the grid (spread over host threads as [`Grid::run`]): a
    /// kernel split into barrier-free regions, each run over the block's threads with
    /// [`BlockRun::each`]. A panic is an error naming the kernel.
    pub fn run_blocks(&self, block: &(dyn Fn(&BlockRun<'_>) + Sync)) -> Result<()> {
        let d = self.info.block_dim;
        let threads = (d.x * d.y * d.z) as usize;
        // One "thread" per block: the block function loops over the CUDA threads itself.
        self.run_each_block(&|b: Dim3| {
            let shared = Block::new(self.info.dynamic_bytes, 0);
            block(&BlockRun { grid: &self.info, block: &shared, block_idx: b, threads });
        })
    }

    /// Calls `f` with each block index, spread over host threads like [`Grid::run`].
    fn run_each_block(&self, f: &(dyn Fn(Dim3) + Sync)) -> Result<()> {
        let g = self.info.grid_dim;
        let blocks = g.x as u64 * g.y as u64 * g.z as u64;
        let next = AtomicU64::new(0);
        let failed = AtomicBool::new(false);
        let panic: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
        let threads = if self.parallel { std::thread::available_parallelism().map_or(1, |n| n.get()).min(blocks as usize) } else { 1 };
        // A host thread takes consecutive blocks (at least 16 batches per thread, for balance):
        // neighbouring blocks touch neighbouring memory, so each thread streams through long
        // runs of it, which the prefetchers follow (one block at a time, each thread's accesses
        // were interleaved with the others', and the stencil row ran at half the speed).
        let batch = (blocks / (threads as u64 * 16)).clamp(1, 64);
        let worker = || {
            let previous = context::enter(std::ptr::null());
            let caught = catch_unwind(AssertUnwindSafe(|| {
                while !failed.load(Ordering::Relaxed) {
                    let first = next.fetch_add(batch, Ordering::Relaxed);
                    if first >= blocks {
                        break;
                    }
                    for b in first..(first + batch).min(blocks) {
                        f(Dim3 { x: (b % g.x as u64) as u32, y: (b / g.x as u64 % g.y as u64) as u32, z: (b / (g.x as u64 * g.y as u64)) as u32 });
                    }
                }
            }));
            context::enter(previous);
            if let Err(p) = caught {
                failed.store(true, Ordering::Relaxed);
                sync::lock(&panic).get_or_insert(p);
            }
        };
        if threads <= 1 {
            worker();
        } else {
            std::thread::scope(|s| {
                for _ in 1..threads {
                    s.spawn(worker);
                }
                worker();
            });
        }
        match panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(p) => Err(super::panicked(self.info.kernel, "its code", &*p)),
        }
    }

    /// A block of a kernel without barriers or warp operations: each thread a call, in order.
    fn run_plain(&self, b: Dim3, body: Body) {
        let d = self.info.block_dim;
        // No warp slots: a kernel without warp operations exchanges nothing.
        let block = Block::new(self.info.dynamic_bytes, 0);
        let ctx = ThreadCtx {
            grid: &self.info,
            block: &block,
            block_idx: b,
            thread_idx: Cell::new(Dim3::default()),
            linear: Cell::new(0),
            yielder: Cell::new(std::ptr::null()),
            function: Cell::new(self.info.kernel),
        };
        context::enter(&ctx);
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    ctx.thread_idx.set(Dim3 { x, y, z });
                    body.call();
                    ctx.linear.set(ctx.linear.get() + 1);
                }
            }
        }
        context::enter(std::ptr::null());
    }

    /// A block of a kernel with barriers or warp operations: each thread a coroutine (see the
    /// module for the order they run in).
    fn run_lockstep(&self, b: Dim3, body: Body) {
        let mut block = Lockstep::new(&self.info, b, body);
        if block.run() {
            panic!(
                "`grid_sync()` in `{}`, which the CPU device runs without a cooperative launch (a `#[rawkernel]` that calls it \
                 is launched cooperatively; this one was not, a bug of its generated launch)",
                self.info.kernel
            );
        }
        block.recycle();
    }

    /// Runs `body` once per CUDA thread of the grid as a cooperative launch (a kernel that calls
    /// `grid_sync()`): after checking the grid against the CPU device's co-residency model
    /// ([`co_residency`]; a larger grid is `Error::CooperativeGrid`, as on a GPU), every CUDA
    /// thread of every block is a coroutine of one scheduler on this host thread. It runs each
    /// block as [`Grid::run`] does (barriers, warps) until each of its threads has finished or
    /// stopped at `grid_sync()`; when every block has, the threads stopped there go on, and so on
    /// until all have finished. A thread that finished counts as arrived, so nothing waits
    /// forever. A panic in `body` is an error naming the kernel.
    pub fn run_cooperative(&self, body: &(dyn Fn() + Sync)) -> Result<()> {
        let (g, d) = (self.info.grid_dim, self.info.block_dim);
        let shared = self.info.dynamic_bytes as u32;
        check_cooperative(self.info.kernel, g, d, shared, co_residency(d, shared), false)?;
        let p: *const (dyn Fn() + Sync + '_) = body;
        // SAFETY: only the lifetime bound changes (see `Body`): every coroutine is finished or
        // dropped before this function returns.
        let body = Body(unsafe { std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(p) });
        let previous = context::enter(std::ptr::null());
        let caught = catch_unwind(AssertUnwindSafe(|| {
            let count = g.x as u64 * g.y as u64 * g.z as u64;
            let mut blocks: Vec<Lockstep> = (0..count)
                .map(|b| {
                    let b = Dim3 { x: (b % g.x as u64) as u32, y: (b / g.x as u64 % g.y as u64) as u32, z: (b / (g.x as u64 * g.y as u64)) as u32 };
                    Lockstep::new(&self.info, b, body)
                })
                .collect();
            loop {
                let mut waiting = false;
                for block in &mut blocks {
                    waiting |= block.run();
                }
                if !waiting {
                    break;
                }
                for block in &mut blocks {
                    block.release_grid();
                }
            }
            for block in blocks {
                block.recycle();
            }
        }));
        context::enter(previous);
        caught.map_err(|p| super::panicked(self.info.kernel, "its code", &*p))
    }
}

/// The multiprocessors of the CPU device's co-residency model ([`co_residency`]).
pub const CPU_MULTIPROCESSORS: u32 = 4;

/// How many blocks of `block` threads with `shared_mem_bytes` of dynamic shared memory the CPU
/// device keeps resident at once: the most blocks a cooperative launch (a kernel that calls
/// `grid_sync()`) may have there. The model is `CPU_MULTIPROCESSORS` multiprocessors of a
/// compute capability 9.0 GPU, each holding at most 2048 threads (whole warps), 32 blocks and
/// 228 KiB of shared memory (1 KiB of it reserved per block); registers and static shared memory
/// are not counted. A cooperative launch keeps a coroutine (a 256 KiB stack, mostly untouched)
/// per CUDA thread of the grid, so the model bounds those to 8192: a fixed number, so that a
/// kernel's grid fits on every host alike.
pub fn co_residency(block: Dim3, shared_mem_bytes: u32) -> CoResidency {
    let threads = block.x.saturating_mul(block.y).saturating_mul(block.z);
    let warp_threads = threads.div_ceil(32).saturating_mul(32).max(32);
    let by_threads = 2048 / warp_threads;
    let by_shared = 228 * 1024 / shared_mem_bytes.saturating_add(1024);
    CoResidency { per_multiprocessor: by_threads.min(by_shared).min(32), multiprocessors: CPU_MULTIPROCESSORS }
}

/// Where a CUDA thread run as a coroutine is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Ready,
    Barrier,
    Warp,
    Grid,
    Done,
}

/// One block whose CUDA threads run as coroutines, on one host thread (see the module for the
/// order they run in).
struct Lockstep {
    // Field order is drop order: the coroutines first (one dropped while suspended unwinds its
    // stack, which may still read its context), then the contexts, then the block they point at
    // (boxed, so that moving a `Lockstep` moves none of them).
    threads: Vec<Coroutine<(), Stop, (), DefaultStack>>,
    state: Vec<State>,
    ctxs: Vec<ThreadCtx>,
    block: Box<Block>,
}

impl Lockstep {
    /// Block `b` of the grid `info`, its threads not started.
    fn new(info: &GridInfo, b: Dim3, body: Body) -> Lockstep {
        let d = info.block_dim;
        let n = d.x * d.y * d.z;
        let block = Box::new(Block::new(info.dynamic_bytes, n as usize));
        let ctxs: Vec<ThreadCtx> = (0..n)
            .map(|k| ThreadCtx {
                grid: info,
                block: &*block,
                block_idx: b,
                thread_idx: Cell::new(Dim3 { x: k % d.x, y: k / d.x % d.y, z: k / (d.x * d.y) }),
                linear: Cell::new(k),
                yielder: Cell::new(std::ptr::null()),
                function: Cell::new(info.kernel),
            })
            .collect();
        let mut stacks: Vec<DefaultStack> = {
            let mut pool = sync::lock(pool());
            let keep = pool.len().saturating_sub(n as usize);
            pool.split_off(keep)
        };
        let mut threads: Vec<Coroutine<(), Stop, (), DefaultStack>> = Vec::with_capacity(n as usize);
        for ctx in &ctxs {
            let stack = match stacks.pop() {
                Some(s) => s,
                None => DefaultStack::new(STACK_BYTES).unwrap_or_else(|e| panic!("cannot allocate a {STACK_BYTES}-byte stack for a CUDA thread: {e}")),
            };
            let ctx = ctx as *const ThreadCtx as usize;
            threads.push(Coroutine::with_stack(stack, move |y: &Yielder<(), Stop>, ()| {
                // SAFETY: the context outlives the coroutine (`Lockstep`'s drop order), and only
                // this coroutine's thread reads its yielder.
                unsafe { (*(ctx as *const ThreadCtx)).yielder.set(y) };
                body.call();
            }));
        }
        Lockstep { threads, state: vec![State::Ready; n as usize], ctxs, block }
    }

    /// Runs the block's threads until each has finished or stopped at `grid_sync()`: a warp's
    /// lanes run until each has stopped or finished, then the values they deposited for a
    /// shuffle are published and they go on; when every thread has stopped at the block barrier
    /// (or at `grid_sync()`, or finished), the barrier opens. Whether a thread stopped at
    /// `grid_sync()`.
    fn run(&mut self) -> bool {
        /// Leaves no context current, also when a thread's panic unwinds through `run`.
        struct Leave;
        impl Drop for Leave {
            fn drop(&mut self) {
                context::enter(std::ptr::null());
            }
        }
        let _leave = Leave;
        let n = self.threads.len();
        loop {
            for w in 0..n.div_ceil(32) {
                let lanes = w * 32..((w + 1) * 32).min(n);
                loop {
                    let mut at_warp = false;
                    for t in lanes.clone() {
                        if self.state[t] != State::Ready {
                            continue;
                        }
                        context::enter(&self.ctxs[t]);
                        self.state[t] = match self.threads[t].resume(()) {
                            CoroutineResult::Yield(Stop::Barrier) => State::Barrier,
                            CoroutineResult::Yield(Stop::Warp) => {
                                at_warp = true;
                                State::Warp
                            }
                            CoroutineResult::Yield(Stop::Grid) => State::Grid,
                            CoroutineResult::Return(()) => State::Done,
                        };
                        context::enter(std::ptr::null());
                    }
                    if !at_warp {
                        break;
                    }
                    {
                        let mut warps = self.block.warps.borrow_mut();
                        let slots = &mut warps[w];
                        slots.published = slots.deposit;
                    }
                    for t in lanes.clone() {
                        if self.state[t] == State::Warp {
                            self.state[t] = State::Ready;
                        }
                    }
                }
            }
            if !self.state.contains(&State::Barrier) {
                break;
            }
            for s in self.state.iter_mut().filter(|s| **s == State::Barrier) {
                *s = State::Ready;
            }
        }
        self.state.contains(&State::Grid)
    }

    /// Lets the threads stopped at `grid_sync()` go on (every block of the grid has arrived).
    fn release_grid(&mut self) {
        for s in self.state.iter_mut().filter(|s| **s == State::Grid) {
            *s = State::Ready;
        }
    }

    /// Keeps the finished threads' stacks for the next blocks and launches.
    fn recycle(self) {
        let Lockstep { threads, .. } = self;
        let mut pool = sync::lock(pool());
        for t in threads {
            if pool.len() < POOL_MAX && t.done() {
                pool.push(t.into_stack());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use crate::error::Error;
    use crate::cpu::lang as cpu;

    #[test]
    fn a_cooperative_grid_waits_for_every_thread_at_each_barrier() {
        let cfg = LaunchConfig::new((3, 2), 64);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let (arrived, seen) = (AtomicU64::new(0), Mutex::new(Vec::new()));
        grid.run_cooperative(&|| {
            for round in 1..=3u64 {
                arrived.fetch_add(1, Ordering::Relaxed);
                // A warp operation and a block barrier between grid barriers.
                let lane = cpu::shfl_xor_sync(u32::MAX, cpu::lane_id(), 1);
                assert_eq!(lane, cpu::lane_id() ^ 1);
                cpu::sync_threads();
                cpu::grid_sync();
                sync::lock(&seen).push((round, arrived.load(Ordering::Relaxed)));
                cpu::grid_sync();
            }
        })
        .unwrap();
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 3 * 384);
        // Every thread of every block had arrived before any went on.
        assert!(seen.iter().all(|&(round, n)| n == round * 384), "{seen:?}");
    }

    #[test]
    fn threads_that_returned_count_as_arrived() {
        let cfg = LaunchConfig::new(4, 32);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let passed = AtomicU64::new(0);
        grid.run_cooperative(&|| {
            if cpu::block_idx().x == 2 && cpu::thread_idx().x >= 16 {
                return;
            }
            cpu::grid_sync();
            passed.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(passed.into_inner(), 4 * 32 - 16);
    }

    #[test]
    fn a_panic_in_a_cooperative_launch_is_an_error_and_no_hang() {
        let cfg = LaunchConfig::new(3, 64);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let r = grid.run_cooperative(&|| {
            cpu::grid_sync();
            if cpu::block_idx().x == 1 && cpu::thread_idx().x == 5 {
                panic!("boom");
            }
            cpu::grid_sync();
        });
        match r {
            Err(Error::InvalidLaunch { kernel, detail }) => assert!(kernel == "k" && detail.contains("boom"), "{detail}"),
            other => panic!("expected InvalidLaunch, got {other:?}"),
        }
        // The runner is usable afterwards (the context and the stack pool are intact).
        assert!(cpu::thread_idx() == Dim3::default());
        grid.run_cooperative(&|| cpu::grid_sync()).unwrap();
    }

    #[test]
    fn dynamic_shared_memory_goes_up_to_the_opt_in_maximum() {
        // As a `#[rawkernel]` launch on a GPU, which raises the kernel's limit: 227 KiB (the
        // opt-in maximum of compute capability 9.0) fits, a byte more does not.
        let most = 227 * 1024;
        assert_eq!(Device::cpu().max_shared_memory_per_block_optin(), most as usize);
        let cfg = LaunchConfig::new(2, 32).shared_mem(most);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let seen = AtomicU64::new(0);
        grid.run(false, &|| {
            let s = cpu::dynamic_shared::<u8>();
            seen.fetch_max(s.len() as u64, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(seen.into_inner(), u64::from(most));
        let e = Grid::new("k", &LaunchConfig::new(2, 32).shared_mem(most + 1), &[]).err().unwrap();
        assert!(matches!(e, Error::SharedMemory { limit: 232448, .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains("the most this device allows") && !m.contains("set_max_dynamic_shared_size_bytes"), "{m}");
    }

    #[test]
    fn the_model_is_four_multiprocessors_of_2048_threads_32_blocks_and_228_kib() {
        // testsuite/tests/gpu_grid.rs checks the same limits through a kernel's
        // `max_cooperative_blocks` on the CPU device.
        assert_eq!(CPU_MULTIPROCESSORS, 4);
        let blocks = |threads: u32, shared: u32| co_residency(Dim3::from(threads), shared).blocks();
        assert_eq!(blocks(256, 0), 32);
        assert_eq!(blocks(1024, 0), 8);
        assert_eq!(blocks(32, 0), 128);
        assert_eq!(blocks(100, 0), 4 * (2048 / 128));
        assert_eq!(blocks(64, 48 * 1024), 4 * (228 / 49));
    }

    #[test]
    fn a_grid_over_the_model_is_refused_before_anything_runs() {
        assert_eq!(co_residency(Dim3::from(256), 0).blocks(), 32);
        let cfg = LaunchConfig::new(33, 256);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let ran = AtomicBool::new(false);
        let e = grid.run_cooperative(&|| ran.store(true, Ordering::Relaxed)).unwrap_err();
        assert!(matches!(e, Error::CooperativeGrid { blocks: 33, limit: 32, per_multiprocessor: 8, multiprocessors: 4, .. }), "{e:?}");
        assert!(!ran.into_inner());
    }

    #[test]
    fn grid_sync_outside_a_cooperative_launch() {
        // Outside a launch: one thread, nothing to wait for.
        cpu::grid_sync();
        // In a launch that is not cooperative: an error naming the kernel, not a hang.
        let cfg = LaunchConfig::new(2, 32);
        let grid = Grid::new("k", &cfg, &[]).unwrap();
        let e = grid.run(true, &|| cpu::grid_sync()).unwrap_err().to_string();
        assert!(e.contains("without a cooperative launch"), "{e}");
    }
}
