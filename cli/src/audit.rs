//! `cuprum audit EXECUTABLE [--arch sm_XY] [--deny-jit]`: every kernel instance another program
//! (or library) can launch, read from the file's bytes without running it and without a GPU: its
//! precompiled targets and bytes, and how each instance would reach a GPU of the named
//! architecture (else this machine's first GPU, else, per target, which GPUs it serves).
//!
//! Each kernel file a program embeds carries an audit record (`cuprum_abi::record`) next to its
//! unit; this reads the records and routes each unit with the runtime's decision
//! (`cuprum_runtime::audit::route`, the one `cuprum::audit::report` uses in a running program).
//! docs/audit.md describes the output and the exit status.

use std::fmt::Write as _;
use std::path::Path;

use cuprum_runtime::abi::record::{self, UnitRecord};
use cuprum_runtime::Device;
use cuprum_runtime::audit::{self, BuildInfo, Route};

const USAGE: &str = "\
usage: cuprum audit EXECUTABLE [--arch sm_XY] [--deny-jit]

Lists every kernel file, kernel and precompiled kernel instance that EXECUTABLE (a program or a
library built with cuprum) carries, read from the file without running it, with its fat binary's
targets and bytes, and how each instance would reach the GPU:
  precompiled             the fat binary has machine code (SASS) the GPU runs
  PTX JIT by the driver   only PTX the driver compiles when the module loads
  NVRTC at first use      no code for the GPU: compiled from the embedded CUDA C at first launch

  --arch sm_XY   audit for GPUs of compute capability X.Y (also X.Y or XY: sm_90, 9.0, 90;
                 sm_100, 10.0); no GPU needed. Without it: this machine's GPU 0, else (no GPU)
                 for each target, which GPUs it serves
  --deny-jit     exit with status 3 when any instance would need NVRTC or the driver's PTX JIT
                 on that GPU, listing them on stderr (needs --arch or a GPU)

Instances that are not listed (other dtypes of a generic kernel, those of a generic kernel that
precompiles none, the 64-bit index variants, the tiled `t32` variant) and kernels made at run time from CUDA C text
(ElementwiseKernel, RawModule) are compiled by NVRTC at first use; --deny-jit cannot count them.
The running program's own audit: cuprum::audit::report; docs/audit.md.

exit status: 0 audited (and, with --deny-jit, nothing JIT-compiled); 1 some kernel record in the
file cannot be read (the rest is listed); 2 bad arguments, a file that cannot be read, or a file
with no cuprum kernels; 3 --deny-jit and some instance would be JIT-compiled";

/// What the audit is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Gpu {
    /// `--arch`: a compute capability.
    Arch((u32, u32)),
    /// A GPU of this machine.
    Device { ordinal: usize, name: String, cc: (u32, u32) },
    /// No `--arch` and no GPU.
    None,
}

impl Gpu {
    fn cc(&self) -> Option<(u32, u32)> {
        match self {
            Gpu::Arch(cc) | Gpu::Device { cc, .. } => Some(*cc),
            Gpu::None => None,
        }
    }
}

/// `sm_90`, `sm_121`, `9.0`, `12.1`, `90`: a compute capability `(major, minor)`.
fn parse_arch(s: &str) -> Option<(u32, u32)> {
    if let Some((major, minor)) = s.split_once('.') {
        let ok = |p: &str| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit());
        if !ok(major) || !ok(minor) || minor.len() != 1 {
            return None;
        }
        let major: u32 = major.parse().ok()?;
        return (major > 0).then(|| (major, minor.parse().unwrap_or(0)));
    }
    let n = s.strip_prefix("sm_").unwrap_or(s);
    if !(2..=3).contains(&n.len()) || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = n.parse().ok()?;
    (n >= 10).then_some((n / 10, n % 10))
}

struct Options {
    file: String,
    arch: Option<(u32, u32)>,
    deny_jit: bool,
}

/// The options, `Ok(None)` for `--help`, or what is wrong.
fn parse_args(args: &[String]) -> Result<Option<Options>, String> {
    let mut file = None;
    let mut arch = None;
    let mut deny_jit = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--deny-jit" => deny_jit = true,
            "--arch" => {
                let v = it.next().ok_or("`--arch` needs an architecture (sm_90)")?;
                arch = Some(parse_arch(v).ok_or_else(|| {
                    format!("bad architecture `{v}` for --arch: expected sm_XY (sm_80, sm_90, sm_120), X.Y (9.0) or XY (90)")
                })?);
            }
            s if s.starts_with("--arch=") => {
                let v = &s["--arch=".len()..];
                arch = Some(parse_arch(v).ok_or_else(|| {
                    format!("bad architecture `{v}` for --arch: expected sm_XY (sm_80, sm_90, sm_120), X.Y (9.0) or XY (90)")
                })?);
            }
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown argument `{s}`")),
            s => {
                if file.is_some() {
                    return Err(format!("one executable at a time (`{s}` is a second)"));
                }
                file = Some(s.to_owned());
            }
        }
    }
    let file = file.ok_or("which executable? (`cuprum audit EXECUTABLE`)")?;
    Ok(Some(Options { file, arch, deny_jit }))
}

pub fn run(args: &[String]) -> i32 {
    let options = match parse_args(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!(
                "cuprum audit: {e}\nusage: cuprum audit EXECUTABLE [--arch sm_XY] [--deny-jit]   (cuprum audit --help: details)"
            );
            return 2;
        }
    };
    let path = Path::new(&options.file);
    if path.is_dir() {
        eprintln!("cuprum audit: {} is a directory, not an executable", path.display());
        return 2;
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cuprum audit: cannot read {}: {e}", path.display());
            return 2;
        }
    };
    let found = record::find_all(&bytes);
    drop(bytes);
    let mut units: Vec<(UnitRecord, usize)> = Vec::new();
    let mut unreadable = Vec::new();
    for f in found {
        match f.record {
            Ok(r) => match units.iter_mut().find(|(u, _)| u.id == r.id) {
                Some((first, copies)) => {
                    *copies += 1;
                    if *first != r {
                        unreadable.push(format!(
                            "unit {} ({}) is embedded twice with different records; the first is listed",
                            r.id, r.file
                        ));
                    }
                }
                None => units.push((r, 1)),
            },
            Err(e) => unreadable.push(format!("the kernel record at byte {:#x} cannot be read: {e}", f.offset)),
        }
    }
    if units.is_empty() && unreadable.is_empty() {
        eprintln!("cuprum audit: no cuprum kernels found in {} (was it built with cuprum?)", path.display());
        return 2;
    }
    let gpu = match options.arch {
        Some(cc) => Gpu::Arch(cc),
        None => first_gpu(),
    };
    if options.deny_jit && gpu == Gpu::None {
        eprintln!(
            "cuprum audit: --deny-jit needs a GPU to check against: name one with --arch sm_XY (no CUDA GPU on this machine)"
        );
        return 2;
    }
    units.sort_by(|a, b| (&a.0.file, &a.0.id).cmp(&(&b.0.file, &b.0.id)));
    let (report, jit) = render(&options.file, &units, &gpu);
    print!("{report}");
    for e in &unreadable {
        eprintln!("cuprum audit: {e}");
    }
    if options.deny_jit && !jit.is_empty() {
        let arch = arch_name(gpu.cc().unwrap_or((0, 0)));
        eprintln!(
            "cuprum audit: --deny-jit: {} instance{} of {} would be compiled at run time on {arch}:",
            jit.len(),
            if jit.len() == 1 { "" } else { "s" },
            options.file
        );
        for j in &jit {
            eprintln!("  {j}");
        }
        return 3;
    }
    if !unreadable.is_empty() {
        return 1;
    }
    0
}

/// This machine's first GPU, if it has one (and a driver).
fn first_gpu() -> Gpu {
    match Device::count() {
        Ok(n) if n > 0 => match Device::get(0) {
            Ok(d) => Gpu::Device { ordinal: 0, name: d.name().to_owned(), cc: d.compute_capability() },
            Err(_) => Gpu::None,
        },
        _ => Gpu::None,
    }
}

fn arch_name((major, minor): (u32, u32)) -> String {
    format!("sm_{major}{minor}")
}

fn route_text(route: &Route) -> String {
    match route {
        Route::Precompiled(t) => format!("precompiled ({t})"),
        Route::PtxJit(t) => format!("PTX JIT by the driver ({t})"),
        Route::Nvrtc(why) => format!("NVRTC at first use ({why})"),
    }
}

/// The report, and the instances that would be JIT-compiled on the audited GPU (`SYMBOL (FILE):
/// how`; empty without one).
fn render(file: &str, units: &[(UnitRecord, usize)], gpu: &Gpu) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut jit = Vec::new();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let kernels: usize = units.iter().map(|u| u.0.kernels.len()).sum();
    let instances: usize = units.iter().map(|u| u.0.kernels.iter().map(|k| k.instances.len()).sum::<usize>()).sum();
    let _ = writeln!(out, "cuprum audit: {file}");
    let _ = write!(
        out,
        "{} kernel file{}, {kernels} kernel{}, {instances} precompiled instance{}",
        units.len(),
        plural(units.len()),
        plural(kernels),
        plural(instances)
    );
    let _ = match gpu {
        Gpu::Arch(cc) => writeln!(out, "; for {} (--arch)", arch_name(*cc)),
        Gpu::Device { ordinal, name, cc } => writeln!(out, "; for device {ordinal}: {name} ({})", arch_name(*cc)),
        Gpu::None => writeln!(out, "; no GPU and no --arch: what each target serves"),
    };
    let on = match gpu {
        Gpu::Arch(cc) | Gpu::Device { cc, .. } => format!("on {}", arch_name(*cc)),
        Gpu::None => String::new(),
    };
    for (u, copies) in units {
        let _ = writeln!(out, "{} (unit {})", u.file, u.id);
        if *copies > 1 {
            let _ = writeln!(
                out,
                "  embedded {copies} times (crates that embed the same kernel file; the program uses one)"
            );
        }
        let targets: Vec<&str> = u.targets.iter().map(String::as_str).collect();
        match u.fatbin_bytes {
            Some(bytes) => {
                let _ = writeln!(
                    out,
                    "  fat binary: {:.1} KiB ({bytes} bytes), targets {}",
                    bytes as f64 / 1024.0,
                    if targets.is_empty() { "not listed".to_owned() } else { targets.join(" ") }
                );
            }
            None => {
                let _ = writeln!(out, "  fat binary: none");
            }
        }
        let _ = match BuildInfo::parse(&u.build) {
            Some(b) => writeln!(out, "  build: {b}"),
            None => writeln!(out, "  build: no record"),
        };
        let route = gpu.cc().map(|cc| audit::route(&targets, u.fatbin_bytes.is_some(), cc));
        match (&route, u.fatbin_bytes) {
            (Some(r), _) => {
                let _ = writeln!(out, "  {on}: {}", route_text(r));
            }
            (None, None) => {
                let _ = writeln!(out, "  on any GPU: NVRTC at first use (no fat binary in this build)");
            }
            (None, Some(_)) => {
                for t in &targets {
                    let _ = writeln!(out, "  {t}: {}", audit::target_serves(t));
                }
                let _ = writeln!(out, "  any other GPU: NVRTC at first use");
            }
        }
        let jits = route.as_ref().filter(|r| !matches!(r, Route::Precompiled(_)));
        for k in &u.kernels {
            if k.instances.is_empty() {
                // A generic kernel whose attribute lists no instance (`instances = []`): like the
                // unlisted instances of the others, not something the program is known to launch.
                let _ = writeln!(out, "  #[{}] {}: no precompiled instance (each: NVRTC at first use)", k.kind, k.name);
                continue;
            }
            let _ = writeln!(out, "  #[{}] {} ({} instance{})", k.kind, k.name, k.instances.len(), plural(k.instances.len()));
            for s in &k.instances {
                let _ = writeln!(out, "    {s}");
                if let Some(r) = jits {
                    jit.push(format!("{s} ({}): {}", u.file, route_text(r)));
                }
            }
        }
    }
    let _ = match gpu.cc() {
        Some(cc) if jit.is_empty() => {
            writeln!(out, "on {}: every listed instance is precompiled; nothing is JIT-compiled", arch_name(cc))
        }
        Some(cc) => writeln!(
            out,
            "on {}: {} listed instance{} would be JIT-compiled (NVRTC or the driver's PTX JIT)",
            arch_name(cc),
            jit.len(),
            plural(jit.len())
        ),
        None => Ok(()),
    };
    let _ = writeln!(
        out,
        "instances not listed (other dtypes of generic kernels, 64-bit index variants, the tiled `t32` variant) are compiled by NVRTC at first use (not counted by --deny-jit)"
    );
    (out, jit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuprum_runtime::abi::record::KernelRecord;

    #[test]
    fn architectures() {
        for (s, cc) in [("sm_90", (9, 0)), ("sm_80", (8, 0)), ("sm_121", (12, 1)), ("sm_100", (10, 0)), ("9.0", (9, 0)), ("12.1", (12, 1)), ("86", (8, 6))] {
            assert_eq!(parse_arch(s), Some(cc), "{s}");
        }
        for s in ["", "sm_", "sm_9", "sm_9x", "compute_90", "9.", ".0", "9.10", "sm_1000", "0.5", "sm_05"] {
            assert_eq!(parse_arch(s), None, "{s}");
        }
    }

    fn unit(fatbin: Option<u64>) -> UnitRecord {
        UnitRecord {
            id: "00ff".into(),
            file: "kernels/scale.rs".into(),
            targets: vec!["sm_90".into(), "compute_90".into()],
            fatbin_bytes: fatbin,
            build: String::new(),
            kernels: vec![
                KernelRecord { kind: "rawkernel".into(), name: "scale".into(), instances: vec!["cuprum_rawkernel_scale__f32".into()] },
                KernelRecord { kind: "elementwise".into(), name: "generic".into(), instances: Vec::new() },
            ],
        }
    }

    #[test]
    fn routes_and_jit_lists() {
        let units = [(unit(Some(2048)), 2)];
        let (text, jit) = render("prog", &units, &Gpu::Arch((9, 0)));
        assert!(text.contains("  on sm_90: precompiled (sm_90)\n"), "{text}");
        assert!(text.contains("  embedded 2 times"), "{text}");
        assert!(jit.is_empty(), "{jit:?}"); // not the generic kernel without instances
        let (text, jit) = render("prog", &units, &Gpu::Arch((12, 0)));
        assert!(text.contains("  on sm_120: PTX JIT by the driver (compute_90)\n"), "{text}");
        assert_eq!(jit[0], "cuprum_rawkernel_scale__f32 (kernels/scale.rs): PTX JIT by the driver (compute_90)");
        let (text, jit) = render("prog", &units, &Gpu::Arch((8, 0)));
        assert!(text.contains("  on sm_80: NVRTC at first use (the fat binary (sm_90 compute_90) has no code for sm_80)"), "{text}");
        assert_eq!(jit.len(), 1);
        let (text, jit) = render("prog", &units, &Gpu::None);
        assert!(text.contains("  sm_90: precompiled on GPUs of compute capability 9.0 to 9.9\n"), "{text}");
        assert!(jit.is_empty());
        let (text, _) = render("prog", &[(unit(None), 1)], &Gpu::None);
        assert!(text.contains("  on any GPU: NVRTC at first use (no fat binary in this build)"), "{text}");
    }
}
