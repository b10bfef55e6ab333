//! Typed kernel arguments: [`KernelArg`] (one argument and its parameter value) and
//! [`KernelArgs`] (a whole argument list: tuples, `()`, an [`ArgList`](super::ArgList)).
//!
//! Arguments follow CuPy's rules ("Kernel arguments" in the seeds): an array (of scalars or of
//! `#[device]` structs) is passed as its device pointer, a scalar by value (Rust's type is the C
//! type: `u32` is `unsigned int`, `f16` is `half`, `Complex<f64>` is `complex<double>`), and a
//! `#[repr(C)]` struct by value once it is marked [`DeviceRepr`]. The values live in a tuple on the
//! stack, with an array of pointers to them: the hot path allocates nothing.

use std::ffi::c_void;

use crate::array::Array;
use crate::element::Element;
use crate::repr::{DevicePtr, DeviceRepr, SliceArg, ViewArg};

/// One kernel argument: what it passes (its parameter value).
pub trait KernelArg {
    /// The value the kernel's parameter receives.
    type Param: DeviceRepr;
    /// The parameter value.
    fn param(&self) -> Self::Param;
}

impl<T: DeviceRepr> KernelArg for T {
    type Param = T;
    #[inline(always)]
    fn param(&self) -> T {
        *self
    }
}

impl<T: Element> KernelArg for &Array<T> {
    type Param = DevicePtr;
    #[inline(always)]
    fn param(&self) -> DevicePtr {
        DevicePtr(self.device_ptr())
    }
}

impl<T: Element> KernelArg for &mut Array<T> {
    type Param = DevicePtr;
    #[inline(always)]
    fn param(&self) -> DevicePtr {
        DevicePtr(self.device_ptr())
    }
}

/// All arguments of a launch: a tuple of [`KernelArg`]s (up to 24), `()`, or an [`ArgList`](super::ArgList).
pub trait KernelArgs {
    /// Calls `f` with one pointer per parameter, each to the parameter's value; the values live
    /// until `f` returns.
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R;
}

impl KernelArgs for () {
    #[inline(always)]
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        f(&mut [])
    }
}

macro_rules! tuple_args {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: KernelArg),+> KernelArgs for ($($name,)+) {
            #[inline(always)]
            fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
                let values = ($(self.$idx.param(),)+);
                let mut ptrs = [$(&values.$idx as *const _ as *mut c_void),+];
                f(&mut ptrs)
            }
        }
    };
}

tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18, T 19);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18, T 19, U 20);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18, T 19, U 20, V 21);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18, T 19, U 20, V 21, W 22);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R2 17, S 18, T 19, U 20, V 21, W 22, X 23);

impl<A: KernelArgs + ?Sized> KernelArgs for &A {
    #[inline(always)]
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        (**self).with_params(f)
    }
}

impl SliceArg {
    /// The slice of a whole array (its element at the offset, `len()` elements).
    pub fn of<T: Element>(a: &Array<T>) -> SliceArg {
        SliceArg { ptr: a.device_ptr(), len: a.len() as u64 }
    }
}

impl<const N: usize> ViewArg<N> {
    /// The view of an array with exactly `N` dimensions; `None` for another number.
    pub fn of<T: Element>(a: &Array<T>) -> Option<ViewArg<N>> {
        if a.ndim() != N {
            return None;
        }
        let mut v = ViewArg { ptr: a.device_ptr(), shape: [0; N], strides: [0; N] };
        for k in 0..N {
            v.shape[k] = a.shape()[k] as i64;
            v.strides[k] = a.strides()[k] as i64;
        }
        Some(v)
    }
}
