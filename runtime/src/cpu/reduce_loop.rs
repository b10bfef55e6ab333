//! `ReduceLoop`: one `#[reduction]` on the CPU device (docs/cpu.md): its inputs over the loop
//! shape, the reduced axes, the output, and the order it folds in (blocks folded in order, the
//! blocks' results combined pairwise).

use super::buffers::{Held, lock_buffers, raw_copy, same_buffer};
use super::element::{Element, Operand, Run, repeated};
use super::PARALLEL_MIN;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::DType;
use crate::element::{ElemType, Element as ElementType};
use crate::error::{Error, Result};
use crate::lang::views::Raw;
use crate::launch::operand::Arg;

/// A reduction's map and fold over a [`Run`], from an accumulator (`None`: the run's first
/// element starts it): what the macro writes for [`ReduceLoop::run_fast`].
pub type FoldRun<'f, A> = dyn Fn(&Run<'_>, Option<A>) -> Option<A> + Sync + 'f;

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
