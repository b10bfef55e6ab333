//! The unit table: each kernel file's translated unit as the program carries it ([`KernelUnit`]),
//! how a kernel reaches its unit ([`UnitRef`]), and the process-wide table keyed by unit id
//! ([`UnitEntry`]; docs/architecture.md, The unit table).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::DType;
use crate::sync;
use cuprum_abi::Variant;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw_kernel::RawKernel;
use crate::module::RawModule;
use crate::stats::{self, Layer};

use super::build_info::BuildInfo;

/// One generated translation unit, as a program carries it.
pub struct KernelUnit {
    /// The unit id (`mangle::unit_id` of the source); empty for units generated at run time,
    /// which are not in the unit table.
    id: &'static str,
    file: &'static str,
    source: Cow<'static, str>,
    fast_math: bool,
    fatbin: Option<&'static [u8]>,
    targets: &'static [&'static str],
    precompiled: &'static [&'static str],
    /// The build record (`OUT_DIR/cuprum/<id>.build`, see [`BuildInfo`]); empty when
    /// the build made none.
    build: &'static str,
    /// Each kernel's piece of `fatbin`: `(kernel, byte offset, byte length)` (`cuprum_abi::parts`);
    /// empty: the fat binary is loaded whole.
    parts: &'static [(&'static str, usize, usize)],
    /// NVRTC options beyond fast-math (`ElementwiseKernel`'s `options`).
    extra_options: Vec<String>,
    /// The unit's audit record (`cuprum_abi::record`), as the macros embed it next to the unit:
    /// referenced from here so that the linker keeps it exactly when it keeps the unit, for
    /// `cuprum audit EXECUTABLE`; empty when there is none.
    record: &'static [u8],
    state: OnceLock<UnitState>,
}

impl std::fmt::Debug for KernelUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelUnit")
            .field("id", &self.id)
            .field("file", &self.file)
            .field("source_bytes", &self.source.len())
            .field("fatbin_bytes", &self.fatbin.map(<[u8]>::len))
            .field("targets", &self.targets)
            .finish()
    }
}

#[derive(Default)]
struct UnitState {
    /// The unit's source compiled as is (the precompiled instances), for devices the fat binary
    /// does not serve.
    source_module: OnceLock<RawModule>,
    /// The fat binary's parts as modules, by part (`WHOLE`: a fat binary without a parts
    /// listing), made on first use: a part is one kernel's code, so a kernel's first call loads
    /// that kernel, not the whole file. One cell per part, so that two threads load two parts
    /// at once (a prefetch, `registry::prefetch`); the map's lock is held only to find the cell.
    fatbin_modules: Mutex<HashMap<usize, Arc<PartCell>>>,
    /// Instances that are not precompiled: symbol -> their own module.
    extra: Mutex<HashMap<String, RawModule>>,
    /// The contexts that decompress the parts (with the unit's dictionary): one is taken for a
    /// decompression and put back after, so two threads decompress at once; two are made ahead
    /// of the first calls (`prepare_units`), another when more are needed at once.
    unpack: Mutex<Vec<zstd::bulk::Decompressor<'static>>>,
}

/// One part's module (`None`: the part cannot be read) and, per device, whether it loads there.
#[derive(Default)]
struct PartCell {
    module: OnceLock<Option<RawModule>>,
    works: Mutex<HashMap<usize, bool>>,
}

impl KernelUnit {
    /// A unit embedded in the program (what the macros generate, once per kernel file). `build`
    /// is the build crate's record of the unit, verbatim (empty when there is none).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        id: &'static str,
        file: &'static str,
        source: &'static str,
        fast_math: bool,
        fatbin: Option<&'static [u8]>,
        targets: &'static [&'static str],
        precompiled: &'static [&'static str],
        build: &'static str,
        parts: &'static [(&'static str, usize, usize)],
    ) -> KernelUnit {
        KernelUnit {
            id,
            file,
            source: Cow::Borrowed(source),
            fast_math,
            fatbin,
            targets,
            precompiled,
            build,
            parts,
            extra_options: Vec::new(),
            record: &[],
            state: OnceLock::new(),
        }
    }

    /// The same unit with its audit record (`cuprum_abi::record::encode`'s bytes), which
    /// `cuprum audit` finds in the executable.
    #[doc(hidden)]
    pub const fn with_record(mut self, record: &'static [u8]) -> KernelUnit {
        self.record = record;
        self
    }

    /// A unit generated at run time (`ElementwiseKernel`, `ReductionKernel`): no fat binary, every
    /// instance through the disk cache and NVRTC.
    #[doc(hidden)]
    pub fn from_source(name: &'static str, source: String, fast_math: bool) -> KernelUnit {
        KernelUnit {
            id: "",
            file: name,
            source: Cow::Owned(source),
            fast_math,
            fatbin: None,
            targets: &[],
            precompiled: &[],
            build: "",
            parts: &[],
            extra_options: Vec::new(),
            record: &[],
            state: OnceLock::new(),
        }
    }

    /// The same unit compiled with these NVRTC options as well (a unit generated at run time).
    pub(crate) fn with_options(mut self, options: Vec<String>) -> KernelUnit {
        self.extra_options = options;
        self
    }

    /// The unit id: a hash of its CUDA C (empty for a unit generated at run time).
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The source file the unit was generated from.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The unit's CUDA C.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The embedded fat binary, when the build made one.
    pub fn fatbin(&self) -> Option<&'static [u8]> {
        self.fatbin
    }

    /// The targets of the fat binary (`sm_90`, `compute_90`).
    pub fn targets(&self) -> &'static [&'static str] {
        self.targets
    }

    /// Each kernel's piece of the fat binary: `(kernel, byte offset, byte length)`; a first entry
    /// named [`cuprum_abi::parts::DICTIONARY`] is the zstd dictionary of compressed pieces.
    pub fn parts(&self) -> &'static [(&'static str, usize, usize)] {
        self.parts
    }

    /// The zstd dictionary the parts were compressed with; empty when there is none.
    pub fn dictionary(&self) -> &'static [u8] {
        let Some(fatbin) = self.fatbin else {
            return &[];
        };
        self.parts
            .iter()
            .find(|p| p.0 == cuprum_abi::parts::DICTIONARY)
            .and_then(|&(_, offset, len)| fatbin.get(offset..offset.checked_add(len)?))
            .unwrap_or(&[])
    }

    /// The symbols compiled into the unit's source (and its fat binary).
    pub fn precompiled(&self) -> &'static [&'static str] {
        self.precompiled
    }

    /// The build crate's record of the unit as embedded (`OUT_DIR/cuprum/<id>.build`); empty when
    /// the build made none (no `cuprum-build`, or a unit generated at run time).
    pub fn build_record(&self) -> &'static str {
        self.build
    }

    /// The build record, parsed: how the fat binary was made and what it cost. `None` without a
    /// record or when it cannot be read (another format version).
    pub fn build_info(&self) -> Option<BuildInfo> {
        BuildInfo::parse(self.build)
    }

    /// The unit's audit record as embedded (`cuprum_abi::record`); empty when there is none (a
    /// unit generated at run time, or one made without the macros).
    pub fn record(&self) -> &'static [u8] {
        self.record
    }

    fn state(&self) -> &UnitState {
        self.state.get_or_init(UnitState::default)
    }

    fn options(&self) -> Vec<String> {
        let mut o = self.extra_options.clone();
        o.extend(
            cuprum_abi::unit_options(&self.source, self.fast_math)
                .iter()
                .map(|s| s.to_string()),
        );
        o
    }

    /// The kernel `symbol` for `device`, and the layer that served it. `instantiate` is the line
    /// that defines the instance, appended to the source when the symbol is not precompiled.
    pub(crate) fn kernel(
        &self,
        device: &Device,
        kernel: &str,
        instance: &[DType],
        variant: Option<Variant>,
        symbol: &str,
        instantiate: &dyn Fn() -> String,
    ) -> Result<(RawKernel, Layer)> {
        let state = self.state();
        if self.defines(symbol) {
            if let Some(module) = self.fatbin_module(device, kernel, instance, variant) {
                let k = RawKernel::from_module(&module, symbol);
                k.function_for(device)?;
                stats::record_hit(Layer::Aot);
                return Ok((k, Layer::Aot));
            }
            let module = state
                .source_module
                .get_or_init(|| RawModule::new(self.source.to_string()).options(self.options()));
            let k = RawKernel::from_module(module, symbol);
            k.function_for(device)?;
            return Ok((k, module.served_by(device).unwrap_or(Layer::Loaded)));
        }
        let module = {
            let mut extra = sync::lock(&state.extra);
            extra
                .entry(symbol.to_string())
                .or_insert_with(|| {
                    // The unit's definitions without its own instantiation lines: the module
                    // holds this one instance, not every precompiled one again (a file of many
                    // kernels would otherwise recompile all of them for each new instance).
                    RawModule::new(self.instance_source(&instantiate())).options(self.options())
                })
                .clone()
        };
        // Compiled outside the map's lock: other instances stay launchable meanwhile.
        let k = RawKernel::from_module(&module, symbol);
        k.function_for(device)?;
        Ok((k, module.served_by(device).unwrap_or(Layer::Loaded)))
    }

    /// Whether the unit's source already instantiates `symbol` (the listed precompiled symbols,
    /// or, for a unit generated at run time, an instantiation line `MACRO(symbol, ...)` in it).
    fn defines(&self, symbol: &str) -> bool {
        self.precompiled.contains(&symbol)
            || self.source.contains(&format!("({symbol},"))
            || self.source.contains(&format!("({symbol})"))
    }

    /// The source NVRTC compiles for an instance that is not precompiled: the unit's definitions
    /// (without its own instantiation lines) and `instantiate`, the instance's line.
    #[doc(hidden)]
    pub fn instance_source(&self, instantiate: &str) -> String {
        format!(
            "{}\n{instantiate}\n",
            cuprum_abi::parts::definitions(&self.source)
        )
    }

    /// The piece of the fat binary holding entry point (`instance`, `variant`) of `kernel`
    /// (`cuprum_abi::parts`: the first of its candidate parts that the listing has; the whole fat
    /// binary when the unit has no listing), as a module, when it has code for `device`. A part
    /// listed by target ("Targets" there) loads the piece the device runs: its machine code, else
    /// PTX; one that is not, or whose code does not load (checked once per piece and device),
    /// falls back to source.
    fn fatbin_module(
        &self,
        device: &Device,
        kernel: &str,
        instance: &[DType],
        variant: Option<Variant>,
    ) -> Option<RawModule> {
        const WHOLE: usize = usize::MAX;
        let fatbin = self.fatbin?;
        if self.parts.is_empty() {
            return self.part_module(WHOLE, fatbin, device, kernel);
        }
        for name in cuprum_abi::parts::candidates(kernel, instance, variant) {
            let name = name.as_str();
            let pieces: Vec<(usize, &str)> = self
                .parts
                .iter()
                .enumerate()
                .filter_map(|(k, p)| match cuprum_abi::parts::piece_of(p.0) {
                    Some((part, target)) if part == name => Some((k, target)),
                    _ => None,
                })
                .collect();
            let candidates: Vec<usize> = if pieces.is_empty() {
                self.parts
                    .iter()
                    .position(|p| p.0 == name)
                    .into_iter()
                    .collect()
            } else {
                cuprum_abi::parts::pieces_for(
                    pieces.iter().map(|p| p.1),
                    device.compute_capability(),
                )
                .into_iter()
                .map(|i| pieces[i].0)
                .collect()
            };
            if pieces.is_empty() && candidates.is_empty() {
                continue;
            }
            if candidates.is_empty() {
                let (major, minor) = device.compute_capability();
                log::info!(
                    target: "cuprum::jit",
                    "the fat binary of {} has no code for device {} (sm_{major}{minor}) in part `{name}` (targets {:?}); compiling from source",
                    self.file,
                    device.ordinal(),
                    self.targets
                );
            }
            return candidates.into_iter().find_map(|k| {
                let (_, offset, len) = self.parts[k];
                let bytes = fatbin.get(offset..offset.checked_add(len)?)?;
                self.part_module(k, bytes, device, kernel)
            });
        }
        None
    }

    /// The module of part (or piece) `part` of the fat binary, `bytes`, made at its first use,
    /// when it loads on `device` (checked once per part and device).
    fn part_module(
        &self,
        part: usize,
        bytes: &[u8],
        device: &Device,
        kernel: &str,
    ) -> Option<RawModule> {
        let state = self.state();
        let cell = sync::lock(&state.fatbin_modules)
            .entry(part)
            .or_default()
            .clone();
        let module = cell
            .module
            .get_or_init(|| {
                let mut unpack = self.take_unpack();
                let image = super::part::fatbin_with(bytes, &mut unpack, self.dictionary());
                if let Some(context) = unpack {
                    sync::lock(&state.unpack).push(context);
                }
                match image {
                    // Checked when it is loaded (below), before the driver sees it.
                    Ok(image) => Some(RawModule::from_image(image.into_owned())),
                    Err(e) => {
                        log::warn!(
                            target: "cuprum::jit",
                            "the fat binary of {} (kernel `{kernel}`) cannot be read: {e}; compiling from source",
                            self.file
                        );
                        None
                    }
                }
            })
            .clone()?;
        let mut works = sync::lock(&cell.works);
        let works = *works.entry(device.ordinal()).or_insert_with(|| match module.compile_for(device) {
            Ok(()) => true,
            Err(e) => {
                log::warn!(
                    target: "cuprum::jit",
                    "the fat binary of {} (kernel `{kernel}`, targets {:?}) does not load on device {} (sm_{}{}): {e}; compiling from source",
                    self.file,
                    self.targets,
                    device.ordinal(),
                    device.compute_capability().0,
                    device.compute_capability().1
                );
                false
            }
        });
        works.then_some(module)
    }

    /// A decompression context of the unit's pool (`None`: make one), to put back after use.
    fn take_unpack(&self) -> Option<zstd::bulk::Decompressor<'static>> {
        sync::lock(&self.state().unpack).pop()
    }
}

impl KernelUnit {
    /// Makes the contexts that decompress the unit's parts, digesting its zstd dictionary when it
    /// has one: two, one for a caller and one for the loader (`registry::prefetch`), so that
    /// neither first call makes one (digesting a dictionary is 0.1 ms on the H100 machine's host).
    fn prepare(&self) {
        let compressed = self.fatbin.is_some_and(|f| {
            self.parts.iter().any(|&(name, offset, _)| {
                name != cuprum_abi::parts::DICTIONARY
                    && f.get(offset..).is_some_and(|p| p.starts_with(&cuprum_abi::fatbin::ZSTD_MAGIC))
            })
        });
        if !compressed {
            return;
        }
        let dictionary = self.dictionary();
        for _ in 0..2 {
            let mut unpack = None;
            // A dictionary that zstd refuses is reported by the first part that needs it.
            if super::part::prepared(&mut unpack, dictionary).is_err() {
                return;
            }
            if let Some(context) = unpack {
                sync::lock(&self.state().unpack).push(context);
            }
        }
    }
}

/// Every embedded unit's decompression contexts, made ahead of the first calls
/// (`device::WarmUp`: on another thread while the first context is created).
fn prepare_units() {
    for unit in units() {
        unit.prepare();
    }
    super::part::warm_decompressor();
}

inventory::submit!(crate::device::WarmUp(prepare_units));

/// How a kernel reaches its unit.
#[derive(Clone, Copy, Debug)]
pub enum UnitRef {
    /// The unit is embedded next to this kernel (the first kernel of its file, or a unit made at
    /// run time).
    Embedded(&'static KernelUnit),
    /// Another kernel of the same file embeds the unit; it is found in the unit table by id.
    Shared {
        /// The unit's id.
        id: &'static str,
        /// The kernel file, for messages.
        file: &'static str,
    },
}

impl UnitRef {
    /// The kernel file the unit was generated from.
    pub fn file(&self) -> &'static str {
        match self {
            UnitRef::Embedded(u) => u.file,
            UnitRef::Shared { file, .. } => file,
        }
    }

    /// The unit: for an embedded one, the table's unit of the same id when there is one (two
    /// crates that embed the same file share one unit, so one module per device).
    pub fn resolve(&self) -> Result<&'static KernelUnit> {
        match *self {
            UnitRef::Embedded(u) => Ok(if u.id.is_empty() { u } else { unit_by_id(u.id).unwrap_or(u) }),
            UnitRef::Shared { id, file } => unit_by_id(id).ok_or_else(|| Error::Unsupported {
                what: format!(
                    "the kernels of {file} (unit {id}) are not in this program: the file's code is embedded with \
                     its first kernel without a `#[cfg]`, which is missing from this build; rebuild the crate \
                     (`cargo clean -p <crate>`) and report this to cuprum if it persists"
                ),
            }),
        }
    }
}

/// One entry of the process-wide unit table: a unit the program embeds (submitted by the macros,
/// once per kernel file).
#[derive(Debug)]
pub struct UnitEntry(&'static KernelUnit);

impl UnitEntry {
    /// The entry of `unit`.
    ///
    /// # Safety
    ///
    /// The unit's fat binary and parts must have been compiled from its source (what
    /// `cuprum-build` makes and the macros embed): the kernels that find the unit by its id run
    /// that code under the signatures the code generator wrote for its source.
    pub const unsafe fn new(unit: &'static KernelUnit) -> UnitEntry {
        UnitEntry(unit)
    }
}

inventory::collect!(UnitEntry);

/// The unit table: every embedded unit by id (the first one listed wins when two crates embed the
/// same file).
fn unit_table() -> &'static HashMap<&'static str, &'static KernelUnit> {
    static TABLE: OnceLock<HashMap<&'static str, &'static KernelUnit>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        for entry in inventory::iter::<UnitEntry> {
            table.entry(entry.0.id).or_insert(entry.0);
        }
        table
    })
}

/// The embedded unit with this id.
pub fn unit_by_id(id: &str) -> Option<&'static KernelUnit> {
    unit_table().get(id).copied()
}

/// Every unit embedded in this program (one per kernel file), sorted by file.
pub fn units() -> Vec<&'static KernelUnit> {
    let mut all: Vec<&'static KernelUnit> = unit_table().values().copied().collect();
    all.sort_by_key(|u| (u.file, u.id));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_knows_which_symbols_its_source_instantiates() {
        let src = "#define CUPRUM_INSTANTIATE_k(NAME, T) ...\nCUPRUM_INSTANTIATE_k(cuprum_rawkernel_k__f32, f32)\nCUPRUM_INSTANTIATE_j(cuprum_rawkernel_j)\n";
        let unit = KernelUnit::from_source("t", src.to_string(), false);
        assert!(unit.defines("cuprum_rawkernel_k__f32"));
        assert!(unit.defines("cuprum_rawkernel_j"));
        assert!(!unit.defines("cuprum_rawkernel_k__f64"));
        assert!(!unit.defines("cuprum_rawkernel_k__f3"));
        let defs = cuprum_abi::parts::definitions(src);
        assert!(
            defs.contains("#define CUPRUM_INSTANTIATE_k(NAME, T)")
                && !defs.contains("(cuprum_rawkernel_k__f32")
        );
        static LISTED: KernelUnit = KernelUnit::new(
            "",
            "t",
            "",
            false,
            None,
            &[],
            &["cuprum_rawkernel_x"],
            "",
            &[],
        );
        assert!(LISTED.defines("cuprum_rawkernel_x"));
    }
}
