//! `ElementLoop`: one `#[elementwise]` launch on the CPU device (docs/cpu.md): the collapsed
//! loop shape and each operand's byte strides, built from the plan of the checked launch, run on
//! one thread or several by the kernel's [`HostEntry`](super::HostEntry).

use super::buffers::{Held, lock_buffers, one_layout_per_written_buffer, raw_copy};
use super::element::{Element, Operand, RUN_MAX, Run, repeated};
use super::{PARALLEL_MIN, panicked};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::DType;
use crate::element::{ElemType, Element as ElementType};
use crate::error::{Error, Result};
use crate::lang::views::Raw;
use crate::launch::operand::Arg;

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
