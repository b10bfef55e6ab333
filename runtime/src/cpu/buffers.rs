//! The operands' memory during a CPU launch: the locks it holds on their buffers, whether it may
//! run on several threads (one layout per written buffer), and the copies raw arguments are read
//! from.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::element::{ElemType, Element as ElementType};
use crate::error::{Error, Result};
use crate::lang::views::Raw;
use crate::launch::operand::{Arg, ArrayArg};
use crate::sync;

/// A lock held for the launch.
pub(super) enum Held<'a> {
    Read(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Write(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

/// A copy of raw argument `k` of `args` (an array of the CPU device, locked by the caller).
///
/// # Safety
///
/// `T` is the element type of argument `k`.
pub(super) unsafe fn raw_copy<T: ElementType>(kernel: &str, args: &[Arg<'_>], k: usize) -> Result<Raw<T>> {
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
    let zero = super::lang::zero::<T>();
    Raw::with_shape(data, a.shape).map(|r| r.launched_by(kernel, zero)).ok_or_else(|| Error::Unsupported {
        what: format!("raw argument {k} of kernel `{kernel}`: its shape {:?} does not hold its elements", a.shape),
    })
}

/// Whether each buffer that is written is reached by all its operands through one layout (first
/// element and strides), raw arguments excepted (they are read from copies).
pub(super) fn one_layout_per_written_buffer(args: &[Arg<'_>], _elems: &[ElemType]) -> bool {
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

pub(super) fn same_buffer(a: &ArrayArg<'_>, b: &ArrayArg<'_>) -> bool {
    match (a.host_lock, b.host_lock) {
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        // Memory described by `from_raw_parts`: assume it may be shared.
        _ => true,
    }
}

/// Locks every buffer the arguments live in, for the launch: exclusive where an output is, else
/// shared; each once, in address order.
pub(super) fn lock_buffers<'a>(args: &'a [Arg<'a>]) -> Vec<Held<'a>> {
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
