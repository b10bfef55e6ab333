//! What the running program carries and how each of its kernels will reach the GPU.
//!
//! [`report`] lists every kernel file the program embeds ([`units`]): its unit id, the targets of
//! its fat binary, the fat binary's size, and the build record `cuprum-build` left next to it
//! ([`BuildInfo`]: nvcc seconds, whether nvcc ran or the fat binary came from a cache); then every
//! kernel of the file ([`kernels`]) with its precompiled instances, each marked
//!
//! - `precompiled for this GPU`: the fat binary has SASS the device runs (`sm_XY` of the device's
//!   major version, minor version at most the device's);
//! - `PTX JIT by the driver`: no such SASS, but PTX `compute_XY` at most the device's; the driver
//!   compiles it when the module loads;
//! - `NVRTC at first use`: no fat binary, or none with code for the device; the instance is
//!   compiled from the embedded CUDA C at its first launch (then served by the disk cache).
//!
//! Without a device (a machine without GPU) it says, for each target the fat binary lists, which
//! GPUs it serves. Instances that are not precompiled (other dtypes of a generic kernel) always go
//! to NVRTC at first use.
//!
//! ```no_run
//! let device = cuprum_runtime::Device::get(0).ok();
//! println!("{}", cuprum_runtime::audit::report(device.as_ref()));
//! ```
//!
//! What the program did meanwhile: [`served`] lists which layer of the lookup chain served each
//! kernel instance loaded so far (the embedded fat binary, the kernel cache, NVRTC;
//! docs/architecture.md, The lookup chain), and [`crate::stats::snapshot`] counts them.

use std::fmt;

use crate::device::Device;
use crate::registry::{self, UnitRef};
pub use crate::registry::{BuildInfo, BuildStatus, KernelEntry, KernelUnit, Served, kernels, served, units};

/// How an instance reaches a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// SASS in the fat binary runs on the device as is (the target named, `sm_90`).
    Precompiled(String),
    /// PTX in the fat binary (`compute_90`), compiled by the driver when the module loads.
    PtxJit(String),
    /// Compiled by NVRTC at the first launch (and served by the disk cache later); why.
    Nvrtc(String),
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Precompiled(t) => write!(f, "precompiled for this GPU ({t})"),
            Route::PtxJit(t) => write!(f, "PTX JIT by the driver ({t})"),
            Route::Nvrtc(why) => write!(f, "NVRTC at first use ({why})"),
        }
    }
}

/// A fat binary target: `sm_90` (SASS) or `compute_90` (PTX), with its SM number
/// (`major * 10 + minor`) and whether it is arch-specific (`sm_90a`: that compute capability
/// exactly).
fn parse_target(t: &str) -> Option<(bool, u32, bool)> {
    let (sass, rest) = match t.strip_prefix("sm_") {
        Some(n) => (true, n),
        None => (false, t.strip_prefix("compute_")?),
    };
    let (digits, specific) = match rest.strip_suffix('a') {
        Some(d) => (d, true),
        None => (rest, false),
    };
    digits.parse().ok().map(|n| (sass, n, specific))
}

/// How the precompiled instances of a fat binary with `targets` reach a GPU of compute capability
/// `cc`: SASS of the same major version and a minor version at most the device's (the newest
/// such), else PTX at most the device's (the newest), else NVRTC. `has_fatbin`: whether the program
/// embeds a fat binary at all. No GPU is needed: `cuprum audit EXECUTABLE --arch sm_XY` routes
/// another program's units with it.
pub fn route(targets: &[&str], has_fatbin: bool, cc: (u32, u32)) -> Route {
    if !has_fatbin {
        return Route::Nvrtc("no fat binary in this build".into());
    }
    let device = cc.0 * 10 + cc.1;
    // An arch-specific target serves its own compute capability only.
    let parsed: Vec<(bool, u32, &str)> = targets
        .iter()
        .filter_map(|t| parse_target(t).filter(|&(_, n, specific)| !specific || n == device).map(|(sass, n, _)| (sass, n, *t)))
        .collect();
    let sass = parsed
        .iter()
        .filter(|(sass, n, _)| *sass && n / 10 == cc.0 && *n <= device)
        .max_by_key(|(_, n, _)| *n);
    if let Some((_, _, t)) = sass {
        return Route::Precompiled((*t).to_owned());
    }
    let ptx = parsed.iter().filter(|(sass, n, _)| !*sass && *n <= device).max_by_key(|(_, n, _)| *n);
    if let Some((_, _, t)) = ptx {
        return Route::PtxJit((*t).to_owned());
    }
    Route::Nvrtc(format!(
        "the fat binary ({}) has no code for sm_{device}",
        if targets.is_empty() { "no targets listed".to_owned() } else { targets.join(" ") }
    ))
}

/// Which GPUs one target serves, for a machine without GPU: `sm_86` -> `precompiled on GPUs of
/// compute capability 8.6 to 8.9` (also `cuprum audit EXECUTABLE` without GPU and `--arch`).
pub fn target_serves(target: &str) -> String {
    match parse_target(target) {
        Some((true, n, true)) => format!("precompiled on GPUs of compute capability {}.{} only (arch-specific)", n / 10, n % 10),
        Some((false, n, true)) => format!("PTX JIT by the driver on GPUs of compute capability {}.{} only (arch-specific)", n / 10, n % 10),
        Some((true, n, false)) => format!(
            "precompiled on GPUs of compute capability {}.{} to {}.9",
            n / 10,
            n % 10,
            n / 10
        ),
        Some((false, n, false)) => format!(
            "PTX JIT by the driver on GPUs of compute capability {}.{} and newer that no SASS target serves",
            n / 10,
            n % 10
        ),
        None => "not a target this runtime knows".to_owned(),
    }
}

/// The device an audit is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSummary {
    /// The device's ordinal.
    pub ordinal: usize,
    /// The device's name, as the driver reports it.
    pub name: String,
    /// Its compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

/// One kernel file the program embeds.
#[derive(Debug, Clone)]
pub struct UnitAudit {
    /// The kernel file, as the build named it.
    pub file: String,
    /// The unit's id (the fat binary's file stem).
    pub id: String,
    /// The fat binary's targets, as the build listed them.
    pub targets: Vec<String>,
    /// The embedded fat binary's size; `None` without one.
    pub fatbin_bytes: Option<usize>,
    /// The build record, when the build made one.
    pub build: Option<BuildInfo>,
    /// How its precompiled instances reach the audited device (`None`: no device).
    pub route: Option<Route>,
    /// Its kernels, in the order of their names.
    pub kernels: Vec<KernelAudit>,
    /// Precompiled symbols that belong to no listed kernel (a kernel left out by a `#[cfg]`).
    pub other_symbols: Vec<String>,
}

/// One kernel and its precompiled instances (their symbols).
#[derive(Debug, Clone)]
pub struct KernelAudit {
    /// `rawkernel`, `elementwise` or `reduction`.
    pub kind: &'static str,
    /// The kernel's Rust name.
    pub name: &'static str,
    /// The symbols of its precompiled instances.
    pub instances: Vec<String>,
}

/// The audit of the running program: see the module docs. `Display` prints it.
#[derive(Debug, Clone)]
pub struct Audit {
    /// The device audited, if any.
    pub device: Option<DeviceSummary>,
    /// Every kernel file the program embeds.
    pub units: Vec<UnitAudit>,
}

impl Audit {
    /// How many precompiled instances the program carries.
    pub fn instances(&self) -> usize {
        self.units
            .iter()
            .map(|u| u.kernels.iter().map(|k| k.instances.len()).sum::<usize>() + u.other_symbols.len())
            .sum()
    }

    /// The unit of the kernel file whose path ends with `file`.
    pub fn unit(&self, file: &str) -> Option<&UnitAudit> {
        self.units.iter().find(|u| u.file.ends_with(file))
    }
}

/// The audit of every kernel file this program embeds, for `device` (or for no GPU).
pub fn report(device: Option<&Device>) -> Audit {
    let kernels: Vec<(&'static str, &'static str, &'static str)> = registry::kernels()
        .filter_map(|e| {
            let id = match e.kernel.unit_ref() {
                UnitRef::Embedded(u) => u.id(),
                UnitRef::Shared { id, .. } => id,
            };
            (!id.is_empty()).then_some((e.kind().name(), e.name(), id))
        })
        .collect();
    let device = device.map(|d| DeviceSummary {
        ordinal: d.ordinal(),
        name: d.name().to_owned(),
        compute_capability: d.compute_capability(),
    });
    audit_units(&registry::units(), &kernels, device)
}

/// The audit of `units`, with `kernels` as `(kind, name, unit id)`.
pub(crate) fn audit_units(
    units: &[&KernelUnit],
    kernels: &[(&'static str, &'static str, &str)],
    device: Option<DeviceSummary>,
) -> Audit {
    let units = units
        .iter()
        .map(|u| {
            let mut mine: Vec<KernelAudit> = kernels
                .iter()
                .filter(|(_, _, id)| *id == u.id())
                .map(|&(kind, name, _)| KernelAudit { kind, name, instances: Vec::new() })
                .collect();
            mine.sort_by_key(|k| k.name);
            mine.dedup_by(|a, b| a.name == b.name && a.kind == b.kind);
            let mut other_symbols = Vec::new();
            for symbol in u.precompiled() {
                // The kernel whose symbol prefix `cuprum_<kind>_<name>` is the longest match.
                let owner = mine
                    .iter_mut()
                    .filter(|k| {
                        let prefix = format!("cuprum_{}_{}", k.kind, k.name);
                        symbol
                            .strip_prefix(&prefix)
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'))
                    })
                    .max_by_key(|k| k.name.len());
                match owner {
                    Some(k) => k.instances.push((*symbol).to_owned()),
                    None => other_symbols.push((*symbol).to_owned()),
                }
            }
            UnitAudit {
                file: u.file().to_owned(),
                id: u.id().to_owned(),
                targets: u.targets().iter().map(|t| (*t).to_owned()).collect(),
                fatbin_bytes: u.fatbin().map(<[u8]>::len),
                build: u.build_info(),
                route: device
                    .as_ref()
                    .map(|d| route(u.targets(), u.fatbin().is_some(), d.compute_capability)),
                kernels: mine,
                other_symbols,
            }
        })
        .collect();
    Audit { device, units }
}

impl fmt::Display for Audit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kernels: usize = self.units.iter().map(|u| u.kernels.len()).sum();
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        if self.units.is_empty() {
            writeln!(
                f,
                "cuprum audit: this program embeds no kernel files (no kernel of cuprum's macros is linked in)"
            )?;
            return Ok(());
        }
        write!(
            f,
            "cuprum audit: {} kernel file{}, {kernels} kernel{}, {} precompiled instance{}",
            self.units.len(),
            plural(self.units.len()),
            plural(kernels),
            self.instances(),
            plural(self.instances())
        )?;
        match &self.device {
            Some(d) => writeln!(
                f,
                "; for device {}: {} (sm_{}{})",
                d.ordinal, d.name, d.compute_capability.0, d.compute_capability.1
            )?,
            None => writeln!(f, "; no GPU: what each target would serve")?,
        }
        for u in &self.units {
            writeln!(f, "{} (unit {})", u.file, u.id)?;
            match u.fatbin_bytes {
                Some(bytes) => writeln!(
                    f,
                    "  fat binary: {:.1} KiB, targets {}",
                    bytes as f64 / 1024.0,
                    if u.targets.is_empty() { "not listed".to_owned() } else { u.targets.join(" ") }
                )?,
                None => writeln!(f, "  fat binary: none")?,
            }
            match &u.build {
                Some(b) => writeln!(f, "  build: {b}")?,
                None => writeln!(f, "  build: no record (built without cuprum-build's record)")?,
            }
            match (&u.route, u.fatbin_bytes) {
                (Some(r), _) => writeln!(f, "  on this GPU: {r}")?,
                (None, None) => writeln!(f, "  on any GPU: NVRTC at first use (no fat binary in this build)")?,
                (None, Some(_)) => {
                    for t in &u.targets {
                        writeln!(f, "  {t}: {}", target_serves(t))?;
                    }
                    writeln!(f, "  any other GPU: NVRTC at first use")?;
                }
            }
            for k in &u.kernels {
                if k.instances.is_empty() {
                    writeln!(f, "  #[{}] {}: no precompiled instance (each: NVRTC at first use)", k.kind, k.name)?;
                    continue;
                }
                writeln!(f, "  #[{}] {}", k.kind, k.name)?;
                for s in &k.instances {
                    match &u.route {
                        Some(r) => writeln!(f, "    {s}: {r}")?,
                        None => writeln!(f, "    {s}")?,
                    }
                }
            }
            for s in &u.other_symbols {
                match &u.route {
                    Some(r) => writeln!(f, "  {s} (no kernel entry): {r}")?,
                    None => writeln!(f, "  {s} (no kernel entry)")?,
                }
            }
        }
        writeln!(
            f,
            "instances not listed (other dtypes of generic kernels) are compiled by NVRTC at first use, then served by the disk cache"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = "cuprum-build 1\nstatus compiled\ntargets sm_80 sm_90 compute_90\ninstances 3\nfatbin_bytes 84016\nnvcc_seconds 0.812\nnvcc 13.0.88\nfuture_key whatever\n";

    #[test]
    fn parses_the_build_record() {
        let b = BuildInfo::parse(RECORD).unwrap();
        assert_eq!(
            b,
            BuildInfo {
                status: BuildStatus::Compiled,
                targets: vec!["sm_80".into(), "sm_90".into(), "compute_90".into()],
                instances: 3,
                fatbin_bytes: 84016,
                nvcc_seconds: 0.812,
                nvcc: Some("13.0.88".into()),
            }
        );
        assert_eq!(b.to_string(), "compiled by nvcc 13.0.88 in 0.81 s; 3 instances");
        let none = BuildInfo::parse("cuprum-build 1\nstatus no-nvcc\ntargets \ninstances 1\nfatbin_bytes 0\nnvcc_seconds 0.000\n").unwrap();
        assert_eq!((none.status.clone(), none.targets.len(), none.nvcc.clone()), (BuildStatus::NoNvcc, 0, None));
        assert_eq!(none.to_string(), "no nvcc at build time: nothing precompiled; 1 instance");
        let cached = BuildInfo::parse(&RECORD.replace("status compiled", "status cached")).unwrap();
        assert!(cached.to_string().starts_with("from the fat binary cache"), "{cached}");
        assert_eq!(BuildInfo::parse(""), None);
        assert_eq!(BuildInfo::parse("cuprum-build 2\nstatus compiled\n"), None);
    }

    #[test]
    fn routes_follow_cuda_binary_compatibility() {
        let t = ["sm_80", "sm_90", "compute_90"];
        assert_eq!(route(&t, true, (9, 0)), Route::Precompiled("sm_90".into()));
        // sm_80 SASS runs on 8.6; nothing runs on 7.5.
        assert_eq!(route(&t, true, (8, 6)), Route::Precompiled("sm_80".into()));
        assert!(matches!(route(&t, true, (7, 5)), Route::Nvrtc(w) if w.contains("no code for sm_75")));
        // Newer than every SASS target: the PTX.
        assert_eq!(route(&t, true, (12, 0)), Route::PtxJit("compute_90".into()));
        assert_eq!(route(&["sm_90"], true, (10, 0)), Route::Nvrtc("the fat binary (sm_90) has no code for sm_100".into()));
        assert_eq!(route(&["sm_120", "sm_121"], true, (12, 1)), Route::Precompiled("sm_121".into()));
        // Arch-specific targets serve their own compute capability only.
        assert_eq!(route(&["sm_80", "sm_90a"], true, (9, 0)), Route::Precompiled("sm_90a".into()));
        assert_eq!(route(&["sm_90a", "compute_90a"], true, (10, 0)), Route::Nvrtc("the fat binary (sm_90a compute_90a) has no code for sm_100".into()));
        assert_eq!(route(&["sm_80", "sm_90a"], true, (8, 9)), Route::Precompiled("sm_80".into()));
        assert!(target_serves("sm_90a").contains("9.0 only"));
        assert_eq!(route(&t, false, (9, 0)), Route::Nvrtc("no fat binary in this build".into()));
        assert_eq!(route(&t, true, (9, 0)).to_string(), "precompiled for this GPU (sm_90)");
        assert_eq!(route(&t, true, (12, 0)).to_string(), "PTX JIT by the driver (compute_90)");
        assert_eq!(target_serves("sm_86"), "precompiled on GPUs of compute capability 8.6 to 8.9");
        assert!(target_serves("compute_121").starts_with("PTX JIT by the driver on GPUs of compute capability 12.1 and newer"));
    }

    static FATBIN: [u8; 4] = [0; 4];
    static UNIT: KernelUnit = KernelUnit::new(
        "00ff",
        "kernels/scale.rs",
        "",
        false,
        Some(&FATBIN),
        &["sm_80", "sm_90", "compute_90"],
        &["cuprum_rawkernel_scale__f32", "cuprum_rawkernel_scale__f64", "cuprum_rawkernel_scale_rows__f32", "cuprum_elementwise_gone__f32"],
        RECORD,
        &[],
    );
    static BARE: KernelUnit = KernelUnit::new("00fe", "kernels/jit.rs", "", false, None, &[], &[], "", &[]);

    fn kernels() -> Vec<(&'static str, &'static str, &'static str)> {
        vec![
            ("rawkernel", "scale_rows", "00ff"),
            ("rawkernel", "scale", "00ff"),
            ("elementwise", "generic", "00ff"),
            ("rawkernel", "jit", "00fe"),
        ]
    }

    #[test]
    fn an_audit_for_a_gpu() {
        let device = DeviceSummary { ordinal: 0, name: "NVIDIA H100".into(), compute_capability: (9, 0) };
        let audit = audit_units(&[&UNIT, &BARE], &kernels(), Some(device));
        let scale = audit.unit("scale.rs").unwrap();
        assert_eq!(scale.kernels.iter().map(|k| (k.name, k.instances.len())).collect::<Vec<_>>(), [("generic", 0), ("scale", 2), ("scale_rows", 1)]);
        assert_eq!(scale.other_symbols, ["cuprum_elementwise_gone__f32"]);
        assert_eq!(audit.instances(), 4);
        let text = audit.to_string();
        for line in [
            "cuprum audit: 2 kernel files, 4 kernels, 4 precompiled instances; for device 0: NVIDIA H100 (sm_90)\n",
            "kernels/scale.rs (unit 00ff)\n  fat binary: 0.0 KiB, targets sm_80 sm_90 compute_90\n  build: compiled by nvcc 13.0.88 in 0.81 s; 3 instances\n  on this GPU: precompiled for this GPU (sm_90)\n",
            "  #[elementwise] generic: no precompiled instance (each: NVRTC at first use)\n",
            "  #[rawkernel] scale\n    cuprum_rawkernel_scale__f32: precompiled for this GPU (sm_90)\n    cuprum_rawkernel_scale__f64: precompiled for this GPU (sm_90)\n  #[rawkernel] scale_rows\n    cuprum_rawkernel_scale_rows__f32: precompiled for this GPU (sm_90)\n",
            "kernels/jit.rs (unit 00fe)\n  fat binary: none\n  build: no record (built without cuprum-build's record)\n  on this GPU: NVRTC at first use (no fat binary in this build)\n",
        ] {
            assert!(text.contains(line), "{line}\nnot in:\n{text}");
        }
    }

    #[test]
    fn an_audit_without_gpu_says_what_each_target_serves() {
        let text = audit_units(&[&UNIT, &BARE], &kernels(), None).to_string();
        for line in [
            "; no GPU: what each target would serve\n",
            "  sm_80: precompiled on GPUs of compute capability 8.0 to 8.9\n  sm_90: precompiled on GPUs of compute capability 9.0 to 9.9\n  compute_90: PTX JIT by the driver",
            "  any other GPU: NVRTC at first use\n",
            "    cuprum_rawkernel_scale__f32\n",
            "  on any GPU: NVRTC at first use (no fat binary in this build)\n",
        ] {
            assert!(text.contains(line), "{line}\nnot in:\n{text}");
        }
        let empty = audit_units(&[], &[], None).to_string();
        assert!(empty.starts_with("cuprum audit: this program embeds no kernel files"), "{empty}");
    }
}
