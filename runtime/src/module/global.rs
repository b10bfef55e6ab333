//! [`Global`]: a `__device__` or `__constant__` variable of a loaded module, and
//! [`RawModule::get_global`].

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::result;

use super::{resolve_symbol, ModuleHandle, RawModule};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::repr::DeviceRepr;
use crate::stream::Stream;

impl RawModule {
    /// A `__device__` or `__constant__` variable of this module on the current device, as `len`
    /// elements of `T` (its size must be a multiple of `T`'s). `name` is a name expression or the
    /// variable's symbol.
    pub fn get_global<T: DeviceRepr>(&self, name: &str) -> Result<Global<T>> {
        let device = Device::current()?;
        let loaded = self.loaded_on(&device)?;
        let symbol = resolve_symbol(&loaded, name);
        let Some((ptr, bytes)) = loaded.handle.global(symbol)? else {
            return Err(Error::Global {
                name: name.to_string(),
                detail: "the module has no __device__ or __constant__ variable of that name \
                         (a variable in a namespace needs its lowered name: list `&name` in \
                         name_expressions)"
                    .to_string(),
            });
        };
        let size = std::mem::size_of::<T>();
        if size == 0 || bytes % size != 0 {
            return Err(Error::Global {
                name: name.to_string(),
                detail: format!(
                    "it holds {bytes} bytes, not a whole number of {}-byte `{}` elements",
                    size,
                    std::any::type_name::<T>()
                ),
            });
        }
        Ok(Global {
            ptr,
            len: bytes / size,
            handle: loaded.handle.clone(),
            name: name.to_string(),
            _t: PhantomData,
        })
    }
}

/// A `__device__` or `__constant__` variable of a loaded module (from [`RawModule::get_global`]),
/// as `len()` elements of `T`. Copies are ordered on the device's current stream and wait for it.
pub struct Global<T> {
    ptr: u64,
    len: usize,
    handle: Arc<ModuleHandle>,
    name: String,
    _t: PhantomData<T>,
}

impl<T> fmt::Debug for Global<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Global({}: {} x {}, {:#x})",
            self.name,
            self.len,
            std::any::type_name::<T>(),
            self.ptr
        )
    }
}

impl<T: DeviceRepr> Global<T> {
    /// The number of `T` elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The variable's device address (valid while this `Global` or its module is alive).
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The device the variable lives on.
    pub fn device(&self) -> &Device {
        self.handle.device()
    }

    /// Copies `values` into the variable's first `values.len()` elements.
    pub fn write(&self, values: &[T]) -> Result<()> {
        if values.len() > self.len {
            return Err(Error::Global {
                name: self.name.clone(),
                detail: format!("cannot write {} elements into {}", values.len(), self.len),
            });
        }
        let stream = Stream::current_for(self.device())?;
        stream.refuse_if_recording("a copy to a module's variable")?;
        self.device().bind_to_thread()?;
        // SAFETY: the destination is `self.len >= values.len()` elements of `T` inside a module
        // that `self.handle` keeps loaded; the source slice is alive until the stream is
        // synchronized below, before this function returns.
        unsafe { result::memcpy_htod_async(self.ptr, values, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemcpyHtoDAsync"))?;
        stream.synchronize()
    }
}

impl<T: DeviceRepr + Element> Global<T> {
    /// Copies the variable's elements to the host. `T` is an [`Element`]: every byte pattern the
    /// device may have written is a valid `T` (bytes of a `bool` variable other than 0 and 1 read
    /// as `true`), which a plain [`DeviceRepr`] parameter type does not promise.
    pub fn read(&self) -> Result<Vec<T>> {
        let stream = Stream::current_for(self.device())?;
        stream.refuse_if_recording("a copy from a module's variable")?;
        self.device().bind_to_thread()?;
        let size = std::mem::size_of::<T>();
        let mut out: Vec<T> = Vec::with_capacity(self.len);
        let spare = &mut out.spare_capacity_mut()[..self.len];
        // SAFETY: `spare` is `self.len` uninitialised `T`s owned by `out`; as `MaybeUninit<u8>`
        // (no validity requirement) they are exactly `self.len * size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), self.len * size) };
        // SAFETY: the source is `self.len` elements of `T` in a module `self.handle` keeps loaded;
        // the destination is `self.len * size` writable bytes, alive until the synchronize below.
        unsafe { result::memcpy_dtoh_async(bytes, self.ptr, stream.handle()) }
            .map_err(self.device().driver_fn("cuMemcpyDtoHAsync"))?;
        stream.synchronize()?;
        if T::ELEM == crate::elem_type::ElemType::Scalar(cuprum_abi::DType::Bool) {
            for b in bytes.iter_mut() {
                // SAFETY: the copy above completed, so it wrote every one of these bytes.
                let v = unsafe { b.assume_init() };
                b.write((v != 0) as u8);
            }
        }
        // SAFETY: the copy wrote all `self.len` elements; by `Element`'s contract every byte
        // pattern is a valid `T` (bool bytes were normalised to 0 or 1 above).
        unsafe { out.set_len(self.len) };
        Ok(out)
    }
}
