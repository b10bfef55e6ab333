//! The argument checks of `#[rawkernel]` launch functions (what their generated code calls):
//! the launch's device, slices (contiguous, on the device), views, tensor maps, and the rule that
//! a read-only slice shares no memory with a written argument.

use crate::array::Array;
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::{LaunchConfig, SliceArg, ViewArg};
use crate::tensor_map::{TensorMap, TensorMapParam};

/// The device a launch with `cfg` runs on: the stream's, else the current device.
#[inline]
pub fn launch_device(cfg: &LaunchConfig<'_>) -> usize {
    match cfg.stream {
        Some(s) => s.device().ordinal(),
        None => Device::current_ordinal(),
    }
}

#[inline]
fn on_device<T: Element>(kernel: &str, param: &str, a: &Array<T>, device: usize) -> Result<()> {
    if a.device().ordinal() == device {
        return Ok(());
    }
    Err(Error::DeviceMismatch {
        context: format!("argument `{param}` of kernel `{kernel}`"),
        expected: device,
        found: a.device().ordinal(),
    })
}

/// A `&[T]` / `&mut [T]` argument: the whole array, which must be C-contiguous and on the launch's
/// device.
#[inline]
pub fn slice_arg<T: Element>(kernel: &str, param: &str, a: &Array<T>, device: usize) -> Result<SliceArg> {
    on_device(kernel, param, a, device)?;
    if !a.is_c_contiguous() {
        return Err(not_contiguous(kernel, param, a.shape(), a.strides()));
    }
    Ok(SliceArg::of(a))
}

/// The device bytes an array argument can touch: from its lowest to its highest element (a view's
/// bounding range; empty for an empty array).
#[inline]
pub fn byte_span<T: Element>(a: &Array<T>) -> std::ops::Range<u64> {
    if a.shape().contains(&0) {
        return 0..0;
    }
    let size = std::mem::size_of::<T>() as i64;
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&n, &st) in a.shape().iter().zip(a.strides()) {
        let reach = (n as i64 - 1) * st as i64 * size;
        if reach < 0 { lo += reach } else { hi += reach }
    }
    let base = a.device_ptr() as i64;
    (base + lo) as u64..(base + hi + size) as u64
}

/// Rust's rule for a raw kernel's `&[T]` argument, which its generated code relies on (those
/// reads go through the read-only data cache, which is only correct for memory nothing writes
/// during the kernel): no writable argument (`&mut [T]`, `ViewMut`) may cover bytes of a `&[T]`
/// argument. `args` are `(parameter, byte span, is a &[T], is writable)`.
pub fn check_read_only(kernel: &str, args: &[(&str, std::ops::Range<u64>, bool, bool)]) -> Result<()> {
    for (ro, span, _, _) in args.iter().filter(|a| a.2) {
        for (w, wspan, _, _) in args.iter().filter(|a| a.3) {
            if span.start < wspan.end && wspan.start < span.end {
                return Err(Error::InvalidLaunch {
                    kernel: kernel.to_string(),
                    detail: format!(
                        "`{ro}` (a `&[T]`, read-only for the whole kernel) and `{w}` (written by the kernel) share device memory; \
                         as in Rust a shared slice cannot alias a mutable one: pass a copy (`.copy()`) for `{ro}`, or take it as `&mut [T]`"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A `View<T, N>` / `ViewMut<T, N>` argument: an array of `N` dimensions, any strides.
#[inline]
pub fn view_arg<T: Element, const N: usize>(kernel: &str, param: &str, a: &Array<T>, device: usize) -> Result<ViewArg<N>> {
    on_device(kernel, param, a, device)?;
    ViewArg::of(a).ok_or_else(|| Error::InvalidLaunch {
        kernel: kernel.to_string(),
        detail: format!(
            "argument `{param}` is a `View<_, {N}>` but the array has {} dimension(s) (shape {:?}); \
             reshape it first (`.reshape(..)?`)",
            a.ndim(),
            a.shape()
        ),
    })
}

/// A `&TensorMap<T>` argument: the map's parameter value (the encoded `CUtensorMap` and its box),
/// passed by value; the map's array must be on the launch's device ([`Error::DeviceMismatch`]
/// otherwise, as for an array argument). The map borrows its array, so the array outlives the
/// launch's use of the value and no `&mut` argument of the same launch can be that array.
#[inline]
pub fn tensor_map_arg<T: Element>(kernel: &str, param: &str, m: &TensorMap<'_, T>, device: usize) -> Result<TensorMapParam> {
    on_device(kernel, param, m.array(), device)?;
    Ok(m.param())
}

/// The error for an array that cannot be passed as a kernel's slice parameter.
pub fn not_contiguous(kernel: &str, param: &str, shape: &[usize], strides: &[isize]) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.to_string(),
        detail: format!(
            "argument `{param}` is a `&[T]` slice but the array is not C-contiguous (shape {shape:?}, \
             strides {strides:?}); pass a contiguous copy (`.copy()?`), or declare the parameter \
             `View<T, N>` to index it with its strides"
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_only_slices_must_not_share_memory_with_writable_arguments() {
        let ok = super::check_read_only("k", &[("x", 0..100, true, false), ("y", 100..200, false, true), ("v", 0..50, false, false)]);
        assert!(ok.is_ok());
        let e = super::check_read_only("k", &[("x", 0..100, true, false), ("y", 99..200, false, true)]).unwrap_err().to_string();
        assert!(e.contains("`x`") && e.contains("`y`") && e.contains("share device memory"), "{e}");
        // Empty spans never overlap; two writable arguments are not this check's business.
        assert!(super::check_read_only("k", &[("x", 0..0, true, false), ("y", 0..200, false, true)]).is_ok());
        assert!(super::check_read_only("k", &[("a", 0..100, false, true), ("b", 0..100, false, true)]).is_ok());
    }

    /// An array on the CPU device.
    fn cpu<T: crate::Element + Default>(shape: &[usize]) -> crate::Array<T> {
        let n = shape.iter().product();
        let s = crate::Stream::null(&crate::Device::cpu()).unwrap();
        crate::Array::from_shape_vec_on(shape, &vec![T::default(); n], &s).unwrap()
    }

    #[test]
    fn a_map_is_a_launch_argument_of_its_device_only() {
        let a = cpu::<f32>(&[8, 8]);
        let m = crate::TensorMap::new(&a, [8, 8], crate::Swizzle::None).unwrap();
        let p = super::tensor_map_arg("k", "map", &m, crate::device::CPU_ORDINAL).unwrap();
        assert_eq!(p, m.param());
        let e = super::tensor_map_arg("k", "map", &m, 0).unwrap_err();
        assert!(matches!(e, crate::Error::DeviceMismatch { expected: 0, .. }), "{e:?}");
        assert!(e.to_string().contains("argument `map` of kernel `k`"), "{e}");
    }
}
