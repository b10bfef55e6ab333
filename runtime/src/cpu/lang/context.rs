//! Who is running: the CUDA thread a host thread is executing on the CPU device, read by the
//! intrinsics of [`super`] (`thread_idx()`, `block_idx()`, ...) and written by the grid runner
//! (`cpu::grid`) before it runs or resumes each CUDA thread.
//!
//! Each host thread holds a pointer to the [`ThreadCtx`] it runs now (null outside a launch:
//! the intrinsics then answer as one thread of one block, as the prelude's do). A block's CUDA
//! threads all run on one host thread, so a block's state ([`Block`]) is never touched by two
//! host threads: it needs no locks, only `RefCell`s.

use std::cell::{Cell, RefCell};

use corosensei::Yielder;

use crate::lang::intrinsics::Dim3;

/// Why a CUDA thread suspended itself (its coroutine yields this to the block's scheduler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// At `sync_threads()`: waits for every thread of the block.
    Barrier,
    /// At a warp operation (`sync_warp`, a shuffle): waits for the other lanes of its warp.
    Warp,
    /// At `grid_sync()`: waits for every thread of the grid (a cooperative launch,
    /// `cpu::grid::Grid::run_cooperative`).
    Grid,
}

/// The grid a launch runs: the same for all its threads.
#[derive(Debug)]
pub(crate) struct GridInfo {
    pub kernel: &'static str,
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub dynamic_bytes: usize,
}

/// One warp's exchange slots: each lane writes its value (`deposit`) before it suspends at a
/// shuffle; once every lane of the warp has suspended, the scheduler publishes the deposits
/// (`published`), which each lane reads when it resumes. Two arrays, so that a lane that goes
/// on to its next shuffle cannot overwrite a value another lane has not read yet.
#[derive(Debug, Default)]
pub(crate) struct WarpSlots {
    pub deposit: [Slot; 32],
    pub published: [Slot; 32],
}

/// A lane's value in a shuffle: its dtype (a lane reads only a value of the type it shuffles)
/// and its bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    pub dtype: Option<cuprum_abi::DType>,
    pub bytes: [u8; 16],
}

/// A block's memory and barriers: its static shared arrays (one per `shared_array` call site of the kernel and its device functions,
/// made zeroed by the first thread that reaches the site), its dynamic shared memory, and its
/// warps' exchange slots. 16-byte words, so that every element type is aligned.
#[derive(Debug)]
pub(crate) struct Block {
    /// By call site (a key of the function and the site, `shared_array`'s argument).
    pub statics: RefCell<Vec<(u64, Box<[u128]>)>>,
    /// Recently used sites' arrays `(site, words, address)`, four ways by the site: what every
    /// thread after the first reads.
    pub recent: [Cell<Option<(u64, usize, *mut u128)>>; 4],
    pub dynamic: RefCell<Box<[u128]>>,
    pub warps: RefCell<Vec<WarpSlots>>,
    /// The 16 named barriers (`named_barrier_sync`/`_arrive`): `(arrivals of the current round,
    /// rounds completed)`.
    pub named: RefCell<[(u32, u32); 16]>,
}

impl Block {
    pub(crate) fn new(dynamic_bytes: usize, threads: usize) -> Block {
        Block {
            statics: RefCell::new(Vec::new()),
            recent: Default::default(),
            dynamic: RefCell::new(vec![0u128; dynamic_bytes.div_ceil(16)].into_boxed_slice()),
            warps: RefCell::new((0..threads.div_ceil(32)).map(|_| WarpSlots::default()).collect()),
            named: RefCell::new([(0, 0); 16]),
        }
    }
}

/// One CUDA thread on the CPU device.
pub(crate) struct ThreadCtx {
    pub grid: *const GridInfo,
    pub block: *const Block,
    pub block_idx: Dim3,
    pub thread_idx: Cell<Dim3>,
    /// The thread's position in its block (x fastest): its warp is `linear / 32`.
    pub linear: Cell<u32>,
    /// The coroutine's yielder, while the thread runs as a coroutine (kernels with barriers or
    /// warp operations); null when it runs as a plain call.
    pub yielder: Cell<*const Yielder<(), Stop>>,
    /// The function the thread is in, as an index-out-of-range report names it: the kernel's, or
    /// the `#[device]` function's it has called ([`in_function`]).
    pub function: Cell<&'static str>,
}

thread_local! {
    static CURRENT: Cell<*const ThreadCtx> = const { Cell::new(std::ptr::null()) };
}

/// Makes `ctx` the CUDA thread this host thread runs (null: none); returns the previous one.
#[inline]
pub(crate) fn enter(ctx: *const ThreadCtx) -> *const ThreadCtx {
    CURRENT.with(|c| c.replace(ctx))
}

/// The CUDA thread this host thread runs, if it runs one.
#[inline]
pub(crate) fn current<'a>() -> Option<&'a ThreadCtx> {
    let p = CURRENT.with(Cell::get);
    // SAFETY: the grid runner sets a context only while it lives (the block's contexts outlive
    // every call and resumption of their threads) and resets the pointer before it is freed.
    unsafe { p.as_ref() }
}

/// Marks the running CUDA thread as inside the `#[device]` function `name` until the guard is
/// dropped (a device function's host copy holds one), so that an index out of range there is
/// reported with that function's name, as on the GPU.
#[inline]
pub fn in_function(name: &'static str) -> InFunction {
    let ctx = CURRENT.with(Cell::get);
    // SAFETY: as in `current`; the guard restores the name before the thread's context ends
    // (it is dropped inside the call that the context is current for).
    let caller = unsafe { ctx.as_ref() }.map(|c| c.function.replace(name));
    InFunction { ctx, caller }
}

/// The guard of [`in_function`]: restores the caller's name.
pub struct InFunction {
    ctx: *const ThreadCtx,
    caller: Option<&'static str>,
}

impl Drop for InFunction {
    #[inline]
    fn drop(&mut self) {
        // Only while its context is still the current one: a guard kept past its call (safe
        // code may hold one) must not write through a context that is gone.
        if let Some(name) = self.caller
            && CURRENT.with(Cell::get) == self.ctx
        {
            // SAFETY: `ctx` is the current context, which the grid runner keeps alive while it
            // is current (`current`).
            unsafe { (*self.ctx).function.set(name) };
        }
    }
}

impl ThreadCtx {
    #[inline]
    pub(crate) fn grid(&self) -> &GridInfo {
        // SAFETY: the grid's description outlives its threads (`cpu::grid::Grid::run`).
        unsafe { &*self.grid }
    }

    #[inline]
    pub(crate) fn block(&self) -> &Block {
        // SAFETY: the block's state outlives its threads (`cpu::grid`'s `run_block`).
        unsafe { &*self.block }
    }

    /// The lane in the warp.
    #[inline]
    pub(crate) fn lane(&self) -> u32 {
        self.linear.get() % 32
    }

    /// Suspends the thread until the scheduler resumes it (`stop` says what it waits for);
    /// `false` when it does not run as a coroutine (then there is nothing to wait for: it is
    /// the only thread running).
    pub(crate) fn suspend(&self, stop: Stop) -> bool {
        let y = self.yielder.get();
        if y.is_null() {
            return false;
        }
        // SAFETY: the yielder belongs to this thread's coroutine, which is running now (the
        // pointer is set when the coroutine starts and lives as long as it does).
        unsafe { &*y }.suspend(stop);
        true
    }
}
