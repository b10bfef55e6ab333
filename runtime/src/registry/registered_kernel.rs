//! [`Kernel`]: one generated kernel (its unit, its kind, its name, its signature) and the
//! instances loaded so far per device; [`KernelEntry`], the program's list of kernels.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, RwLock};

use crate::device::Device;
use crate::error::Result;
use crate::function::KernelFunction;
use crate::raw_kernel::RawKernel;
use crate::cpu::HostEntry;
use crate::launch::signature::Signature;
use crate::sync;
use cuprum_abi::dtype::DType;
use cuprum_abi::{KernelKind, Variant, mangle};

use super::served::{Served, record_served};
use super::unit::{KernelUnit, UnitRef};

/// One kernel as a generated launch function sees it: its unit, its name, its signature (what
/// the erased launches check their operands against), and the instances loaded so far, per
/// device.
pub struct Kernel {
    unit: UnitRef,
    name: &'static str,
    signature: Signature,
    /// Whether the kernel's code stays inside its operands by itself (cuprum's own kernels:
    /// `false` for CUDA C text that indexes raw arguments, which only unsafe launches take).
    checked: bool,
    /// Boxed, only ever pushed: an entry stays where it is for as long as the kernel, however the
    /// vector grows (`last` points at one).
    #[allow(clippy::vec_box)]
    loaded: RwLock<Vec<Box<Loaded>>>,
    /// The entry of `loaded` served last (null before the first): a launch of the same instance,
    /// the common case, finds it with one atomic load and no lock ([`Kernel::function`]).
    last: AtomicPtr<Loaded>,
    /// Held while an instance is loaded, so that threads racing for the same new instance
    /// compile it once (launches of loaded instances never take it).
    load_lock: Mutex<()>,
    /// The kernel compiled for the host, for the CPU device (`None`: CUDA only).
    host: Option<HostEntry>,
}

struct Loaded {
    device: usize,
    instance: Vec<DType>,
    variant: Option<Variant>,
    kernel: RawKernel,
}

impl Loaded {
    fn is(&self, device: usize, instance: &[DType], variant: Option<Variant>) -> bool {
        self.device == device && self.variant == variant && self.instance == instance
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel(#[{}] {} in {})",
            self.kind(),
            self.name,
            self.unit.file()
        )
    }
}

impl Kernel {
    /// Kernel `name` of `unit`, whose entry points take the parameters `signature` describes
    /// (its kind is the signature's). What the macros generate, once per kernel, in a `static`.
    ///
    /// # Safety
    ///
    /// `signature` must describe the parameters of the kernel's entry points in the unit's code
    /// (their number, order, roles and element types for every instance), and the code must
    /// touch memory only through those parameters as their roles allow: per-element operands
    /// at the element the loop gives it, raw operands within their size. The safe erased
    /// launches (`elementwise::launch`, `reduction::launch`) rely on both. The code generator
    /// guarantees them for the kernels it writes.
    pub const unsafe fn new(unit: UnitRef, name: &'static str, signature: Signature) -> Kernel {
        Kernel {
            unit,
            name,
            signature,
            checked: true,
            loaded: RwLock::new(Vec::new()),
            last: AtomicPtr::new(std::ptr::null_mut()),
            load_lock: Mutex::new(()),
            host: None,
        }
    }

    /// [`Kernel::new`] for code cuprum cannot check (CUDA C text that indexes raw arguments):
    /// the safe erased launches refuse it, and only their `unsafe` forms launch it.
    ///
    /// # Safety
    ///
    /// `signature` must describe the parameters of the kernel's entry points, as for
    /// [`Kernel::new`].
    pub const unsafe fn unchecked(
        unit: UnitRef,
        name: &'static str,
        signature: Signature,
    ) -> Kernel {
        Kernel {
            unit,
            name,
            signature,
            checked: false,
            loaded: RwLock::new(Vec::new()),
            last: AtomicPtr::new(std::ptr::null_mut()),
            load_lock: Mutex::new(()),
            host: None,
        }
    }

    /// The kernel with its entry point on the CPU device (`#[elementwise]` writes it: the
    /// kernel's body compiled for the host; docs/cpu.md).
    pub const fn with_host(mut self, entry: HostEntry) -> Kernel {
        self.host = Some(entry);
        self
    }

    /// The kernel's entry point on the CPU device, if it has one.
    pub fn host_entry(&self) -> Option<HostEntry> {
        self.host
    }

    /// The signature the erased launches check operands against.
    pub fn signature(&self) -> Signature {
        self.signature
    }

    /// Whether the kernel's code stays inside its operands by itself (see [`Kernel::unchecked`]).
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// The kernel's name (the Rust function's).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `rawkernel`, `elementwise` or `reduction` (compares with the name: `kind() == "reduction"`).
    pub fn kind(&self) -> KernelKind {
        self.signature.kind()
    }

    /// How the kernel reaches its unit (the file it comes from, without resolving it).
    pub fn unit_ref(&self) -> UnitRef {
        self.unit
    }

    /// The kernel's unit (an error only if the program lacks the kernel file's embedded code).
    pub fn unit(&self) -> Result<&'static KernelUnit> {
        self.unit.resolve()
    }

    /// The unit given to [`Kernel::new`] (kernels made at run time always have one).
    pub fn embedded_unit(&self) -> Option<&'static KernelUnit> {
        match self.unit {
            UnitRef::Embedded(u) => Some(u),
            UnitRef::Shared { .. } => None,
        }
    }

    /// The loaded function of [`Kernel::instance`] on device `ordinal`: what a launch needs, found
    /// without a lock or a reference count when it is the instance served last.
    #[inline]
    pub fn function(
        &self,
        ordinal: usize,
        instance: &[DType],
        variant: Option<Variant>,
    ) -> Result<&KernelFunction> {
        let last = self.last.load(Ordering::Acquire);
        // SAFETY: `last` is null or was stored by `function_slow` from an entry of `self.loaded`:
        // a `Box<Loaded>` that is never removed, moved or changed while `self` lives.
        if let Some(l) = unsafe { last.as_ref() } {
            if l.is(ordinal, instance, variant) {
                return l.kernel.function_at(ordinal);
            }
        }
        self.function_slow(ordinal, instance, variant)
    }

    #[cold]
    fn function_slow(
        &self,
        ordinal: usize,
        instance: &[DType],
        variant: Option<Variant>,
    ) -> Result<&KernelFunction> {
        let find = || -> Option<*const Loaded> {
            let loaded = sync::read(&self.loaded);
            loaded
                .iter()
                .find(|l| l.is(ordinal, instance, variant))
                .map(|b| &**b as *const Loaded)
        };
        let entry = match find() {
            Some(e) => e,
            None => {
                self.instance(ordinal, instance, variant)?;
                find().expect("`instance` loads the entry")
            }
        };
        self.last.store(entry.cast_mut(), Ordering::Release);
        // SAFETY: `entry` points into a `Box<Loaded>` of `self.loaded`, which lives as long as
        // `self` and is never removed, moved or changed.
        unsafe { &*entry }.kernel.function_at(ordinal)
    }

    /// The instance for `instance` (one dtype per generic parameter) and `variant` (the launch
    /// strategy of an elementwise or reduction kernel, one of `kind().variants()`; `None` for a
    /// raw kernel) on device `ordinal`: from this table on every launch but the first.
    #[inline]
    pub fn instance(
        &self,
        ordinal: usize,
        instance: &[DType],
        variant: Option<Variant>,
    ) -> Result<RawKernel> {
        {
            let loaded = sync::read(&self.loaded);
            if let Some(l) = loaded
                .iter()
                .find(|l| l.is(ordinal, instance, variant))
            {
                return Ok(l.kernel.clone());
            }
        }
        self.load(ordinal, instance, variant)
    }

    /// Whether entry point (`instance`, `variant`) is loaded on device `ordinal` (what a
    /// [`prefetch`](super::prefetch) checks first).
    pub(crate) fn is_loaded(&self, ordinal: usize, instance: &[DType], variant: Option<Variant>) -> bool {
        let last = self.last.load(Ordering::Acquire);
        // SAFETY: as in `function`.
        if unsafe { last.as_ref() }.is_some_and(|l| l.is(ordinal, instance, variant)) {
            return true;
        }
        let loaded = sync::read(&self.loaded);
        loaded.iter().any(|l| l.is(ordinal, instance, variant))
    }

    #[cold]
    fn load(
        &self,
        ordinal: usize,
        instance: &[DType],
        variant: Option<Variant>,
    ) -> Result<RawKernel> {
        let _loading = sync::lock(&self.load_lock);
        {
            let loaded = sync::read(&self.loaded);
            if let Some(l) = loaded
                .iter()
                .find(|l| l.is(ordinal, instance, variant))
            {
                return Ok(l.kernel.clone());
            }
        }
        let device = Device::get(ordinal)?;
        if device.is_cpu() {
            return Err(crate::error::Error::kernel_on_cpu(&format!("kernel `{}`", self.name)));
        }
        let symbol = mangle::kernel_symbol(self.kind(), self.name, variant, instance);
        let (kernel, layer) =
            self.unit()?
                .kernel(&device, self.name, instance, variant, &symbol, &|| {
                    let includes = cuprum_abi::headers::includes_for(instance);
                    format!(
                        "{includes}{}",
                        mangle::instantiate_variant_line(self.name, variant, &symbol, instance)
                    )
                })?;
        record_served(Served {
            kernel: self.name,
            symbol: symbol.clone(),
            device: ordinal,
            layer,
        });
        let mut loaded = sync::write(&self.loaded);
        if !loaded
            .iter()
            .any(|l| l.is(ordinal, instance, variant))
        {
            loaded.push(Box::new(Loaded {
                device: ordinal,
                instance: instance.to_vec(),
                variant,
                kernel: kernel.clone(),
            }));
        }
        Ok(kernel)
    }
}

/// A kernel the program carries, listed with `inventory` by the macros.
#[derive(Debug)]
pub struct KernelEntry {
    /// The kernel.
    pub(crate) kernel: &'static Kernel,
}

impl KernelEntry {
    /// The entry of `kernel` (what the macros submit).
    #[doc(hidden)]
    pub const fn new(kernel: &'static Kernel) -> KernelEntry {
        KernelEntry { kernel }
    }

    /// `rawkernel`, `elementwise` or `reduction` (compares with the name: `kind() == "reduction"`).
    pub fn kind(&self) -> KernelKind {
        self.kernel.kind()
    }

    /// The kernel's name (its Rust function's).
    pub fn name(&self) -> &'static str {
        self.kernel.name
    }

    /// The kernel file it was generated from.
    pub fn file(&self) -> &'static str {
        self.kernel.unit.file()
    }

    /// Its unit (see [`Kernel::unit`]).
    pub fn unit(&self) -> Result<&'static KernelUnit> {
        self.kernel.unit()
    }
}

inventory::collect!(KernelEntry);

/// Every kernel generated into this program by cuprum's macros.
pub fn kernels() -> impl Iterator<Item = &'static KernelEntry> {
    inventory::iter::<KernelEntry>.into_iter()
}
