//! A unit's *parts*: one piece of its fat binary per kernel.
//!
//! The build crate compiles each kernel of a file separately (the file's definitions plus that
//! kernel's instantiation lines) and stores the pieces back to back in the file's one fat binary
//! (`cuprum/<id>.fatbin`, a sequence of fat binary containers), listed in `cuprum/<id>.parts`.
//! The runtime loads only the piece of the kernel it launches: a module's load time grows with its
//! machine code (and with its decompression), so a file of many kernels loads one kernel's worth,
//! not the whole file's, at each kernel's first call (docs/architecture.md, "The unit table").
//!
//! `cuprum/<id>.parts` has one line per part, in the fat binary's order:
//! `<part name> <byte offset> <byte length>`. Which entry points share a part is decided by
//! [`part_of`] (one part per kernel; per instance for kernels of more than [`SPLIT_ABOVE`]
//! instances; per instance and launch variant for reductions, and for every kernel of a build
//! that asks for [`Split::PerVariant`]), and the runtime finds a symbol's
//! part by trying [`candidates`] in order. With cuprum-build's compression (the
//! default, `CUPRUM_NVCC_COMPRESS=zstd`) each piece is a zstd frame of the kernel's fat binary, and
//! a first line named [`DICTIONARY`] locates the zstd dictionary the unit's frames were compressed
//! with (when it has one).
//!
//! **Targets.** With cuprum-build's compression, a part whose fat binary holds several targets
//! (machine code for several GPUs, PTX) is listed as one piece per family of targets,
//! `<part>@<target>+<target>..` ([`piece_name`]; the machine code of one major architecture
//! together, each PTX alone, `fatbin::split_by_family`), and the runtime decompresses and loads
//! only the piece the GPU runs ([`pieces_for`]; the driver picks the machine code in it): with the default
//! target list (twelve architectures and PTX) a first call reads one thirteenth of the part.

use crate::mangle::AOT_DIR;
use crate::{DType, KernelKind, Variant};

/// A kernel with more precompiled instances than this gets one part per instance, named
/// [`instance_part`]: its first call then loads one instance's machine code (all its variants),
/// not every dtype's (the built-in `sum`'s five dtypes were 319 KB of machine code at sm_90, one
/// 64 KB). Each part costs an nvcc run (about 0.2 s) and a little of the shared code again,
/// which the unit's zstd dictionary mostly takes back. (Reductions are split further, by
/// variant: [`part_of`].)
pub const SPLIT_ABOVE: usize = 3;

/// The part name of one instance of `kernel` when its instances have parts of their own:
/// `sum[f32]`, `axpy[f32,i64]`.
pub fn instance_part(kernel: &str, instance: &[DType]) -> String {
    let dtypes: Vec<&str> = instance.iter().map(|d| d.short_name()).collect();
    format!("{kernel}[{}]", dtypes.join(","))
}

/// The part name of one launch variant of one instance: `sum[f32]:rows`, `mean_c64[]:warps`.
pub fn variant_part(kernel: &str, instance: &[DType], variant: Variant) -> String {
    format!("{}:{}", instance_part(kernel, instance), variant.name())
}

/// How finely a build cuts its kernels into parts (cuprum-build's `Kernels::split`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// [`part_of`]'s rules: few nvcc runs, and a first call that loads one reduction loop or, for
    /// a kernel of many instances, one instance.
    #[default]
    Default,
    /// One part per instance and launch variant of every kernel (`squared_diff[f32]:contig`),
    /// and per instance for raw kernels: a first call decompresses and loads one entry point's
    /// machine code (a third of an elementwise instance's, a ninth of a three-instance elementwise
    /// kernel's), for up to three times the nvcc runs of the elementwise kernels. For libraries
    /// whose first call in a fresh process is what users time (a Python extension).
    PerVariant,
}

/// The part that holds the entry point (`instance`, `variant`) of `kernel`, a kernel of `kind`
/// with `instances` precompiled instances (what cuprum-build compiles together). With
/// [`Split::Default`]:
/// - a reduction: one part per instance and variant (`sum[f32]:rows`). Its variants are large
///   loops (20-40 KB of machine code each at sm_90) and a call runs one of them, so a first call
///   decompresses and loads one loop, not three (an nvcc run costs about 0.2 s more per part);
/// - a kernel of more than [`SPLIT_ABOVE`] instances: one part per instance (`axpy[f32]`);
/// - otherwise one part for the whole kernel (its name).
///
/// With [`Split::PerVariant`], every entry point with a variant has its own part, and every
/// instance of a kernel of several its own.
pub fn part_of(
    kernel: &str,
    kind: KernelKind,
    instance: &[DType],
    variant: Option<Variant>,
    instances: usize,
    split: Split,
) -> String {
    match (variant, split) {
        (Some(v), Split::PerVariant) => variant_part(kernel, instance, v),
        (None, Split::PerVariant) if instances > 1 => instance_part(kernel, instance),
        (Some(v), _) if kind == KernelKind::Reduction => variant_part(kernel, instance, v),
        (_, Split::Default) if instances > SPLIT_ABOVE => instance_part(kernel, instance),
        _ => kernel.to_string(),
    }
}

/// The part names that may hold the entry point (`instance`, `variant`) of `kernel`, in the order
/// the runtime tries them: whatever [`part_of`] decided at build time is one of them.
pub fn candidates(kernel: &str, instance: &[DType], variant: Option<Variant>) -> Vec<String> {
    let mut names = Vec::with_capacity(3);
    if let Some(v) = variant {
        names.push(variant_part(kernel, instance, v));
    }
    names.push(instance_part(kernel, instance));
    names.push(kernel.to_string());
    names
}

/// The listing name of a unit's zstd dictionary (not a Rust identifier: never a kernel's name).
pub const DICTIONARY: &str = ".zstd-dictionary";

/// The listing name of a piece of a part holding these targets: `add@sm_90`,
/// `sum[f32]:rows@sm_80+sm_86+sm_89`, `add@compute_90`.
pub fn piece_name(part: &str, targets: &[String]) -> String {
    format!("{part}@{}", targets.join("+"))
}

/// The part and the targets (`+`-separated) of a listing name (`None` for a part listed whole).
pub fn piece_of(name: &str) -> Option<(&str, &str)> {
    name.split_once('@')
}

/// Which of a part's pieces (each its `+`-separated targets, in listing order) a GPU of compute
/// capability `(major, minor)` can load, best first: machine code for its architecture, then for
/// an earlier minor version of the same major one (newest first; machine code runs on later minor
/// versions of its major architecture), then PTX for the newest architecture not above the GPU's,
/// which the driver compiles. Arch-specific targets (`sm_90a`, `compute_90a`) serve their exact
/// architecture only. A piece ranks by the best target in it (the driver picks that one when it
/// loads the piece). Indices into `pieces`; empty when none fits (the kernel then compiles from
/// source).
pub fn pieces_for<'a>(
    pieces: impl IntoIterator<Item = &'a str>,
    (major, minor): (u32, u32),
) -> Vec<usize> {
    let device = major * 10 + minor;
    let mut sass: Vec<(u32, usize)> = Vec::new();
    let mut ptx: Vec<(u32, usize)> = Vec::new();
    for (i, targets) in pieces.into_iter().enumerate() {
        let best_sass = targets
            .split('+')
            .filter_map(|t| target_arch("sm_", t))
            .filter(|&(arch, specific)| if specific { arch == device } else { arch / 10 == major && arch % 10 <= minor })
            .map(|(arch, _)| arch)
            .max();
        let best_ptx = targets
            .split('+')
            .filter_map(|t| target_arch("compute_", t))
            .filter(|&(arch, specific)| if specific { arch == device } else { arch <= device })
            .map(|(arch, _)| arch)
            .max();
        if let Some(arch) = best_sass {
            sass.push((arch, i));
        } else if let Some(arch) = best_ptx {
            ptx.push((arch, i));
        }
    }
    sass.sort_by(|a, b| b.0.cmp(&a.0));
    ptx.sort_by(|a, b| b.0.cmp(&a.0));
    sass.into_iter().chain(ptx).map(|(_, i)| i).collect()
}

/// `sm_90` with prefix `sm_` -> `(90, false)`, `sm_90a` -> `(90, true)` (arch-specific).
fn target_arch(prefix: &str, target: &str) -> Option<(u32, bool)> {
    let rest = target.strip_prefix(prefix)?;
    match rest.strip_suffix('a') {
        Some(number) => Some((number.parse().ok()?, true)),
        None => Some((rest.parse().ok()?, false)),
    }
}

/// The parts listing of unit `id`, relative to `OUT_DIR`: `cuprum/<id>.parts`.
pub fn parts_file(id: &str) -> String {
    format!("{AOT_DIR}/{id}.parts")
}

/// One kernel's piece of a unit's fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The part's name (a kernel, an instance, or a piece `<part>@<targets>`; see the module docs).
    pub kernel: String,
    /// Where the piece starts in the unit's fat binary, in bytes.
    pub offset: usize,
    /// The piece's length in bytes.
    pub len: usize,
}

/// The listing's text.
pub fn write_parts(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| format!("{} {} {}\n", p.kernel, p.offset, p.len))
        .collect()
}

/// Reads a listing; `None` if any line is malformed.
pub fn read_parts(text: &str) -> Option<Vec<Part>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let part = Part {
                kernel: w.next()?.to_string(),
                offset: w.next()?.parse().ok()?,
                len: w.next()?.parse().ok()?,
            };
            w.next().is_none().then_some(part)
        })
        .collect()
}

/// The symbol an instantiation line defines (`CUPRUM_INSTANTIATE_<...>(SYMBOL, ...)` or
/// `(SYMBOL)`), `None` for any other line.
pub fn instantiated_symbol(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("CUPRUM_INSTANTIATE_")?;
    let args = &rest[rest.find('(')? + 1..];
    let end = args.find([',', ')'])?;
    Some(args[..end].trim())
}

/// A unit's source without its instantiation lines (the `#define`s of their macros stay).
pub fn definitions(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines().filter(|l| instantiated_symbol(l).is_none()) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The source of one part: the unit with the instantiation lines of other symbols than `symbols`
/// blanked (each an empty line), so that every line keeps its number in the unit (the targets of
/// its `#line` directives, `crate::unit::LINE_DIRECTIVE`, and of nvcc's messages).
pub fn part_source(source: &str, symbols: &[String]) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        if instantiated_symbol(line).is_none_or(|s| symbols.iter().any(|k| k == s)) {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#define CUPRUM_INSTANTIATE_k(NAME, T) x\nint f();\nCUPRUM_INSTANTIATE_k(cuprum_rawkernel_k__f32, f32)\nCUPRUM_INSTANTIATE_j(cuprum_rawkernel_j)\n";

    #[test]
    fn a_part_keeps_the_definitions_and_its_own_instances() {
        assert_eq!(
            instantiated_symbol("CUPRUM_INSTANTIATE_k(cuprum_rawkernel_k__f32, f32)"),
            Some("cuprum_rawkernel_k__f32")
        );
        assert_eq!(
            instantiated_symbol("CUPRUM_INSTANTIATE_j(cuprum_rawkernel_j)"),
            Some("cuprum_rawkernel_j")
        );
        assert_eq!(
            instantiated_symbol("#define CUPRUM_INSTANTIATE_k(NAME, T) x"),
            None
        );
        assert_eq!(
            definitions(SRC),
            "#define CUPRUM_INSTANTIATE_k(NAME, T) x\nint f();\n"
        );
        let j = part_source(SRC, &["cuprum_rawkernel_j".to_string()]);
        assert_eq!(
            j, "#define CUPRUM_INSTANTIATE_k(NAME, T) x\nint f();\n\nCUPRUM_INSTANTIATE_j(cuprum_rawkernel_j)\n",
            "the other instance's line is blank: every line keeps its number"
        );
    }

    #[test]
    fn a_gpu_loads_its_own_machine_code_then_ptx() {
        let t = [
            "sm_80",
            "sm_86",
            "sm_90",
            "compute_90",
            "compute_80",
            "sm_100",
            "compute_120",
        ];
        assert_eq!(pieces_for(t, (9, 0)), [2, 3, 4]);
        assert_eq!(
            pieces_for(t, (8, 9)),
            [1, 0, 4],
            "sm_86 and sm_80 run on 8.9; PTX 8.0 too"
        );
        assert_eq!(pieces_for(t, (8, 0)), [0, 4]);
        assert_eq!(
            pieces_for(t, (12, 0)),
            [6, 3, 4],
            "only PTX for a GPU newer than every SASS target"
        );
        assert_eq!(pieces_for(t, (10, 3)), [5, 3, 4]);
        assert!(pieces_for(t, (7, 5)).is_empty());
        assert_eq!(
            piece_of(&piece_name("sum[f32]", &["sm_90".to_string()])),
            Some(("sum[f32]", "sm_90"))
        );
        // Pieces of a major architecture's machine code: ranked by the best target in each.
        let t = ["sm_75", "sm_80+sm_86+sm_89", "sm_90", "sm_100+sm_103", "compute_90", "sm_120+sm_121"];
        assert_eq!(pieces_for(t, (8, 6)), [1], "sm_86 in the Ampere piece; no PTX at or below 8.6");
        assert_eq!(pieces_for(t, (8, 7)), [1]);
        assert_eq!(pieces_for(t, (9, 0)), [2, 4]);
        assert_eq!(pieces_for(t, (10, 3)), [3, 4]);
        assert_eq!(pieces_for(t, (12, 1)), [5, 4]);
        assert_eq!(pieces_for(t, (11, 0)), [4], "only PTX for sm_110 here");
        assert_eq!(
            piece_of(&piece_name("s[f32]:rows", &["sm_80".to_string(), "sm_86".to_string()])),
            Some(("s[f32]:rows", "sm_80+sm_86"))
        );
        assert_eq!(piece_of("sum[f32]"), None);
    }

    #[test]
    fn arch_specific_targets_serve_their_exact_architecture_only() {
        let t = ["sm_80", "sm_90a", "compute_90a", "sm_90+sm_90a", "compute_80"];
        assert_eq!(pieces_for(t, (9, 0)), [1, 3, 2, 4]);
        // Not on a later minor version, a later architecture, nor through its PTX elsewhere.
        assert_eq!(pieces_for(t, (10, 0)), [4]);
        assert_eq!(pieces_for(t, (12, 0)), [4]);
        assert_eq!(pieces_for(t, (8, 9)), [0, 4]);
        assert!(pieces_for(["sm_90a", "compute_90a"], (10, 0)).is_empty());
    }

    #[test]
    fn every_entry_point_is_in_one_of_its_candidate_parts() {
        use crate::{ElementwiseVariant, ReductionVariant};
        let rows = Some(Variant::Reduction(ReductionVariant::Rows));
        let contig = Some(Variant::Elementwise(ElementwiseVariant::Contig));
        let f32 = [DType::F32];
        let d = Split::Default;
        assert_eq!(part_of("sum", KernelKind::Reduction, &f32, rows, 1, d), "sum[f32]:rows");
        assert_eq!(part_of("mean_c64", KernelKind::Reduction, &[], rows, 1, d), "mean_c64[]:rows");
        assert_eq!(part_of("add", KernelKind::Elementwise, &f32, contig, 3, d), "add");
        assert_eq!(part_of("add", KernelKind::Elementwise, &f32, contig, 4, d), "add[f32]");
        assert_eq!(part_of("k", KernelKind::RawKernel, &f32, None, 1, d), "k");
        let v = Split::PerVariant;
        assert_eq!(part_of("add", KernelKind::Elementwise, &f32, contig, 1, v), "add[f32]:contig");
        assert_eq!(part_of("sum", KernelKind::Reduction, &f32, rows, 9, v), "sum[f32]:rows");
        assert_eq!(part_of("k", KernelKind::RawKernel, &f32, None, 2, v), "k[f32]");
        assert_eq!(part_of("k", KernelKind::RawKernel, &[], None, 1, v), "k");
        for (kind, variant) in [
            (KernelKind::Reduction, rows),
            (KernelKind::Elementwise, contig),
            (KernelKind::RawKernel, None),
        ] {
            for n in [1, 3, 4, 9] {
                for split in [Split::Default, Split::PerVariant] {
                    let part = part_of("k", kind, &f32, variant, n, split);
                    assert!(candidates("k", &f32, variant).contains(&part), "{part}");
                }
            }
        }
        assert_eq!(piece_of(&piece_name("sum[f32]:rows", &["sm_90".to_string()])), Some(("sum[f32]:rows", "sm_90")));
    }

    #[test]
    fn listings_round_trip_and_reject_garbage() {
        let parts = vec![
            Part {
                kernel: "add".into(),
                offset: 0,
                len: 100,
            },
            Part {
                kernel: "sub".into(),
                offset: 100,
                len: 7,
            },
        ];
        assert_eq!(read_parts(&write_parts(&parts)), Some(parts));
        assert_eq!(read_parts("add 0\n"), None);
        assert_eq!(read_parts("add 0 1 2\n"), None);
        assert_eq!(read_parts(""), Some(vec![]));
    }
}
