//! The translation unit a macro-expanded kernel carries: the CUDA C of its whole file (the same
//! text `cuprum emit` prints and the build crate compiles), and the build crate's fat binary of
//! that text when it exists.
//!
//! A program embeds each unit once: the file's *owner*, its first top-level kernel without a
//! `#[cfg]`/`#[cfg_attr]` attribute (so it is compiled whenever the file is), embeds the unit and
//! lists it in the runtime's unit table; the file's other kernels refer to it by id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cuprum_abi::mangle;

/// What the generated statics embed.
#[derive(Debug, Clone)]
pub struct UnitInfo {
    /// The kernel file, for messages.
    pub file: String,
    /// The unit's CUDA C.
    pub source: String,
    /// Compile with `--use_fast_math` (a kernel of the unit asked for it).
    pub fast_math: bool,
    /// `OUT_DIR/cuprum/<id>.fatbin`, when the build crate made it.
    pub fatbin: Option<PathBuf>,
    /// The fat binary's targets (`sm_90`, `compute_90`).
    pub targets: Vec<String>,
    /// The build crate's record of the unit, `OUT_DIR/cuprum/<id>.build` (what nvcc did and what it
    /// cost; the format is `cuprum_build::build_info_format`'s), verbatim; empty when there is none.
    pub build: String,
    /// Every kernel symbol defined by `source`.
    pub precompiled: Vec<String>,
    /// Each kernel's piece of the fat binary (`cuprum_abi::parts`).
    pub parts: Vec<cuprum_abi::parts::Part>,
    /// Every kernel of the unit with its kind and precompiled symbols (for the audit record,
    /// `cuprum_abi::record`).
    pub kernels: Vec<cuprum_abi::record::KernelRecord>,
    /// The kernels of the unit that call `grid_sync()`, directly or through device functions
    /// (`KernelInfo::cooperative`): their launches are cooperative.
    pub cooperative: Vec<String>,
    /// The kernel that embeds the unit for the whole file (`None`: the unit is the item alone, or
    /// no kernel of the file can own it; then every kernel embeds it).
    pub owner: Option<String>,
}

impl UnitInfo {
    /// The unit id ([`mangle::unit_id`] of the source).
    pub fn id(&self) -> String {
        mangle::unit_id(&self.source)
    }

    /// The unit's audit record (`cuprum_abi::record`), embedded next to the unit so that
    /// `cuprum audit` can list it from the executable's bytes: the fat binary's size is that of
    /// the file `include_bytes!` embeds.
    pub fn record(&self) -> Vec<u8> {
        cuprum_abi::record::encode(&cuprum_abi::record::UnitRecord {
            id: self.id(),
            file: self.file.clone(),
            targets: self.targets.clone(),
            fatbin_bytes: self.fatbin.as_deref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len()),
            build: self.build.clone(),
            kernels: self.kernels.clone(),
        })
    }

    /// Whether the kernel `name` embeds the unit (else it refers to the owner's by id).
    pub fn embeds(&self, name: &str) -> bool {
        self.owner.as_deref().is_none_or(|o| o == name)
    }
}

/// The unit of the file that holds `f`: translated whole when the file can be read and
/// translates cleanly (other items' errors are reported by their own attributes), else `f`
/// alone (then calls to `#[device]` functions of the file fail at the first launch with NVRTC's
/// message). `text` is the file's text, read once by the caller.
pub fn unit_for(cx: &super::Context, text: Option<&str>, item_alone: impl FnOnce() -> String) -> UnitInfo {
    if let (Some(path), Some(text)) = (&cx.file, text) {
        if let Some(unit) = file_unit(path, text) {
            let mut info = (*unit).clone();
            attach_fatbin(&mut info, cx.out_dir.as_deref());
            return info;
        }
    }
    let file = cx.file.as_deref().map(display_path).unwrap_or_else(|| "<macro input>".into());
    let mut info = match crate::compile_source(&item_alone()) {
        Ok(c) => info_of(file, c.unit),
        Err(_) => UnitInfo { file, source: String::new(), fast_math: false, fatbin: None, targets: Vec::new(), build: String::new(), precompiled: Vec::new(), parts: Vec::new(), kernels: Vec::new(), cooperative: Vec::new(), owner: None },
    };
    attach_fatbin(&mut info, cx.out_dir.as_deref());
    info
}

fn info_of(file: String, unit: crate::back::cuda::Unit) -> UnitInfo {
    let precompiled = unit.kernels.iter().flat_map(|k| k.instances.iter().map(|(_, _, s)| s.clone())).collect();
    let kernels = unit
        .kernels
        .iter()
        .map(|k| cuprum_abi::record::KernelRecord {
            kind: k.kind.name().to_owned(),
            name: k.name.clone(),
            instances: k.instances.iter().map(|(_, _, s)| s.clone()).collect(),
        })
        .collect();
    let cooperative = unit.kernels.iter().filter(|k| k.cooperative).map(|k| k.name.clone()).collect();
    UnitInfo { file, source: unit.source, fast_math: unit.fast_math, fatbin: None, targets: Vec::new(), build: String::new(), precompiled, parts: Vec::new(), kernels, cooperative, owner: None }
}

/// The file's first top-level kernel (`#[rawkernel]`, `#[elementwise]`, `#[reduction]`, `#[fuse]`) without a
/// `#[cfg]` or `#[cfg_attr]`, among the kernels the unit defines.
fn owner(text: &str, unit: &crate::back::cuda::Unit) -> Option<String> {
    let file = syn::parse_file(text).ok()?;
    file.items.iter().find_map(|item| {
        let syn::Item::Fn(f) = item else { return None };
        let is_kernel = f.attrs.iter().any(|a| {
            a.path().segments.last().is_some_and(|s| matches!(s.ident.to_string().as_str(), "rawkernel" | "elementwise" | "reduction" | "fuse"))
        });
        let conditional = f.attrs.iter().any(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"));
        let name = f.sig.ident.to_string();
        (is_kernel && !conditional && unit.kernels.iter().any(|k| k.name == name)).then_some(name)
    })
}

/// Whether the file translates cleanly (cached with its unit).
pub(crate) fn file_translates(path: &Path, text: &str) -> bool {
    file_unit(path, text).is_some()
}

/// Each file is translated once per compiler process, however many kernels it holds.
fn file_unit(path: &Path, text: &str) -> Option<Arc<UnitInfo>> {
    static UNITS: Mutex<Option<HashMap<PathBuf, (String, Option<Arc<UnitInfo>>)>>> = Mutex::new(None);
    let mut units = UNITS.lock().unwrap_or_else(|e| e.into_inner());
    let units = units.get_or_insert_with(HashMap::new);
    if let Some((t, u)) = units.get(path) {
        if t == text {
            return u.clone();
        }
    }
    let unit = crate::compile_source(text).ok().map(|c| {
        let owner = owner(text, &c.unit);
        Arc::new(UnitInfo { owner, ..info_of(display_path(path), c.unit) })
    });
    units.insert(path.to_path_buf(), (text.to_string(), unit.clone()));
    unit
}

/// The name of a kernel file in messages, the unit table and the audit record
/// (`cuprum_abi::record`): its path relative to its package's root, the name its `#line`
/// directives use ([`crate::back::cuda::source_name`]): `kernels/elementwise.rs` for
/// cuprum-runtime's built-ins wherever the runtime's sources are (a module included with
/// `#[path = "../../kernels/elementwise.rs"]` is named by the file it reaches), `src/kernels.rs`
/// for a user's. A program so names no folder of the machine that built it (`path`, as rustc
/// knows it, is absolute for a crate outside the workspace). Only the name: the file is read at
/// `path`.
pub fn display_path(path: &Path) -> String {
    crate::back::cuda::source_name(path)
}

/// Replaces the unit by the one the build crate wrote from the same file with `#line` directives
/// (docs/debugging.md), found through `cuprum/<id>.lines` (`mangle::lines_file`): a macro cannot
/// write the directives itself (the compiler's spans of the file's text carry no lines here). Only
/// a unit that is this one with directives added is taken, so a stale file changes nothing.
fn attach_lines(info: &mut UnitInfo, out_dir: &Path) {
    let plain = mangle::unit_id(&info.source);
    let Ok(id) = std::fs::read_to_string(out_dir.join(mangle::lines_file(&plain))) else { return };
    let Ok(lined) = std::fs::read_to_string(out_dir.join(mangle::source_file(id.trim()))) else { return };
    if cuprum_abi::unit::without_line_directives(&lined) == info.source {
        info.source = lined;
    }
}

/// Finds the fat binary the build crate compiled from exactly this source, and its build record
/// (there is a record without a fat binary when the build had no nvcc).
fn attach_fatbin(info: &mut UnitInfo, out_dir: Option<&Path>) {
    let Some(out_dir) = out_dir else { return };
    if info.source.is_empty() {
        return;
    }
    attach_lines(info, out_dir);
    let id = mangle::unit_id(&info.source);
    info.build = std::fs::read_to_string(out_dir.join(mangle::build_file(&id))).unwrap_or_default();
    let fatbin = out_dir.join(mangle::fatbin_file(&id));
    if !fatbin.is_file() {
        return;
    }
    info.targets = std::fs::read_to_string(out_dir.join(mangle::targets_file(&id)))
        .map(|t| t.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    // The per-kernel parts of the fat binary; a listing that cannot be read leaves the unit to
    // NVRTC rather than loading the wrong bytes.
    match std::fs::read_to_string(out_dir.join(cuprum_abi::parts::parts_file(&id))) {
        Ok(text) => match cuprum_abi::parts::read_parts(&text) {
            Some(parts) => info.parts = parts,
            None => return,
        },
        Err(_) => return,
    }
    info.fatbin = Some(fatbin);
}


#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "#[elementwise]\nfn twice(x: f32) -> f32 {\n    x * 2.0\n}\n";

    /// The macro's unit (no directives) becomes the build's unit with directives, found through
    /// `<plain id>.lines`; a unit that is not this one with directives added is ignored.
    #[test]
    fn the_build_unit_with_lines_replaces_the_plain_one() {
        let out = std::env::temp_dir().join(format!("cuprum-unit-lines-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.join(mangle::AOT_DIR)).unwrap();
        let plain = crate::compile_source(FILE).unwrap().unit;
        let lined = crate::compile_source_with_lines(FILE, "src/k.rs").unwrap().unit.source;
        assert_ne!(plain.source, lined);
        let info = || info_of("src/k.rs".into(), plain.clone());
        let index = out.join(mangle::lines_file(&mangle::unit_id(&plain.source)));

        let mut without = info();
        attach_fatbin(&mut without, Some(&out));
        assert_eq!(without.source, plain.source, "no index: the plain unit");

        std::fs::write(out.join(mangle::source_file(&mangle::unit_id(&lined))), &lined).unwrap();
        std::fs::write(&index, mangle::unit_id(&lined)).unwrap();
        let mut with = info();
        attach_fatbin(&mut with, Some(&out));
        assert_eq!(with.source, lined);
        assert_eq!(with.id(), mangle::unit_id(&lined));

        let other = lined.replace("x * 2.0f", "x * 3.0f");
        std::fs::write(out.join(mangle::source_file(&mangle::unit_id(&other))), &other).unwrap();
        std::fs::write(&index, mangle::unit_id(&other)).unwrap();
        let mut stale = info();
        attach_fatbin(&mut stale, Some(&out));
        std::fs::remove_dir_all(&out).unwrap();
        assert_eq!(stale.source, plain.source, "another unit is not taken");
    }
}
