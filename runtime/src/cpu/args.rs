//! A `#[rawkernel]`'s array arguments on the CPU device: the handles its host copy indexes
//! (`cpu::lang`'s `Slice`, `View` and `TensorMap`), made from the arrays the launch holds locked
//! (`cpu::grid::Grid`). Generated code calls these as `__private::rawkernel::cpu_*`, next to the
//! GPU's argument conversions (`rawkernel.rs`).

use crate::array::Array;
use crate::element::Element;
use crate::tensor_map::TensorMap;

/// A `&TensorMap<T>` argument on the CPU device: the handle the kernel's host copy passes to
/// `tma_load_2d` (the array's elements, its shape, the box and the swizzle).
///
/// # Safety
///
/// As [`cpu_slice`] for the map's array (C-contiguous: `TensorMap::new` checked it).
pub unsafe fn cpu_tensor_map<'m, T: Element>(m: &'m TensorMap<'_, T>) -> super::lang::TensorMap<'m, T> {
    let [br, bc] = m.box_shape();
    // SAFETY: the caller's contract, for the map's array.
    let src = unsafe { cpu_slice(m.array()) };
    super::lang::TensorMap::new(src, m.shape(), [br as usize, bc as usize], m.swizzle().bytes() as usize)
}

/// A slice argument on the CPU device: the handle the kernel's host copy indexes.
///
/// # Safety
///
/// `a` is on the CPU device and C-contiguous, and a `cpu::grid::Grid` holds its buffer's lock
/// (exclusive when the kernel writes it) for as long as the handle is used.
pub unsafe fn cpu_slice<T: Element>(a: &Array<T>) -> super::lang::Slice<'_, T> {
    // SAFETY: the caller's contract: the array's elements, alive and locked for the launch.
    unsafe { super::lang::Slice::from_raw_parts(a.device_ptr() as *mut T, a.len()) }
}

/// A view argument of `N` dimensions on the CPU device (the launch checked the dimensions).
///
/// # Safety
///
/// As [`cpu_slice`], any layout.
pub unsafe fn cpu_view<T: Element, const N: usize>(a: &Array<T>) -> super::lang::View<'_, T, N> {
    let (mut shape, mut strides) = ([0usize; N], [0isize; N]);
    shape.copy_from_slice(&a.shape()[..N]);
    strides.copy_from_slice(&a.strides()[..N]);
    // SAFETY: the caller's contract; the shape and strides are the array's own.
    unsafe { super::lang::View::from_raw_parts(a.device_ptr() as *mut T, shape, strides) }
}
