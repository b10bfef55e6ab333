//! Kernel launches: the configuration (grid, block, dynamic shared memory, stream), the kernel
//! arguments, the checks made before a launch, and [`launch`], the one place that calls
//! `cuLaunchKernel`.
//!
//! Arguments follow CuPy's rules ("Kernel arguments" in the seeds): an array (of scalars or of
//! `#[device]` structs) is passed as its device pointer, a scalar by value (Rust's type is the C
//! type: `u32` is `unsigned int`, `f16` is `half`, `Complex<f64>` is `complex<double>`), and a
//! `#[repr(C)]` struct by value once it is marked [`DeviceRepr`]. Nothing checks that the arguments match the kernel's parameters: that is
//! why [`launch`] (and `RawKernel::launch`) are `unsafe`.
//!
//! The hot path allocates nothing: arguments are turned into their parameter values in a tuple on
//! the stack and an array of pointers to them; the function handle and the limits checked before
//! the launch are cached when the kernel is loaded.

use std::ffi::c_void;

use cudarc::driver::sys;
use half::{bf16, f16};
use num_complex::Complex;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::kernel::KernelFunction;
pub use crate::lang::intrinsics::Dim3;
use crate::element::Element;
use crate::stream::Stream;

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32,)> for Dim3 {
    fn from((x,): (u32,)) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<[u32; 1]> for Dim3 {
    fn from([x]: [u32; 1]) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<[u32; 2]> for Dim3 {
    fn from([x, y]: [u32; 2]) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<[u32; 3]> for Dim3 {
    fn from([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

fn dims_text(d: Dim3) -> String {
    format!("({}, {}, {})", d.x, d.y, d.z)
}

/// Grid, block, dynamic shared memory and stream of a launch (CuPy's
/// `kernel(grid, block, args, shared_mem=..., stream=...)`).
///
/// ```
/// # use cuprum_runtime::launch::LaunchConfig;
/// let cfg = LaunchConfig::new(80, 256).shared_mem(4096);
/// let cfg2 = LaunchConfig::new((16, 16), (8, 8, 4));
/// # let _ = (cfg, cfg2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'s> {
    /// Blocks in the grid (each dimension at least 1).
    pub grid: Dim3,
    /// Threads per block (each dimension at least 1).
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes (`extern __shared__`).
    pub shared_mem_bytes: u32,
    /// The stream; `None`: the current stream of the current device.
    pub stream: Option<&'s Stream>,
}

impl<'s> LaunchConfig<'s> {
    /// A launch of `grid` blocks of `block` threads (1 to 3 dimensions each: `n`, `(x, y)`,
    /// `(x, y, z)` or arrays), no dynamic shared memory, on the current stream.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig<'static> {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            stream: None,
        }
    }

    /// A 1-D launch covering `n` threads with blocks of `block` threads.
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig<'static> {
        let block = block.max(1);
        let blocks = n.div_ceil(block as usize).max(1);
        LaunchConfig::new(u32::try_from(blocks).unwrap_or(u32::MAX), block)
    }

    /// Sets the dynamic shared memory per block, in bytes.
    pub fn shared_mem(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }

    /// Launches on `stream` instead of the current stream.
    pub fn stream<'t>(self, stream: &'t Stream) -> LaunchConfig<'t> {
        LaunchConfig {
            grid: self.grid,
            block: self.block,
            shared_mem_bytes: self.shared_mem_bytes,
            stream: Some(stream),
        }
    }
}

/// What a launch is checked against: the device's limits and the kernel's attributes, read when
/// the kernel is loaded on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchLimits {
    /// The kernel's `max_threads_per_block` attribute (at most the device's limit).
    pub max_threads_per_block: u32,
    /// The device's largest block extent per dimension.
    pub max_block_dim: [u32; 3],
    /// The device's largest grid extent per dimension.
    pub max_grid_dim: [u32; 3],
    /// The kernel's `max_dynamic_shared_size_bytes` attribute now.
    pub max_dynamic_shared_bytes: u32,
    /// The device's shared memory per block after opting in.
    pub max_shared_optin: u32,
    /// The kernel's static shared memory (`shared_size_bytes`).
    pub static_shared_bytes: u32,
}

/// Checks a configuration against the limits; the error says which limit and what to change.
pub fn check_config(
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared_mem: u32,
    limits: &LaunchLimits,
) -> Result<()> {
    let fail = |detail: String| {
        Err(Error::InvalidLaunch {
            kernel: kernel.to_string(),
            detail,
        })
    };
    let axes = ["x", "y", "z"];
    let g = [grid.x, grid.y, grid.z];
    let b = [block.x, block.y, block.z];
    if g.contains(&0) {
        return fail(format!(
            "the grid {} has a zero dimension: every dimension must be at least 1",
            dims_text(grid)
        ));
    }
    if b.contains(&0) {
        return fail(format!(
            "the block {} has a zero dimension: every dimension must be at least 1",
            dims_text(block)
        ));
    }
    for i in 0..3 {
        if b[i] > limits.max_block_dim[i] {
            return fail(format!(
                "the block {} is {} threads along {}, but this device allows at most {}",
                dims_text(block),
                b[i],
                axes[i],
                limits.max_block_dim[i]
            ));
        }
    }
    let threads = b.iter().map(|&v| v as u64).product::<u64>();
    if threads > limits.max_threads_per_block as u64 {
        return fail(format!(
            "the block {} has {threads} threads, but this kernel allows at most {} per block \
             (its max_threads_per_block attribute: the device's limit, lowered by register use \
             or __launch_bounds__); use smaller blocks",
            dims_text(block),
            limits.max_threads_per_block
        ));
    }
    for i in 0..3 {
        if g[i] > limits.max_grid_dim[i] {
            return fail(format!(
                "the grid {} is {} blocks along {}, but this device allows at most {}",
                dims_text(grid),
                g[i],
                axes[i],
                limits.max_grid_dim[i]
            ));
        }
    }
    if shared_mem > limits.max_dynamic_shared_bytes {
        return Err(Error::SharedMemory {
            kernel: kernel.to_string(),
            requested: shared_mem,
            limit: limits.max_dynamic_shared_bytes,
            optin: limits.max_shared_optin,
            static_bytes: limits.static_shared_bytes,
        });
    }
    Ok(())
}

/// Plain data passed to a kernel by value: its bytes are copied as they are into the kernel's
/// parameter.
///
/// Implemented for the scalar types of the dtype table (`bool`, integers, `f16`, `bf16`, `f32`,
/// `f64`, `Complex<f32>`, `Complex<f64>`), `usize`/`isize` (as `size_t`/`ptrdiff_t` on 64-bit
/// targets), fixed-size arrays of such types, and [`DevicePtr`]. Implement it for your own
/// `#[repr(C)]` structs to pass them by value (CuPy's custom user types):
///
/// ```
/// # use cuprum_runtime::launch::DeviceRepr;
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Float3 { x: f32, y: f32, z: f32 }
/// // SAFETY: #[repr(C)] with three f32 fields: the layout of CUDA's `float3` parameter.
/// unsafe impl DeviceRepr for Float3 {}
/// ```
///
/// # Safety
///
/// The implementor must be plain data with the same size, alignment and field offsets as the
/// kernel parameter it is passed as (for a struct: `#[repr(C)]`, every field itself
/// `DeviceRepr`, padding where the C struct has it), must hold no host pointers or references,
/// and every value the device may write into such memory must be a valid value of the type.
pub unsafe trait DeviceRepr: Copy + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => { $(
        // SAFETY: a primitive (or `#[repr(C)]` pair of primitives for `Complex`) whose size and
        // alignment equal those of the C type in the seeds' dtype table.
        unsafe impl DeviceRepr for $t {}
    )* };
}

device_repr!(
    bool,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    isize,
    usize,
    f32,
    f64,
    f16,
    bf16,
    Complex<f32>,
    Complex<f64>
);

// SAFETY: an array of plain data has C's array layout (no padding between elements).
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

/// A raw device address passed as a pointer parameter (for memory cuprum does not own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DevicePtr(pub u64);

// SAFETY: `#[repr(transparent)]` over `u64`, the size and alignment of a device pointer.
unsafe impl DeviceRepr for DevicePtr {}

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

/// All arguments of a launch: a tuple of [`KernelArg`]s (up to 24), `()`, or an [`ArgList`].
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

/// A 16-byte aligned slot of parameter storage.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot([u8; 16]);

/// Arguments collected at run time (any number, any mix of types), for launches whose argument
/// list is not known at compile time. Allocates; prefer a tuple on hot paths.
#[derive(Clone, Default)]
pub struct ArgList {
    storage: Vec<Slot>,
    /// (first slot, byte length) of each parameter.
    params: Vec<(usize, usize)>,
}

impl std::fmt::Debug for ArgList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgList")
            .field(
                "sizes",
                &self.params.iter().map(|p| p.1).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ArgList {
    pub fn new() -> ArgList {
        ArgList::default()
    }

    /// Appends one argument.
    pub fn push<A: KernelArg>(&mut self, arg: A) -> &mut Self {
        let value = arg.param();
        let size = std::mem::size_of::<A::Param>();
        let first = self.storage.len();
        self.storage
            .resize(first + size.div_ceil(16).max(1), Slot([0; 16]));
        // SAFETY: the destination slots start at a 16-byte boundary (at least the alignment of
        // any parameter type up to 16) and hold at least `size` bytes, reserved just above; the
        // source is a live `A::Param` of exactly `size` bytes; the regions do not overlap.
        // `DeviceRepr` types are plain data, so copying their bytes is a valid copy.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &value as *const A::Param as *const u8,
                self.storage.as_mut_ptr().add(first) as *mut u8,
                size,
            );
        }
        self.params.push((first, size));
        self
    }

    /// The number of arguments.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }
}

impl KernelArgs for ArgList {
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        let base = self.storage.as_ptr();
        let mut ptrs: Vec<*mut c_void> = self
            .params
            .iter()
            // `wrapping_add` stays inside `storage` (each `first` is a valid slot index).
            .map(|&(first, _)| base.wrapping_add(first) as *mut c_void)
            .collect();
        f(&mut ptrs)
    }
}

impl<A: KernelArgs + ?Sized> KernelArgs for &A {
    #[inline(always)]
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
        (**self).with_params(f)
    }
}

/// Launches `func` with `cfg` and `args`, after checking the configuration against the device's
/// and the kernel's limits (a bad configuration is an error and nothing is launched). Without a
/// stream in `cfg`, the current stream of `func`'s device is used.
///
/// # Safety
///
/// `args` must match the kernel's parameter list in number, order and type (an array for a
/// pointer parameter of its element type, a scalar of the parameter's exact C type, a
/// [`DeviceRepr`] struct of the parameter's layout), and the kernel must only access memory that
/// stays valid until it finishes (arrays it indexes must be large enough and outlive the work
/// queued on the stream). Nothing here can check either: the kernel is arbitrary device code.
#[inline]
pub unsafe fn launch<A: KernelArgs>(
    func: &KernelFunction,
    cfg: &LaunchConfig<'_>,
    args: A,
) -> Result<()> {
    let current;
    let stream = match cfg.stream {
        Some(s) => s,
        None => {
            current = Stream::current_for(func.device())?;
            &current
        }
    };
    if stream.device() != func.device() {
        return Err(Error::DeviceMismatch {
            context: format!("launching kernel `{}`", func.name()),
            expected: func.device().ordinal(),
            found: stream.device().ordinal(),
        });
    }
    check_config(
        func.name(),
        cfg.grid,
        cfg.block,
        cfg.shared_mem_bytes,
        &func.limits(),
    )?;
    func.device().bind_to_thread()?;
    let raw = func.raw();
    let handle = stream.handle();
    let result = args.with_params(|params| {
        // SAFETY: `raw` is a function of a module that `func` keeps loaded, in the context of
        // `func`'s device, which is bound to this thread (above); `handle` is a live stream of
        // that device (checked above); the geometry was checked against the device's and the
        // kernel's limits; `params` holds one pointer per argument to a value that lives until
        // `with_params` returns (the driver copies the values during the call). That the
        // arguments match the kernel's parameters, and that the kernel stays in bounds, is the
        // caller's contract (this function's `# Safety`).
        unsafe {
            sys::cuLaunchKernel(
                raw,
                cfg.grid.x,
                cfg.grid.y,
                cfg.grid.z,
                cfg.block.x,
                cfg.block.y,
                cfg.block.z,
                cfg.shared_mem_bytes,
                handle,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    });
    result
        .result()
        .map_err(|e| Error::driver("cuLaunchKernel", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: LaunchLimits = LaunchLimits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [2147483647, 65535, 65535],
        max_dynamic_shared_bytes: 48 * 1024,
        max_shared_optin: 227 * 1024,
        static_shared_bytes: 0,
    };

    fn check(grid: impl Into<Dim3>, block: impl Into<Dim3>, smem: u32) -> Result<()> {
        check_config("k", grid.into(), block.into(), smem, &LIMITS)
    }

    #[test]
    fn dims_from_tuples() {
        assert_eq!(Dim3::from(5), Dim3 { x: 5, y: 1, z: 1 });
        assert_eq!(Dim3::from((5, 2)), Dim3 { x: 5, y: 2, z: 1 });
        assert_eq!(Dim3::from([5, 2, 3]), Dim3 { x: 5, y: 2, z: 3 });
        let c = LaunchConfig::for_elements(1000, 256);
        assert_eq!((c.grid.x, c.block.x), (4, 256));
        assert_eq!(LaunchConfig::for_elements(0, 256).grid.x, 1);
    }

    #[test]
    fn launch_checks() {
        assert!(check(100, 256, 0).is_ok());
        assert!(check((1, 65535), (32, 32), 48 * 1024).is_ok());
        let msg = |r: Result<()>| r.unwrap_err().to_string();
        assert!(msg(check(0, 32, 0)).contains("zero dimension"));
        assert!(msg(check(1, (32, 0), 0)).contains("zero dimension"));
        assert!(msg(check(1, 2048, 0)).contains("at most 1024"));
        assert!(msg(check(1, (1, 1, 65), 0)).contains("along z"));
        let m = msg(check(1, (32, 32, 2), 0));
        assert!(
            m.contains("2048 threads") && m.contains("max_threads_per_block"),
            "{m}"
        );
        assert!(msg(check((1, 65536), 1, 0)).contains("along y"));
        let m = msg(check(1, 32, 48 * 1024 + 1));
        assert!(
            m.contains("max_dynamic_shared_size_bytes")
                && m.contains("set_max_dynamic_shared_size_bytes"),
            "{m}"
        );
    }

    #[test]
    fn tuple_params_point_at_values() {
        #[derive(Clone, Copy)]
        #[repr(C)]
        struct S {
            a: f32,
            b: u8,
        }
        // SAFETY: #[repr(C)] plain data (test only).
        unsafe impl DeviceRepr for S {}
        let args = (7u32, 2.5f64, S { a: 1.5, b: 9 }, Complex::new(1.0f32, -1.0));
        args.with_params(|p| {
            assert_eq!(p.len(), 4);
            // SAFETY: each pointer points at the parameter value of the matching type.
            unsafe {
                assert_eq!(*(p[0] as *const u32), 7);
                assert_eq!(*(p[1] as *const f64), 2.5);
                assert_eq!((*(p[2] as *const S)).b, 9);
                assert_eq!(*(p[3] as *const Complex<f32>), Complex::new(1.0, -1.0));
            }
        });
        let mut list = ArgList::new();
        list.push(7u32)
            .push(2.5f64)
            .push(S { a: 1.5, b: 9 })
            .push([1u16, 2, 3]);
        assert_eq!(list.len(), 4);
        list.with_params(|p| {
            // SAFETY: as above.
            unsafe {
                assert_eq!(*(p[0] as *const u32), 7);
                assert_eq!(*(p[1] as *const f64), 2.5);
                assert_eq!((*(p[2] as *const S)).a, 1.5);
                assert_eq!(*(p[3] as *const [u16; 3]), [1, 2, 3]);
                assert_eq!(p[0] as usize % 16, 0);
            }
        });
    }
}

/// A `&[T]` / `&mut [T]` parameter of a kernel generated by cuprum's compiler: the
/// `cuprum::Slice<T>` of `abi/include/cuprum/types.h` (device pointer, then length), passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceArg {
    pub ptr: u64,
    pub len: u64,
}

// SAFETY: `#[repr(C)]` of two `u64`, exactly the layout of `cuprum::Slice<T>`.
unsafe impl DeviceRepr for SliceArg {}

impl SliceArg {
    /// The slice of a whole array (its element at the offset, `len()` elements).
    pub fn of<T: Element>(a: &Array<T>) -> SliceArg {
        SliceArg { ptr: a.device_ptr(), len: a.len() as u64 }
    }
}

/// A `View<T, N>` / `ViewMut<T, N>` parameter of a kernel generated by cuprum's compiler: the
/// `cuprum::View<T, N>` of `abi/include/cuprum/types.h` (device pointer, shape, strides in elements),
/// passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewArg<const N: usize> {
    pub ptr: u64,
    pub shape: [i64; N],
    pub strides: [i64; N],
}

// SAFETY: `#[repr(C)]` of a `u64` and two `[i64; N]`: the layout of `cuprum::View<T, N>` (a
// pointer, then `i64 shape[N]`, then `i64 strides[N]`, no padding: every field is 8 bytes).
unsafe impl<const N: usize> DeviceRepr for ViewArg<N> {}

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
