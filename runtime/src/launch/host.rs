//! The CPU device's launches (docs/cpu.md): a kernel's body, compiled for the host by rustc from
//! the same function the macros checked, called once per element by host threads.
//!
//! `#[elementwise]` writes, next to a kernel's CUDA code, a [`HostEntry`]: a function that matches
//! the instance's dtypes and hands [`ElementLoop::run`] a closure that reads the element's inputs
//! ([`Element::get`]), calls the user's function and writes its outputs ([`Element::set`]). The
//! erased launch (`elementwise::launch`) checks and plans the call as for a GPU, then builds the
//! [`ElementLoop`] from the plan: the collapsed loop shape and each operand's byte strides.
//!
//! Soundness on the host, where a data race is undefined behaviour:
//! - every buffer an operand lives in is locked for the whole launch (shared when only read,
//!   exclusive when written; each buffer once, in address order, so launches never deadlock);
//! - the loop runs on several threads only when each written buffer is reached by its operands
//!   through one layout (the same first element and strides), so each element's reads and writes
//!   belong to that element alone; otherwise (an output that is a transposed view of an input,
//!   two outputs sharing memory) it runs on one thread, in C order;
//! - a raw argument is read from a copy of its elements taken before the loop;
//! - a panic in the body (a debug build's integer overflow) is caught and becomes an error.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::DType;
use crate::element::{ElemType, Element as ElementType};
use crate::error::{Error, Result};
use crate::lang::views::Raw;
use crate::launch::operand::{Arg, ArrayArg};
use crate::sync;

/// A kernel's entry point on the CPU device, written by the macro next to its CUDA code.
#[derive(Clone, Copy)]
pub enum HostEntry {
    /// An `#[elementwise]` kernel: runs its body through [`ElementLoop::run`] for the loop's
    /// instance (an error for an instance it was not compiled for).
    Elementwise(fn(&ElementLoop<'_>) -> Result<()>),
    /// A `#[reduction]`: runs its map, `reduce` and `post` through [`ReduceLoop::run`].
    Reduction(fn(&ReduceLoop<'_>) -> Result<()>),
}

impl std::fmt::Debug for HostEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostEntry::Elementwise(_) => f.write_str("HostEntry::Elementwise"),
            HostEntry::Reduction(_) => f.write_str("HostEntry::Reduction"),
        }
    }
}

/// Elements below which a loop runs on the calling thread only.
const PARALLEL_MIN: usize = 1 << 15;

/// How one operand is reached from an element.
struct Operand {
    /// The first element (a scalar's value: [`ElementLoop::scalars`]); null for raw arguments.
    base: *mut u8,
    /// Byte strides along the loop's collapsed axes (0 where it broadcasts).
    strides: Vec<isize>,
    /// The element's size in bytes.
    size: usize,
}

/// A lock held for the launch.
pub(crate) enum Held<'a> {
    Read(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Write(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

/// One elementwise launch on the CPU device: the loop, its operands, the locks it holds.
pub struct ElementLoop<'a> {
    kernel: &'a str,
    instance: &'a [DType],
    args: &'a [Arg<'a>],
    /// Elements in the loop (the kernel's `loop_size()`).
    size: usize,
    /// The collapsed loop shape.
    dims: Vec<usize>,
    operands: Vec<Operand>,
    /// The scalar arguments' values, as the bytes of their parameters' dtypes (16 per argument).
    _scalars: Box<[[u8; 16]]>,
    parallel: bool,
    _held: Vec<Held<'a>>,
}

// SAFETY: the raw pointers are the operands' memory, which the loop's locks keep to this launch
// (exclusive where written); threads share the loop only inside `run`, each on its own elements
// (see the module's soundness rules).
unsafe impl Sync for ElementLoop<'_> {}

impl<'a> ElementLoop<'a> {
    /// The loop of a checked launch: `args` in the kernel's parameter order (checked against its
    /// signature, all on the CPU device), `elems` each parameter's element type, `scalars` each
    /// scalar argument's value converted to its parameter's dtype, `dims` the collapsed loop
    /// shape and `strides` each array operand's strides in elements along it (`None` for scalars
    /// and raw arguments).
    pub(crate) fn new(
        kernel: &'a str,
        instance: &'a [DType],
        args: &'a [Arg<'a>],
        elems: &[ElemType],
        scalars: Vec<Option<[u8; 16]>>,
        dims: Vec<usize>,
        strides: &[Option<Vec<i64>>],
    ) -> ElementLoop<'a> {
        let size = dims.iter().product();
        let mut values: Box<[[u8; 16]]> = scalars.iter().map(|v| v.unwrap_or([0; 16])).collect();
        let mut operands = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let elem = elems[k].size() as isize;
            let (base, st) = match a {
                Arg::In(x) | Arg::Out(x) => (
                    x.ptr as *mut u8,
                    strides[k].as_ref().map_or_else(|| vec![0; dims.len()], |s| s.iter().map(|&e| e as isize * elem).collect()),
                ),
                Arg::Scalar(_) => (values[k].as_mut_ptr(), vec![0; dims.len()]),
                Arg::Raw(_) => (std::ptr::null_mut(), vec![0; dims.len()]),
            };
            operands.push(Operand { base, strides: st, size: elems[k].size() });
        }
        let parallel = size >= PARALLEL_MIN && one_layout_per_written_buffer(args, elems);
        ElementLoop {
            kernel,
            instance,
            args,
            size,
            dims,
            operands,
            _scalars: values,
            parallel,
            _held: lock_buffers(args),
        }
    }

    /// The instance the loop runs (one dtype per generic parameter).
    pub fn instance(&self) -> &[DType] {
        self.instance
    }

    /// The number of elements (`loop_size()` in the body).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The error of an instance the kernel's CPU entry was not compiled for.
    pub fn not_compiled(&self) -> Error {
        Error::Unsupported {
            what: format!(
                "instance {:?} of kernel `{}` on the CPU device: the CPU code is compiled for \
                 every dtype its generic parameters' bounds admit when that is at most 64 \
                 combinations, else for the instances it precompiles (`instances = [...]`); add \
                 this one to that list",
                self.instance, self.kernel
            ),
        }
    }

    /// A copy of raw argument `k`'s elements, as the body's `Raw<T>`.
    ///
    /// # Safety
    ///
    /// `T` is the element type of parameter `k` for the loop's instance.
    pub unsafe fn raw<T: ElementType>(&self, k: usize) -> Result<Raw<T>> {
        // SAFETY: the caller's contract.
        unsafe { raw_copy(self.kernel, self.args, k) }
    }

    /// Runs `body` once per element (in C order on one thread, or in chunks on several; see the
    /// module). A panic in `body` is an error naming the kernel. `body` is called through a
    /// reference: the loop and its threads are compiled once, not once per kernel instance
    /// (monomorphized, they were 1.8 MB of the quickstart's code for the built-ins alone).
    pub fn run(&self, body: &(dyn Fn(&Element<'_>) + Sync)) -> Result<()> {
        self.run_parallel(&|start, end| self.run_range(start, end, body))
    }

    /// As [`ElementLoop::run`], through `runs` when it can: a run is a stretch of at most
    /// [`RUN_MAX`] consecutive elements of the innermost loop axis along which every operand is
    /// contiguous (or constant: its value is then repeated in a scratch buffer), handed over as
    /// one pointer per operand, so that the macro's loop over it is a plain indexed loop rustc
    /// vectorises. Otherwise (a strided operand) `body` is called per element.
    pub fn run_fast(&self, body: &(dyn Fn(&Element<'_>) + Sync), runs: &(dyn Fn(&Run<'_>) + Sync)) -> Result<()> {
        let inner = self.dims.len().checked_sub(1);
        let contiguous = inner.is_some_and(|d| {
            (0..self.operands.len()).all(|k| self.direct(k, d) || self.constant(k, d) || self.operands[k].base.is_null())
        });
        if !contiguous {
            return self.run(body);
        }
        self.run_parallel(&|start, end| self.run_runs(start, end, runs))
    }

    /// Whether operand `k`'s elements along axis `d` are consecutive (or there is one).
    fn direct(&self, k: usize, d: usize) -> bool {
        let o = &self.operands[k];
        self.dims[d] == 1 || o.strides[d] == o.size as isize
    }

    /// Whether input `k` is constant along axis `d` (a scalar, or broadcast): a run reads its
    /// value repeated in a scratch buffer. Never an output (its writes would be lost).
    fn constant(&self, k: usize, d: usize) -> bool {
        self.operands[k].strides[d] == 0 && !matches!(self.args[k], Arg::Out(_))
    }

    /// The elements `start..end` (C order) as runs, on this thread.
    fn run_runs(&self, start: usize, end: usize, runs: &(dyn Fn(&Run<'_>) + Sync)) {
        let nd = self.dims.len();
        let inner = self.dims[nd - 1];
        let mut scratch: Vec<Vec<u128>> = self.operands.iter().map(|_| Vec::new()).collect();
        let mut ptrs: Vec<*mut u8> = vec![std::ptr::null_mut(); self.operands.len()];
        let mut offsets = vec![0isize; self.operands.len()];
        let mut i = start;
        while i < end {
            // The element's position, its operands' offsets.
            let mut idx = i;
            offsets.fill(0);
            for d in (0..nd).rev() {
                let x = idx % self.dims[d];
                idx /= self.dims[d];
                for (off, o) in offsets.iter_mut().zip(&self.operands) {
                    *off += x as isize * o.strides[d];
                }
            }
            let along = i % inner;
            let len = (end - i).min(inner - along).min(RUN_MAX);
            for (k, o) in self.operands.iter().enumerate() {
                if o.base.is_null() {
                    continue;
                }
                // SAFETY: the offset is this element of operand `k` (inside its layout).
                let at = unsafe { o.base.offset(offsets[k]) };
                ptrs[k] = if !self.direct(k, nd - 1) {
                    // SAFETY: `at` is one element of `o.size` bytes (locked for the launch).
                    unsafe { repeated(&mut scratch[k], at, o.size, len) }
                } else {
                    at
                };
            }
            runs(&Run { ptrs: &ptrs, len, index: i, size: self.size });
            i += len;
        }
    }

    /// Runs `range(start, end)` over the loop's elements: in chunks on several threads when the
    /// loop is parallel, else on this one.
    fn run_parallel(&self, range: &(dyn Fn(usize, usize) + Sync)) -> Result<()> {
        if self.size == 0 {
            return Ok(());
        }
        let threads = if self.parallel {
            std::thread::available_parallelism().map_or(1, |n| n.get()).min(self.size / (PARALLEL_MIN / 2))
        } else {
            1
        };
        let caught = if threads <= 1 {
            catch_unwind(AssertUnwindSafe(|| range(0, self.size)))
        } else {
            let chunk = self.size.div_ceil(threads);
            catch_unwind(AssertUnwindSafe(|| {
                std::thread::scope(|s| {
                    for t in 1..threads {
                        let (start, end) = (t * chunk, ((t + 1) * chunk).min(self.size));
                        s.spawn(move || range(start, end));
                    }
                    range(0, chunk.min(self.size));
                })
            }))
        };
        caught.map_err(|p| panicked(self.kernel, "its body", &*p))
    }

    /// The elements `start..end` (C order), on this thread.
    fn run_range(&self, start: usize, end: usize, body: &(dyn Fn(&Element<'_>) + Sync)) {
        let nd = self.dims.len();
        let mut idx = vec![0usize; nd];
        let mut rest = start;
        for d in (0..nd).rev() {
            idx[d] = rest % self.dims[d];
            rest /= self.dims[d];
        }
        let mut offsets: Vec<isize> = self
            .operands
            .iter()
            .map(|o| idx.iter().zip(&o.strides).map(|(&i, &s)| i as isize * s).sum())
            .collect();
        for i in start..end {
            body(&Element { operands: &self.operands, offsets: &offsets, index: i, size: self.size, reduce_index: 0 });
            // The next element: the innermost axis first, carrying into the outer ones.
            let mut d = nd;
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                for (off, o) in offsets.iter_mut().zip(&self.operands) {
                    *off += o.strides[d];
                }
                if idx[d] < self.dims[d] {
                    break;
                }
                for (off, o) in offsets.iter_mut().zip(&self.operands) {
                    *off -= o.strides[d] * self.dims[d] as isize;
                }
                idx[d] = 0;
            }
        }
    }
}

/// A reduction's map and fold over a [`Run`], from an accumulator (`None`: the run's first
/// element starts it): what the macro writes for [`ReduceLoop::run_fast`].
pub type FoldRun<'f, A> = dyn Fn(&Run<'_>, Option<A>) -> Option<A> + Sync + 'f;

/// The error of a kernel whose host code (`what`) panicked on the CPU device.
pub(crate) fn panicked(kernel: &str, what: &str, payload: &(dyn std::any::Any + Send)) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.to_string(),
        detail: format!(
            "{what} panicked on the CPU device: {} (a debug build checks integer overflow, which \
             the GPU does not: build with `--release`, or use `wrapping_*` operations)",
            crate::error::panic_text(payload, "a panic")
        ),
    }
}

/// The most elements of one [`Run`].
pub const RUN_MAX: usize = 4096;

/// A run of an [`ElementLoop`] ([`ElementLoop::run_fast`]): `len` consecutive elements, each
/// operand's values at consecutive addresses from [`Run::ptr`].
pub struct Run<'l> {
    ptrs: &'l [*mut u8],
    len: usize,
    index: usize,
    size: usize,
}

impl Run<'_> {
    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the run is empty (never: runs have at least one element).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Operand `k`'s first element: the run's values of operand `k` are `len` consecutive
    /// elements of its type from here (outputs written there land in the array). Null for raw
    /// arguments.
    #[inline]
    pub fn ptr(&self, k: usize) -> *mut u8 {
        self.ptrs[k]
    }

    /// The first element's index in C order.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of elements of the loop.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// One element of an [`ElementLoop`]: where each operand's value is.
pub struct Element<'l> {
    operands: &'l [Operand],
    offsets: &'l [isize],
    index: usize,
    size: usize,
    /// A reduction map's position along the reduced axes (0 in elementwise loops).
    reduce_index: usize,
}

impl Element<'_> {
    /// The value of per-element argument `k` (an input, or an output read before it is written).
    ///
    /// # Safety
    ///
    /// Argument `k` is an array or scalar argument whose element type is `T` for the loop's
    /// instance (what the macro writes: the signature's types, which the launch checked).
    #[inline]
    pub unsafe fn get<T: ElementType>(&self, k: usize) -> T {
        // SAFETY: `base + offset` is this element of operand `k` (the loop's offsets stay inside
        // the operand's layout, which the launch checked), aligned for its element type `T` (the
        // caller's contract); the buffer is locked for the launch.
        unsafe { (self.operands[k].base.offset(self.offsets[k]) as *const T).read() }
    }

    /// Writes `v` to output argument `k` at this element.
    ///
    /// # Safety
    ///
    /// As [`Element::get`], and argument `k` is an output (its buffer is locked for writing).
    #[inline]
    pub unsafe fn set<T: ElementType>(&self, k: usize, v: T) {
        // SAFETY: as in `get`; the element is this element's alone (the loop runs on several
        // threads only when each written buffer is reached through one layout).
        unsafe { (self.operands[k].base.offset(self.offsets[k]) as *mut T).write(v) }
    }

    /// The element's index in C order (`index()` in the body).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of elements of the loop (`loop_size()` in the body).
    pub fn size(&self) -> usize {
        self.size
    }

    /// A reduction map's position along the reduced axes (`reduce_index()` in the map).
    pub fn reduce_index(&self) -> usize {
        self.reduce_index
    }
}

/// One reduction on the CPU device: its inputs over the loop shape, which axes are reduced, the
/// output, the locks it holds.
pub struct ReduceLoop<'a> {
    kernel: &'a str,
    instance: &'a [DType],
    args: &'a [Arg<'a>],
    /// Loop axes kept (the outputs) and reduced, in C order.
    kept: Vec<usize>,
    reduced: Vec<usize>,
    shape: Vec<usize>,
    /// The inputs (raw ones with a null base), then the flat loop index as a last operand whose
    /// "address" is the index (`index()` in the map).
    operands: Vec<Operand>,
    out_base: *mut u8,
    /// The output's byte stride along each loop axis (0 on reduced ones).
    out_strides: Vec<isize>,
    threads: usize,
    _held: Vec<Held<'a>>,
}

// SAFETY: as for `ElementLoop`: the raw pointers are the operands' memory, locked for the launch
// (the output exclusively); threads share the loop only inside `run`, each on its own outputs, or
// on its own part of one output's elements, whose partial results the caller combines.
unsafe impl Sync for ReduceLoop<'_> {}

impl<'a> ReduceLoop<'a> {
    /// The loop of a checked reduction on the CPU device: `inputs` in the map's parameter order
    /// (all arrays of the CPU device), `out` of the output shape, `shape` the loop shape (the
    /// inputs' broadcast), `mask` the reduced axes, `elems` each input's element type and
    /// `out_elem` the output's.
    pub(crate) fn new(
        kernel: &'a str,
        instance: &'a [DType],
        args: &'a [Arg<'a>],
        shape: &[usize],
        mask: &[bool],
        keepdims: bool,
        elems: &[ElemType],
        out_elem: ElemType,
    ) -> ReduceLoop<'a> {
        let nd = shape.len();
        let (mut inputs, mut out) = (Vec::new(), None);
        for a in args {
            match a {
                Arg::Out(x) => out = Some(x),
                other => inputs.push(other),
            }
        }
        let mut operands = Vec::with_capacity(inputs.len() + 1);
        for (k, a) in inputs.iter().enumerate() {
            let size = elems[k].size() as isize;
            operands.push(match a {
                Arg::In(x) => Operand {
                    base: x.ptr as *mut u8,
                    strides: (0..nd)
                        .map(|ax| {
                            let pad = nd - x.shape.len();
                            if ax >= pad && x.shape[ax - pad] == shape[ax] { x.strides[ax - pad] * size } else { 0 }
                        })
                        .collect(),
                    size: size as usize,
                },
                _ => Operand { base: std::ptr::null_mut(), strides: vec![0; nd], size: size as usize },
            });
        }
        // The flat C-order loop index, as an operand at address 0.
        let mut c = vec![0isize; nd];
        let mut acc = 1isize;
        for ax in (0..nd).rev() {
            c[ax] = acc;
            acc *= shape[ax] as isize;
        }
        operands.push(Operand { base: std::ptr::null_mut(), strides: c, size: 0 });
        let (out_base, mut out_strides) = (out.map_or(std::ptr::null_mut(), |o| o.ptr as *mut u8), vec![0isize; nd]);
        if let Some(o) = out {
            let size = out_elem.size() as isize;
            let mut j = 0;
            for (ax, &m) in mask.iter().enumerate() {
                if keepdims {
                    out_strides[ax] = if m { 0 } else { o.strides[ax] * size };
                } else if !m {
                    out_strides[ax] = o.strides[j] * size;
                    j += 1;
                }
            }
        }
        let kept: Vec<usize> = (0..nd).filter(|&ax| !mask[ax]).collect();
        let reduced: Vec<usize> = (0..nd).filter(|&ax| mask[ax]).collect();
        let total: usize = shape.iter().product();
        // An output that shares memory with an input is reduced on one thread (in order), so that
        // no thread reads an element another one writes.
        let shared = out.is_some_and(|o| inputs.iter().any(|a| a.array().is_some_and(|x| same_buffer(o, x))));
        let threads = if total >= PARALLEL_MIN && !shared { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { 1 };
        ReduceLoop {
            kernel,
            instance,
            args,
            kept,
            reduced,
            shape: shape.to_vec(),
            operands,
            out_base,
            out_strides,
            threads,
            _held: lock_buffers(args),
        }
    }

    /// The instance the reduction runs (one dtype per generic parameter).
    pub fn instance(&self) -> &[DType] {
        self.instance
    }

    /// The error of an instance the reduction's CPU code was not compiled for (or whose map
    /// value the CPU code cannot convert to the accumulator).
    pub fn not_compiled(&self) -> Error {
        Error::Unsupported {
            what: format!(
                "instance {:?} of reduction `{}` on the CPU device: its CPU code covers every dtype \
                 its generic parameters' bounds admit (up to 64 combinations, else the \
                 precompiled instances) whose map value converts to the accumulator",
                self.instance, self.kernel
            ),
        }
    }

    /// A copy of raw argument `k`'s elements, as the map's `Raw<T>`.
    ///
    /// # Safety
    ///
    /// As [`ElementLoop::raw`].
    pub unsafe fn raw<T: ElementType>(&self, k: usize) -> Result<Raw<T>> {
        // SAFETY: the caller's contract, for the same arguments.
        unsafe { raw_copy(self.kernel, self.args, k) }
    }

    /// Reduces: for each output, `map` of each of its elements (C order along the reduced axes)
    /// folded with `reduce` from `identity` (else from the first element), then `post` written to
    /// the output. An output's elements may be folded in parts on several threads whose results
    /// are combined with `reduce` in order (`reduce` is associative, as on the GPU). A panic in
    /// `map`, `reduce` or `post` is an error naming the reduction.
    ///
    /// # Safety
    ///
    /// `O` is the output's element type.
    pub unsafe fn run<A: Copy + Send, O: Copy>(
        &self,
        identity: Option<A>,
        map: &(dyn Fn(&Element<'_>) -> A + Sync),
        reduce: &(dyn Fn(A, A) -> A + Sync),
        post: &(dyn Fn(A) -> O + Sync),
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.run_fast(identity, map, reduce, post, None) }
    }

    /// As [`ReduceLoop::run`], and where every input is contiguous (or constant) along the
    /// innermost reduced axis, `fold_run` maps and folds a [`Run`] of consecutive elements along
    /// it (the macro's loop, which rustc compiles as one tight loop) instead of `map` per element.
    ///
    /// # Safety
    ///
    /// As [`ReduceLoop::run`].
    pub unsafe fn run_fast<A: Copy + Send, O: Copy>(
        &self,
        identity: Option<A>,
        map: &(dyn Fn(&Element<'_>) -> A + Sync),
        reduce: &(dyn Fn(A, A) -> A + Sync),
        post: &(dyn Fn(A) -> O + Sync),
        fold_run: Option<&FoldRun<'_, A>>,
    ) -> Result<()> {
        let fold_run = fold_run.filter(|_| self.runs_apply());
        let fold = |o: usize, j0: usize, j1: usize, init: Option<A>| match fold_run {
            Some(f) => self.fold_runs(o, j0, j1, init, reduce, f),
            None => self.fold(o, j0, j1, init, map, reduce),
        };
        let dims = |axes: &[usize]| axes.iter().map(|&ax| self.shape[ax]).product::<usize>();
        let (outs, red) = (dims(&self.kept), dims(&self.reduced));
        let write = |o: usize, a: Option<A>| {
            let Some(a) = a else { return };
            let at: isize = self.multi_offset(&self.kept, o, &self.out_strides);
            // SAFETY: `at` is output `o`'s element (the launch checked the output's shape and
            // layout), of type `O` (the caller's contract); the output is locked exclusively and
            // each output is written once, by one thread.
            unsafe { (self.out_base.offset(at) as *mut O).write(post(a)) };
        };
        let caught = catch_unwind(AssertUnwindSafe(|| {
            if self.threads > 1 && outs >= self.threads {
                let chunk = outs.div_ceil(self.threads);
                std::thread::scope(|s| {
                    for t in 0..self.threads {
                        let (write, fold) = (&write, &fold);
                        s.spawn(move || {
                            for o in t * chunk..((t + 1) * chunk).min(outs) {
                                write(o, fold(o, 0, red, identity));
                            }
                        });
                    }
                });
            } else if self.threads > 1 && red >= PARALLEL_MIN {
                let chunk = red.div_ceil(self.threads);
                for o in 0..outs {
                    let parts: Vec<Option<A>> = std::thread::scope(|s| {
                        let handles: Vec<_> = (0..self.threads)
                            .map(|t| {
                                let (j0, j1) = (t * chunk, ((t + 1) * chunk).min(red));
                                let fold = &fold;
                                s.spawn(move || fold(o, j0, j1, None))
                            })
                            .collect();
                        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
                    });
                    let mut acc = identity;
                    for p in parts.into_iter().flatten() {
                        acc = Some(match acc {
                            Some(a) => reduce(a, p),
                            None => p,
                        });
                    }
                    write(o, acc);
                }
            } else {
                for o in 0..outs {
                    write(o, fold(o, 0, red, identity));
                }
            }
        }));
        caught.map_err(|p| Error::InvalidLaunch {
            kernel: self.kernel.to_string(),
            detail: format!("its map, reduce or post panicked on the CPU device: {}", crate::error::panic_text(&*p, "a panic")),
        })
    }

    /// The byte offset of element `i` (C order over `axes`) with `strides` along the loop axes.
    fn multi_offset(&self, axes: &[usize], mut i: usize, strides: &[isize]) -> isize {
        let mut at = 0isize;
        for &ax in axes.iter().rev() {
            let d = self.shape[ax];
            at += (i % d) as isize * strides[ax];
            i /= d;
        }
        at
    }

    /// Output `o`'s elements `j0..j1` (C order along the reduced axes) folded from `init`.
    fn fold<A: Copy>(
        &self,
        o: usize,
        j0: usize,
        j1: usize,
        init: Option<A>,
        map: &(dyn Fn(&Element<'_>) -> A + Sync),
        reduce: &(dyn Fn(A, A) -> A + Sync),
    ) -> Option<A> {
        if j0 >= j1 {
            return init;
        }
        let n_ops = self.operands.len();
        let total: usize = self.shape.iter().product();
        // Offsets of the output's first element, then of element j0 along the reduced axes.
        let mut offsets: Vec<isize> = self
            .operands
            .iter()
            .map(|op| self.multi_offset(&self.kept, o, &op.strides) + self.multi_offset(&self.reduced, j0, &op.strides))
            .collect();
        let rdims: Vec<usize> = self.reduced.iter().map(|&ax| self.shape[ax]).collect();
        let mut idx = vec![0usize; rdims.len()];
        let mut rest = j0;
        for d in (0..rdims.len()).rev() {
            idx[d] = rest % rdims[d];
            rest /= rdims[d];
        }
        // Blocks of FOLD_BLOCK elements folded in order, the blocks' results combined pairwise
        // (a binary counter of partial results, earlier ones on the left): the rounding error of
        // a float sum grows with log(n) blocks, not with n elements (NumPy's pairwise summation).
        let mut partials: Vec<(u32, A)> = Vec::new();
        let mut block: Option<A> = None;
        let mut in_block = 0usize;
        for j in j0..j1 {
            let e = Element {
                operands: &self.operands,
                offsets: &offsets,
                index: offsets[n_ops - 1] as usize,
                size: total,
                reduce_index: j,
            };
            let v = map(&e);
            block = Some(match block {
                Some(a) => reduce(a, v),
                None => v,
            });
            in_block += 1;
            if in_block == FOLD_BLOCK {
                push_pairwise(&mut partials, block.take(), reduce);
                in_block = 0;
            }
            let mut d = rdims.len();
            while d > 0 {
                d -= 1;
                let ax = self.reduced[d];
                idx[d] += 1;
                for (off, op) in offsets.iter_mut().zip(&self.operands) {
                    *off += op.strides[ax];
                }
                if idx[d] < rdims[d] {
                    break;
                }
                for (off, op) in offsets.iter_mut().zip(&self.operands) {
                    *off -= op.strides[ax] * rdims[d] as isize;
                }
                idx[d] = 0;
            }
        }
        push_pairwise(&mut partials, block, reduce);
        finish_pairwise(partials, init, reduce)
    }

    /// Whether every input is contiguous or constant along the innermost reduced axis (then a
    /// fold can go by runs).
    fn runs_apply(&self) -> bool {
        let Some(&ax) = self.reduced.last() else { return false };
        let inputs = &self.operands[..self.operands.len() - 1];
        inputs.iter().all(|o| o.base.is_null() || self.shape[ax] == 1 || o.strides[ax] == 0 || o.strides[ax] == o.size as isize)
    }

    /// As [`ReduceLoop::fold`], by runs along the innermost reduced axis ([`ReduceLoop::runs_apply`]).
    fn fold_runs<A: Copy>(
        &self,
        o: usize,
        j0: usize,
        j1: usize,
        init: Option<A>,
        reduce: &(dyn Fn(A, A) -> A + Sync),
        fold_run: &FoldRun<'_, A>,
    ) -> Option<A> {
        let ax = self.reduced[self.reduced.len() - 1];
        let inner = self.shape[ax];
        let inputs = &self.operands[..self.operands.len() - 1];
        let base: Vec<isize> = inputs.iter().map(|op| self.multi_offset(&self.kept, o, &op.strides)).collect();
        let mut scratch: Vec<Vec<u128>> = inputs.iter().map(|_| Vec::new()).collect();
        let mut ptrs: Vec<*mut u8> = vec![std::ptr::null_mut(); inputs.len()];
        let total: usize = self.shape.iter().product();
        let (mut partials, mut block, mut in_block) = (Vec::new(), None, 0usize);
        let mut j = j0;
        while j < j1 {
            let len = (j1 - j).min(inner - j % inner).min(FOLD_BLOCK - in_block);
            for (k, op) in inputs.iter().enumerate() {
                if op.base.is_null() {
                    continue;
                }
                let off = base[k] + self.multi_offset(&self.reduced, j, &op.strides);
                // SAFETY: the offset is element `j` of output `o`'s elements of input `k`
                // (inside its layout, which the launch checked); the input is locked.
                let at = unsafe { op.base.offset(off) };
                ptrs[k] = if inner == 1 || op.strides[ax] == op.size as isize {
                    at
                } else {
                    // SAFETY: `at` is one element of `op.size` bytes (locked for the launch).
                    unsafe { repeated(&mut scratch[k], at, op.size, len) }
                };
            }
            block = fold_run(&Run { ptrs: &ptrs, len, index: 0, size: total }, block);
            in_block += len;
            if in_block == FOLD_BLOCK {
                push_pairwise(&mut partials, block.take(), reduce);
                in_block = 0;
            }
            j += len;
        }
        push_pairwise(&mut partials, block, reduce);
        finish_pairwise(partials, init, reduce)
    }
}

/// A run's view of an operand that is constant along it: `len` copies of its element at `at`
/// (`size` bytes) in `scratch`, which is grown as needed.
///
/// # Safety
///
/// `at` is valid for reads of `size` bytes.
unsafe fn repeated(scratch: &mut Vec<u128>, at: *const u8, size: usize, len: usize) -> *mut u8 {
    scratch.resize((len * size).div_ceil(16), 0);
    let dst = scratch.as_mut_ptr() as *mut u8;
    for j in 0..len {
        // SAFETY: `dst` has room for `len` elements of `size` bytes (resized above), `at` holds
        // one (the caller's contract); the scratch buffer is not the operand's memory.
        unsafe { std::ptr::copy_nonoverlapping(at, dst.add(j * size), size) };
    }
    dst
}

/// The pairwise partials combined in order, after `init`.
fn finish_pairwise<A: Copy>(partials: Vec<(u32, A)>, init: Option<A>, reduce: &(dyn Fn(A, A) -> A + Sync)) -> Option<A> {
    let mut rest = partials.into_iter().rev().map(|(_, a)| a);
    let last = rest.next();
    let folded = rest.fold(last, |acc, earlier| acc.map(|a| reduce(earlier, a)));
    match (init, folded) {
        (Some(i), Some(f)) => Some(reduce(i, f)),
        (i, None) => i,
        (None, f) => f,
    }
}

/// Elements a reduction folds in order before it combines partial results pairwise.
const FOLD_BLOCK: usize = 1024;

/// Adds a block's result to the pairwise partials: equal levels merge (earlier on the left).
fn push_pairwise<A: Copy>(partials: &mut Vec<(u32, A)>, block: Option<A>, reduce: &(dyn Fn(A, A) -> A + Sync)) {
    let Some(mut a) = block else { return };
    let mut level = 0u32;
    while let Some(&(l, earlier)) = partials.last() {
        if l != level {
            break;
        }
        partials.pop();
        a = reduce(earlier, a);
        level += 1;
    }
    partials.push((level, a));
}

/// A copy of raw argument `k` of `args` (an array of the CPU device, locked by the caller).
///
/// # Safety
///
/// `T` is the element type of argument `k`.
unsafe fn raw_copy<T: ElementType>(kernel: &str, args: &[Arg<'_>], k: usize) -> Result<Raw<T>> {
    let Some(Arg::Raw(a)) = args.get(k) else {
        return Err(Error::Unsupported { what: format!("argument {k} of kernel `{kernel}` is not a raw argument") });
    };
    debug_assert_eq!(a.elem, T::ELEM);
    let mut data = Vec::with_capacity(a.len());
    // SAFETY: `a` describes an array of the CPU device whose buffer the launch holds locked; every
    // index `for_each_index` yields from its shape and strides is one of its elements (an
    // `ArrayArg` is made from an array, whose layout stays inside its buffer, or by
    // `from_raw_parts`, whose caller promises it); `T` is its element type (the caller's
    // contract).
    crate::array::shape::for_each_index(a.shape, a.strides, 0, |i| {
        data.push(unsafe { (a.ptr as *const T).offset(i).read() })
    });
    let zero = crate::lang::cpu::zero::<T>();
    Raw::with_shape(data, a.shape).map(|r| r.launched_by(kernel, zero)).ok_or_else(|| Error::Unsupported {
        what: format!("raw argument {k} of kernel `{kernel}`: its shape {:?} does not hold its elements", a.shape),
    })
}

/// Whether each buffer that is written is reached by all its operands through one layout (first
/// element and strides), raw arguments excepted (they are read from copies).
fn one_layout_per_written_buffer(args: &[Arg<'_>], _elems: &[ElemType]) -> bool {
    let arrays: Vec<(&ArrayArg<'_>, bool)> = args
        .iter()
        .filter_map(|a| match a {
            Arg::In(x) => Some((x, false)),
            Arg::Out(x) => Some((x, true)),
            Arg::Raw(_) | Arg::Scalar(_) => None,
        })
        .collect();
    arrays.iter().filter(|(_, w)| *w).all(|(out, _)| {
        arrays.iter().all(|(other, _)| {
            std::ptr::eq(*out, *other)
                || !same_buffer(out, other)
                || (out.ptr == other.ptr && out.strides == other.strides && out.shape == other.shape)
        })
    })
}

fn same_buffer(a: &ArrayArg<'_>, b: &ArrayArg<'_>) -> bool {
    match (a.host_lock, b.host_lock) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        // Memory described by `from_raw_parts`: assume it may be shared.
        _ => true,
    }
}

/// Locks every buffer the arguments live in, for the launch: exclusive where an output is, else
/// shared; each once, in address order.
pub(crate) fn lock_buffers<'a>(args: &'a [Arg<'a>]) -> Vec<Held<'a>> {
    let mut locks: Vec<(&'a RwLock<()>, bool)> = Vec::new();
    for a in args {
        let (x, write) = match a {
            Arg::In(x) | Arg::Raw(x) => (x, false),
            Arg::Out(x) => (x, true),
            Arg::Scalar(_) => continue,
        };
        let Some(lock) = x.host_lock else { continue };
        match locks.iter_mut().find(|(l, _)| std::ptr::eq(*l, lock)) {
            Some(entry) => entry.1 |= write,
            None => locks.push((lock, write)),
        }
    }
    locks.sort_by_key(|(l, _)| *l as *const RwLock<()> as usize);
    locks
        .into_iter()
        .map(|(l, write)| {
            if write {
                Held::Write(sync::write(l))
            } else {
                Held::Read(sync::read(l))
            }
        })
        .collect()
}

