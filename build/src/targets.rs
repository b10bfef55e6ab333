//! Which GPU architectures the fat binaries hold: `CUPY_NVCC_GENERATE_CODE`.
//!
//! - `arch=compute_XX,code=sm_XX` items separated by `;`: machine code (SASS) for `sm_XX` from the
//!   virtual architecture `compute_XX`; `code=compute_XX` embeds PTX instead (the driver compiles it
//!   for newer GPUs at load time); `code=[sm_XX,compute_XX]` does both.
//! - Architecture-specific targets: `arch=compute_90a,code=sm_90a` (or `code=compute_90a`, or
//!   both). Their code uses the features of that exact architecture (Hopper's `wgmma` and
//!   `setmaxnreg`) and runs on compute capability 9.0 only; their PTX cannot be compiled for any
//!   other GPU. The suffix is the same on `arch` and `code`, and the machine code is for the
//!   virtual architecture itself. A kernel that needs such a target is built for it alone
//!   ([`for_kernel`]); the file's other kernels may be built for it too (they run there).
//! - `current`: SASS for the GPUs of the build machine (`nvidia-smi`), never arch-specific.
//! - unset: SASS for the data-centre architectures [`DEFAULT_SASS`] (`sm_80`, `sm_90`, `sm_100`)
//!   that this nvcc supports, plus PTX for the oldest virtual architecture it knows (`compute_75`
//!   with nvcc 13), which the driver compiles once for any newer GPU ([`default_list`]); a kernel
//!   that needs a newer architecture gets its own ([`for_kernel`]: `sm_80` and up plus PTX for
//!   `compute_80` for a tensor-core kernel; `arch=compute_90a,code=sm_90a` for one that needs
//!   `sm_90a`).

use std::fmt;

/// An architecture number and whether it is the arch-specific variant: `90` (`sm_90`,
/// `compute_90`) or `90a` (`sm_90a`, `compute_90a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// The SM version, `major * 10 + minor`: 90.
    pub number: u32,
    /// The `a` suffix: code for this exact architecture only.
    pub specific: bool,
}

impl Arch {
    /// `sm_<n>` / `compute_<n>`.
    pub const fn plain(number: u32) -> Arch {
        Arch { number, specific: false }
    }

    /// `sm_<n>a` / `compute_<n>a`.
    pub const fn specific(number: u32) -> Arch {
        Arch { number, specific: true }
    }
}

impl fmt::Display for Arch {
    /// `90` or `90a`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.number, if self.specific { "a" } else { "" })
    }
}

/// One target in a fat binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// Machine code for `sm_<N>` (`sm_<N>a`).
    Sass(Arch),
    /// PTX for `compute_<N>` (`compute_<N>a`).
    Ptx(Arch),
}

impl Code {
    /// The architecture it is for.
    pub fn arch(&self) -> Arch {
        match *self {
            Code::Sass(a) | Code::Ptx(a) => a,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Sass(a) => write!(f, "sm_{a}"),
            Code::Ptx(a) => write!(f, "compute_{a}"),
        }
    }
}

/// One `-gencode`: a virtual architecture and what to build from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gencode {
    /// The virtual architecture `compute_<arch>`; arch-specific (`compute_90a`) when its codes are.
    pub arch: Arch,
    /// What to build from it: machine code and/or PTX.
    pub codes: Vec<Code>,
}

impl Gencode {
    /// Machine code for `sm_<n>` from `compute_<n>` (`sm_<n>a` from `compute_<n>a` when `arch` is
    /// specific).
    pub fn sass(arch: Arch) -> Gencode {
        Gencode { arch, codes: vec![Code::Sass(arch)] }
    }

    /// Machine code for `sm_<code>` from `compute_<arch>` (`code` at least `arch`).
    fn sass_from(arch: Arch, code: Arch) -> Gencode {
        Gencode { arch, codes: vec![Code::Sass(code)] }
    }
}

impl fmt::Display for Gencode {
    /// nvcc's syntax: `arch=compute_90,code=sm_90`, `arch=compute_90,code=[sm_90,compute_90]`,
    /// `arch=compute_90a,code=sm_90a`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "arch=compute_{},code=", self.arch)?;
        match self.codes.as_slice() {
            [one] => write!(f, "{one}"),
            codes => {
                let list: Vec<String> = codes.iter().map(Code::to_string).collect();
                write!(f, "[{}]", list.join(","))
            }
        }
    }
}

/// `list` in the variable's syntax: its items joined by `;`.
pub fn show(list: &[Gencode]) -> String {
    list.iter().map(Gencode::to_string).collect::<Vec<_>>().join(";")
}

/// What `CUPY_NVCC_GENERATE_CODE` asks for, before nvcc or the GPUs are consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Unset: [`default_list`].
    Default,
    /// `current`: the GPUs present at build time.
    Current,
    /// An explicit list.
    List(Vec<Gencode>),
}

/// What a valid value looks like, appended to every parse error.
const EXPECTED: &str = "expected `;`-separated items such as `arch=compute_90,code=sm_90` (machine code), \
                        `arch=compute_90,code=compute_90` (PTX), `arch=compute_90,code=[sm_90,compute_90]` \
                        or `arch=compute_90a,code=sm_90a` (arch-specific), or `current` for the GPUs of this machine; unset it for the default (sm_80, sm_90, sm_100 and PTX for the oldest architecture)";

/// Parses the variable's value (`None`: unset or blank). Checks the syntax and the rules nvcc
/// imposes on each item; whether nvcc supports the numbers is checked by [`check_supported`].
pub fn parse(value: Option<&str>) -> Result<Request, String> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Request::Default);
    };
    if value == "current" {
        return Ok(Request::Current);
    }
    let mut list = Vec::new();
    for (i, item) in value.split(';').map(str::trim).enumerate() {
        if item.is_empty() {
            continue;
        }
        let gencode = parse_item(item).map_err(|why| {
            format!(
                "invalid CUPY_NVCC_GENERATE_CODE={value:?}: item {} `{item}`: {why}; {EXPECTED}",
                i + 1
            )
        })?;
        list.push(gencode);
    }
    if list.is_empty() {
        return Err(format!(
            "invalid CUPY_NVCC_GENERATE_CODE={value:?}: no items; {EXPECTED}"
        ));
    }
    Ok(Request::List(list))
}

fn parse_item(item: &str) -> Result<Gencode, String> {
    if item == "current" {
        return Err("`current` must be the whole value".into());
    }
    let rest = item
        .strip_prefix("arch=")
        .ok_or("an item starts with `arch=compute_XX`")?;
    let (arch, code) = rest
        .split_once(",code=")
        .ok_or("`arch=...` is followed by `,code=...`")?;
    let arch = arch_of(arch.trim(), "compute_")
        .ok_or_else(|| format!("`arch={arch}` names a virtual architecture `compute_XX` (or `compute_XXa`)"))?;
    let code = code.trim();
    let code_list = match code.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or("`code=[` has no closing `]`")?,
        None => code,
    };
    let mut codes = Vec::new();
    for c in code_list.split(',').map(str::trim) {
        let parsed = if let Some(a) = arch_of(c, "sm_") {
            Code::Sass(a)
        } else if let Some(a) = arch_of(c, "compute_") {
            Code::Ptx(a)
        } else {
            return Err(format!("`{c}` is not `sm_XX`, `compute_XX`, `sm_XXa` or `compute_XXa`"));
        };
        check_code(arch, parsed)?;
        if !codes.contains(&parsed) {
            codes.push(parsed);
        }
    }
    Ok(Gencode { arch, codes })
}

/// The rules between an item's virtual architecture and one of its codes: machine code at least
/// the virtual architecture, PTX for the virtual architecture itself, and the `a` suffix on both
/// or neither (arch-specific machine code only from its own virtual architecture).
fn check_code(arch: Arch, code: Code) -> Result<(), String> {
    let a = code.arch();
    if a.specific != arch.specific {
        let n = a.number.max(arch.number);
        return Err(format!(
            "`{code}` and `compute_{arch}` differ in the arch-specific suffix `a`: an arch-specific target is built from \
             its own arch-specific virtual architecture, whose features plain `compute_XX` lacks; write \
             `arch=compute_{n}a,code=sm_{n}a` (or drop the `a` from both)"
        ));
    }
    match code {
        Code::Sass(_) if a.number < arch.number => Err(format!(
            "{code} cannot be built from compute_{arch}: the machine code must be at least the virtual architecture"
        )),
        Code::Sass(_) if a.specific && a.number != arch.number => Err(format!(
            "{code} cannot be built from compute_{arch}: arch-specific machine code is built from its own virtual \
             architecture only; write `arch=compute_{a},code={code}`"
        )),
        Code::Ptx(_) if a != arch => Err(format!(
            "PTX is for the virtual architecture itself: write `code=compute_{arch}` (or `arch=compute_{a}`)"
        )),
        _ => Ok(()),
    }
}

/// `sm_90` / `sm_90a` with prefix `sm_` -> 90 / 90a: only digits after the prefix, then at most
/// the suffix `a`.
fn arch_of(s: &str, prefix: &str) -> Option<Arch> {
    let rest = s.strip_prefix(prefix)?;
    let (digits, specific) = match rest.strip_suffix('a') {
        Some(d) => (d, true),
        None => (rest, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Arch { number: digits.parse().ok()?, specific })
}

/// The machine code the default list holds, where nvcc supports it: the data-centre GPUs
/// (A100/A30 and, since an `sm_80` cubin runs on every 8.x GPU, the A10, A40, L4, L40 and the
/// RTX 30/40 series; H100/H200; B200/B300). Other GPUs run the default list's PTX.
pub const DEFAULT_SASS: &[u32] = &[80, 90, 100];

/// The default list, for a program that ships to GPUs unknown at build time without building for
/// every architecture (a dozen with nvcc 13: ten minutes and 12 MB for a small program):
///
/// - machine code for each of [`DEFAULT_SASS`] that nvcc builds (`sass`), from its own virtual
///   architecture or the newest one below it (`virtual_archs`); an `sm_XY` cubin runs on every GPU
///   of major version X with minor version Y or more, so these three serve compute capability
///   8.x, 9.0 and 10.x without a JIT. An nvcc that builds none of them gets its newest instead;
/// - PTX for the oldest virtual architecture nvcc knows (`compute_75` with nvcc 13), which the
///   driver compiles at a kernel's first load for any GPU of that capability or newer (Turing,
///   Thor, the RTX 50 series and RTX PRO Blackwell, GPUs newer than the toolkit) and keeps in its
///   cache.
///
/// Never arch-specific: [`for_kernel`] gives a kernel that needs `sm_90a` its own, and one that
/// needs a newer architecture than the PTX the targets from its architecture up.
pub fn default_list(sass: &[u32], virtual_archs: &[u32]) -> Result<Vec<Gencode>, String> {
    let mut supported = sass.to_vec();
    supported.sort_unstable();
    supported.dedup();
    let newest = *supported
        .last()
        .ok_or("nvcc --list-gpu-code listed no sm_XX architecture")?;
    let mut chosen: Vec<u32> = supported.iter().copied().filter(|n| DEFAULT_SASS.contains(n)).collect();
    if chosen.is_empty() {
        chosen.push(newest);
    }
    let oldest_virtual = *virtual_archs
        .iter()
        .min()
        .ok_or("nvcc --list-gpu-arch listed no compute_XX architecture")?;
    let mut list = vec![Gencode { arch: Arch::plain(oldest_virtual), codes: vec![Code::Ptx(Arch::plain(oldest_virtual))] }];
    for n in chosen {
        let arch = virtual_archs
            .iter()
            .copied()
            .filter(|&v| v <= n)
            .max()
            .ok_or_else(|| {
                format!("nvcc --list-gpu-arch lists no virtual architecture for sm_{n}")
            })?;
        match list.iter_mut().find(|g| g.arch == Arch::plain(arch)) {
            Some(g) => g.codes.insert(0, Code::Sass(Arch::plain(n))),
            None => list.push(Gencode::sass_from(Arch::plain(arch), Arch::plain(n))),
        }
    }
    Ok(list)
}

/// The list for `current`: SASS for each GPU's compute capability, once each, in order (never
/// arch-specific).
pub fn current_list(capabilities: &[u32]) -> Vec<Gencode> {
    let mut list: Vec<Gencode> = Vec::new();
    for &n in capabilities {
        if !list.iter().any(|g| g.arch == Arch::plain(n)) {
            list.push(Gencode::sass(Arch::plain(n)));
        }
    }
    list
}

/// The architectures an nvcc supports (`crate::nvcc::Nvcc::supported`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Supported<'a> {
    /// The `sm_XX` it builds (`nvcc --list-gpu-code`).
    pub sass: &'a [u32],
    /// The `compute_XX` it knows (`nvcc --list-gpu-arch`).
    pub virtual_archs: &'a [u32],
    /// The `sm_XXa` it builds (suffixed lines of `--list-gpu-code`, or `--help`'s list of values
    /// for `--gpu-code`: nvcc 13.0 lists no suffixed target with `--list-gpu-code`).
    pub sass_specific: &'a [u32],
    /// The `compute_XXa` it knows (likewise).
    pub virtual_specific: &'a [u32],
}

impl Supported<'_> {
    /// Whether nvcc builds `code`.
    pub fn has(&self, code: Code) -> bool {
        match code {
            Code::Sass(a) => self.sass_list(a.specific).contains(&a.number),
            Code::Ptx(a) => self.has_virtual(a),
        }
    }

    /// Whether nvcc knows the virtual architecture `compute_<arch>`.
    pub fn has_virtual(&self, arch: Arch) -> bool {
        let list = if arch.specific { self.virtual_specific } else { self.virtual_archs };
        list.contains(&arch.number)
    }

    fn sass_list(&self, specific: bool) -> &[u32] {
        if specific { self.sass_specific } else { self.sass }
    }

    /// Its machine code targets, for messages: `sm_75, ..., sm_121, sm_90a`.
    fn sass_names(&self) -> String {
        let plain = self.sass.iter().map(|&n| format!("sm_{}", Arch::plain(n)));
        let specific = self.sass_specific.iter().map(|&n| format!("sm_{}", Arch::specific(n)));
        plain.chain(specific).collect::<Vec<_>>().join(", ")
    }
}

/// Checks that nvcc supports every architecture of `list`, so that the error names the variable
/// (`source`) and the target instead of being nvcc's.
pub fn check_supported(list: &[Gencode], supported: &Supported<'_>, source: &str) -> Result<(), String> {
    let mut bad: Vec<String> = Vec::new();
    for g in list {
        let mut missing = Vec::new();
        if !supported.has_virtual(g.arch) {
            missing.push(format!("compute_{}", g.arch));
        }
        for &c in &g.codes {
            if !supported.has(c) {
                missing.push(c.to_string());
            }
        }
        for m in missing {
            if !bad.contains(&m) {
                bad.push(m);
            }
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    let specific_hint = if list.iter().any(|g| g.arch.specific) && supported.sass_specific.is_empty() {
        " (arch-specific targets such as sm_90a need CUDA 12.0 or newer)"
    } else {
        ""
    };
    Err(format!(
        "{source} asks for {} but this nvcc does not support {}; it supports {} (nvcc --list-gpu-code). \
         Choose from those, or use a newer CUDA toolkit{specific_hint}",
        bad.join(", "),
        if bad.len() == 1 { "it" } else { "them" },
        supported.sass_names()
    ))
}

/// Every target of `list`, once each, in order: what the `.targets` file lists.
pub fn names(list: &[Gencode]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for code in list.iter().flat_map(|g| &g.codes) {
        let name = code.to_string();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// How the targets were asked for, as far as [`for_kernel`] cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Unset: the default list ([`default_list`]).
    Default,
    /// `current`: the GPUs of the build machine.
    Current,
    /// An explicit list.
    List,
}

impl Request {
    /// How it asks.
    pub fn asked(&self) -> Asked {
        match self {
            Request::Default => Asked::Default,
            Request::Current => Asked::Current,
            Request::List(_) => Asked::List,
        }
    }
}

/// What one kernel needs of its targets: `cuprum_compiler::back::cuda::KernelInfo`'s `min_arch`
/// and `arch_specific`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs<'a> {
    /// The oldest architecture and the intrinsic that needs it: `(80, "mma_m16n8k16")`.
    pub min_arch: Option<(u32, &'a str)>,
    /// The intrinsic that needs the arch-specific target of `min_arch` (`sm_90a`).
    pub arch_specific: Option<&'a str>,
}

/// The targets kernel `name` is built for, from the build's `gencodes` (resolved from a request
/// that `asked` so), or the error (rendered like rustc's, `error: ...`) when none serves it:
///
/// - a kernel with `arch_specific` is built for the items of its arch-specific target
///   (`sm_90a`/`compute_90a`) only; an explicit list without one is an error. With the default
///   targets or `current`, it is built for `arch=compute_90a,code=sm_90a` when nvcc supports it
///   (`supported`), else that is an error too;
/// - a kernel with `min_arch` only is built for the items of that architecture or newer (`sm_90a`
///   counts as 90). Older items are an error when asked for explicitly (or with `current`), and
///   with the default targets when every item is older; with the default targets, the PTX of
///   an older item is replaced by PTX of `min_arch` itself (when nvcc knows it);
/// - any other kernel is built for every item.
pub fn for_kernel(
    name: &str,
    needs: Needs<'_>,
    asked: Asked,
    gencodes: &[Gencode],
    supported: &Supported<'_>,
) -> Result<Vec<Gencode>, String> {
    if let Some(what) = needs.arch_specific {
        // The compiler sets `min_arch` with `arch_specific`; sm_90a is the only such target yet.
        return for_specific_kernel(name, what, needs.min_arch.map_or(90, |m| m.0), asked, gencodes, supported);
    }
    let Some((need, what)) = needs.min_arch else {
        return Ok(gencodes.to_vec());
    };
    let (newer, older): (Vec<&Gencode>, Vec<&Gencode>) =
        gencodes.iter().partition(|g| g.arch.number >= need);
    let explicit = asked != Asked::Default;
    if older.is_empty() {
        return Ok(newer.into_iter().cloned().collect());
    }
    if !explicit && !newer.is_empty() {
        let mut own: Vec<Gencode> = newer.into_iter().cloned().collect();
        // The default list's PTX is older than the kernel: PTX of the kernel's own architecture
        // instead, so that GPUs without its machine code still run it from the fat binary.
        let has_ptx = |list: &[Gencode]| list.iter().flat_map(|g| &g.codes).any(|c| matches!(c, Code::Ptx(_)));
        let ptx = Arch::plain(need);
        if !has_ptx(&own) && older.iter().any(|g| has_ptx(std::slice::from_ref(*g))) && supported.has_virtual(ptx) {
            match own.iter_mut().find(|g| g.arch == ptx) {
                Some(g) => g.codes.push(Code::Ptx(ptx)),
                None => own.insert(0, Gencode { arch: ptx, codes: vec![Code::Ptx(ptx)] }),
            }
        }
        return Ok(own);
    }
    let older: Vec<String> = older.iter().map(|g| g.to_string()).collect();
    Err(format!(
        "error: kernel `{name}` uses `{what}`, which needs sm_{need} or newer, but the build asks for older targets: {} \
         ({}). Build it for sm_{need} and newer only (CUPY_NVCC_GENERATE_CODE=\"arch=compute_{need},code=sm_{need}\" or newer), \
         or compile its file with a second `cuprum_build::Kernels` whose `.env(\"CUPY_NVCC_GENERATE_CODE\", ..)` names \
         only such targets",
        older.join(" "),
        if explicit { "CUPY_NVCC_GENERATE_CODE" } else { "the default targets, CUPY_NVCC_GENERATE_CODE unset, are all older" },
    ))
}

/// [`for_kernel`] of a kernel that uses `what`, which needs `sm_<number>a`.
fn for_specific_kernel(
    name: &str,
    what: &str,
    number: u32,
    asked: Asked,
    gencodes: &[Gencode],
    supported: &Supported<'_>,
) -> Result<Vec<Gencode>, String> {
    let arch = Arch::specific(number);
    let item = Gencode::sass(arch);
    let why = if number == 90 {
        "Hopper's wgmma/setmaxnreg; its code runs on compute capability 9.0 only".to_owned()
    } else {
        format!("its code runs on compute capability {}.{} only", number / 10, number % 10)
    };
    let needs = format!("error: kernel `{name}` uses `{what}`, which needs the arch-specific target sm_{arch} ({why})");
    match asked {
        Asked::List => {
            let own: Vec<Gencode> = gencodes.iter().filter(|g| g.arch == arch).cloned().collect();
            if own.is_empty() {
                return Err(format!(
                    "{needs}, but CUPY_NVCC_GENERATE_CODE asks for: {}. Add `{item}` to it (the file's other kernels keep \
                     their targets)",
                    show(gencodes)
                ));
            }
            Ok(own)
        }
        Asked::Default | Asked::Current => {
            if supported.has_virtual(arch) && supported.has(Code::Sass(arch)) {
                return Ok(vec![item]);
            }
            let source = if asked == Asked::Current {
                "CUPY_NVCC_GENERATE_CODE=current"
            } else {
                "the default targets (CUPY_NVCC_GENERATE_CODE unset)"
            };
            Err(format!(
                "{needs}, which {source} would give it as `{item}`, but this nvcc does not support sm_{arch}; it supports {} \
                 (nvcc --list-gpu-code, --help). Use a CUDA toolkit that does (CUDA 12.0 or newer for sm_90a)",
                supported.sass_names()
            ))
        }
    }
}

/// Parses `nvidia-smi --query-gpu=compute_cap --format=csv,noheader` output (`9.0` per line) into
/// SM versions (90).
pub fn parse_compute_caps(output: &str) -> Result<Vec<u32>, String> {
    output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (major, minor) = l
                .split_once('.')
                .ok_or_else(|| format!("unexpected compute capability `{l}`"))?;
            let major: u32 = major
                .parse()
                .map_err(|_| format!("unexpected compute capability `{l}`"))?;
            let minor: u32 = minor
                .parse()
                .map_err(|_| format!("unexpected compute capability `{l}`"))?;
            Ok(major * 10 + minor)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &str) -> Vec<Gencode> {
        match parse(Some(v)).unwrap() {
            Request::List(l) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_items_and_renders_nvcc_syntax() {
        let l = list(
            "arch=compute_80,code=sm_80; arch=compute_90,code=[sm_90,compute_90];arch=compute_80,code=sm_86;",
        );
        let shown: Vec<String> = l.iter().map(Gencode::to_string).collect();
        assert_eq!(
            shown,
            [
                "arch=compute_80,code=sm_80",
                "arch=compute_90,code=[sm_90,compute_90]",
                "arch=compute_80,code=sm_86"
            ]
        );
        assert_eq!(names(&l), ["sm_80", "sm_90", "compute_90", "sm_86"]);
        assert_eq!(
            list("arch=compute_90,code=compute_90")[0].codes,
            [Code::Ptx(Arch::plain(90))]
        );
    }

    #[test]
    fn parses_and_renders_arch_specific_items() {
        let l = list(
            "arch=compute_80,code=sm_80;arch=compute_90a,code=sm_90a; arch=compute_90a,code=[sm_90a,compute_90a];\
             arch=compute_90a,code=compute_90a",
        );
        let shown: Vec<String> = l.iter().map(Gencode::to_string).collect();
        assert_eq!(
            shown,
            [
                "arch=compute_80,code=sm_80",
                "arch=compute_90a,code=sm_90a",
                "arch=compute_90a,code=[sm_90a,compute_90a]",
                "arch=compute_90a,code=compute_90a"
            ]
        );
        let a = Arch::specific(90);
        assert_eq!(l[1], Gencode { arch: a, codes: vec![Code::Sass(a)] });
        assert_eq!(l[2].codes, [Code::Sass(a), Code::Ptx(a)]);
        assert_eq!(names(&l), ["sm_80", "sm_90a", "compute_90a"]);
        assert_eq!(show(&l[..2]), "arch=compute_80,code=sm_80;arch=compute_90a,code=sm_90a");
        // Printed back, it parses to the same list.
        assert_eq!(list(&show(&l)), l);
        // Plain and arch-specific are different targets: both may be asked for.
        assert_eq!(
            names(&list("arch=compute_90,code=sm_90;arch=compute_90a,code=sm_90a")),
            ["sm_90", "sm_90a"]
        );
        assert_eq!(current_list(&[90]), [Gencode::sass(Arch::plain(90))]);
    }

    /// nvcc 13.0's lists: `--list-gpu-code` has no suffixed line, `--help` names sm_90a.
    const NVCC13: Supported<'static> = Supported {
        sass: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121],
        virtual_archs: &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121],
        sass_specific: &[90, 100, 103, 110, 120, 121],
        virtual_specific: &[90, 100, 103, 110, 120, 121],
    };

    #[test]
    fn arch_specific_targets_are_checked_against_their_own_list() {
        let l = list("arch=compute_80,code=sm_80;arch=compute_90a,code=[sm_90a,compute_90a]");
        assert!(check_supported(&l, &NVCC13, "x").is_ok());
        // An nvcc that builds sm_90 but no arch-specific target (CUDA 11.8).
        let old = Supported { sass: &[80, 90], virtual_archs: &[80, 90], ..Supported::default() };
        let e = check_supported(&l, &old, "CUPY_NVCC_GENERATE_CODE=\"...\"").unwrap_err();
        assert!(
            e.starts_with(
                "CUPY_NVCC_GENERATE_CODE=\"...\" asks for compute_90a, sm_90a but this nvcc does not support them; \
                 it supports sm_80, sm_90 (nvcc --list-gpu-code)"
            ) && e.ends_with("(arch-specific targets such as sm_90a need CUDA 12.0 or newer)"),
            "{e}"
        );
        // sm_90 support does not imply sm_90a's, nor the other way round.
        let only_a = Supported { sass: &[80], virtual_archs: &[80], sass_specific: &[90], virtual_specific: &[90] };
        let e = check_supported(&list("arch=compute_90,code=sm_90"), &only_a, "x").unwrap_err();
        assert!(e.contains("asks for compute_90, sm_90 but") && e.contains("it supports sm_80, sm_90a"), "{e}");
        assert!(check_supported(&list("arch=compute_90a,code=sm_90a"), &only_a, "x").is_ok());
        let e = check_supported(&list("arch=compute_100a,code=sm_100a"), &only_a, "x").unwrap_err();
        assert!(e.contains("asks for compute_100a, sm_100a but") && !e.contains("CUDA 12.0"), "{e}");
    }

    #[test]
    fn an_arch_specific_kernel_gets_only_its_arch_specific_items() {
        let wgmma = Needs { min_arch: Some((90, "wgmma_m64n256k16")), arch_specific: Some("wgmma_m64n256k16") };
        let mixed = list("arch=compute_80,code=sm_80;arch=compute_90,code=sm_90;arch=compute_90a,code=[sm_90a,compute_90a]");
        let got = for_kernel("gemm", wgmma, Asked::List, &mixed, &NVCC13).unwrap();
        assert_eq!(show(&got), "arch=compute_90a,code=[sm_90a,compute_90a]");
        let ptx = list("arch=compute_90a,code=compute_90a");
        assert_eq!(for_kernel("gemm", wgmma, Asked::List, &ptx, &NVCC13).unwrap(), ptx);
        // An explicit list without sm_90a.
        let plain = list("arch=compute_80,code=sm_80;arch=compute_90,code=sm_90");
        let e = for_kernel("gemm", wgmma, Asked::List, &plain, &NVCC13).unwrap_err();
        assert_eq!(
            e,
            "error: kernel `gemm` uses `wgmma_m64n256k16`, which needs the arch-specific target sm_90a (Hopper's \
             wgmma/setmaxnreg; its code runs on compute capability 9.0 only), but CUPY_NVCC_GENERATE_CODE asks for: \
             arch=compute_80,code=sm_80;arch=compute_90,code=sm_90. Add `arch=compute_90a,code=sm_90a` to it (the \
             file's other kernels keep their targets)"
        );
        // The default targets and `current`: sm_90a alone, when nvcc has it.
        let default = default_list(NVCC13.sass, NVCC13.virtual_archs).unwrap();
        for asked in [Asked::Default, Asked::Current] {
            let got = for_kernel("gemm", wgmma, asked, &default, &NVCC13).unwrap();
            assert_eq!(show(&got), "arch=compute_90a,code=sm_90a");
        }
        let old = Supported { sass: &[80, 90], virtual_archs: &[80, 90], ..Supported::default() };
        let e = for_kernel("gemm", wgmma, Asked::Default, &plain, &old).unwrap_err();
        assert!(
            e.starts_with("error: kernel `gemm` uses `wgmma_m64n256k16`, which needs the arch-specific target sm_90a")
                && e.contains("the default targets (CUPY_NVCC_GENERATE_CODE unset) would give it as `arch=compute_90a,code=sm_90a`")
                && e.contains("this nvcc does not support sm_90a; it supports sm_80, sm_90")
                && e.ends_with("(CUDA 12.0 or newer for sm_90a)"),
            "{e}"
        );
        let e = for_kernel("gemm", wgmma, Asked::Current, &plain, &old).unwrap_err();
        assert!(e.contains("which CUPY_NVCC_GENERATE_CODE=current would give it"), "{e}");
    }

    #[test]
    fn other_kernels_keep_their_targets_and_sm_90a_counts_as_90() {
        let none = Needs::default();
        let mma = Needs { min_arch: Some((80, "mma_m16n8k16")), arch_specific: None };
        let hopper = Needs { min_arch: Some((90, "cp_async_bulk")), arch_specific: None };
        let mixed = list("arch=compute_80,code=sm_80;arch=compute_90a,code=sm_90a");
        for asked in [Asked::List, Asked::Current, Asked::Default] {
            assert_eq!(for_kernel("add", none, asked, &mixed, &NVCC13).unwrap(), mixed);
            assert_eq!(for_kernel("mma", mma, asked, &mixed, &NVCC13).unwrap(), mixed);
        }
        // sm_90a is architecture 90 for min_arch: explicit sm_80 is still too old for a 90 kernel.
        let e = for_kernel("h", hopper, Asked::List, &mixed, &NVCC13).unwrap_err();
        assert!(
            e.starts_with("error: kernel `h` uses `cp_async_bulk`, which needs sm_90 or newer, but the build asks for older targets: arch=compute_80,code=sm_80 (CUPY_NVCC_GENERATE_CODE)"),
            "{e}"
        );
        let only_a = list("arch=compute_90a,code=sm_90a");
        assert_eq!(for_kernel("h", hopper, Asked::List, &only_a, &NVCC13).unwrap(), only_a);
        // The default targets: the kernel's own architecture up, with PTX of its architecture for
        // the default's older PTX; an error only when all are older.
        let default = default_list(NVCC13.sass, NVCC13.virtual_archs).unwrap();
        let got = for_kernel("h", hopper, Asked::Default, &default, &NVCC13).unwrap();
        assert_eq!(show(&got), "arch=compute_90,code=[sm_90,compute_90];arch=compute_100,code=sm_100");
        let got = for_kernel("mma", mma, Asked::Default, &default, &NVCC13).unwrap();
        assert_eq!(
            show(&got),
            "arch=compute_80,code=[sm_80,compute_80];arch=compute_90,code=sm_90;arch=compute_100,code=sm_100"
        );
        assert_eq!(for_kernel("add", none, Asked::Default, &default, &NVCC13).unwrap(), default);
        // Without the kernel's virtual architecture in the list, its PTX comes first, alone.
        let sass_only = list("arch=compute_75,code=compute_75;arch=compute_100,code=sm_100");
        let got = for_kernel("mma", mma, Asked::Default, &sass_only, &NVCC13).unwrap();
        assert_eq!(show(&got), "arch=compute_80,code=compute_80;arch=compute_100,code=sm_100");
        let e = for_kernel("h", hopper, Asked::Default, &default[..2], &NVCC13).unwrap_err();
        assert!(e.contains("(the default targets, CUPY_NVCC_GENERATE_CODE unset, are all older)"), "{e}");
    }

    #[test]
    fn unset_blank_and_current() {
        assert_eq!(parse(None), Ok(Request::Default));
        assert_eq!(parse(Some("  ")), Ok(Request::Default));
        assert_eq!(parse(Some(" current ")), Ok(Request::Current));
    }

    #[test]
    fn rejects_with_the_reason_and_the_expected_form() {
        let cases = [
            ("sm_90", "starts with `arch=compute_XX`"),
            ("arch=compute_90", "followed by `,code=...`"),
            ("arch=sm_90,code=sm_90", "names a virtual architecture"),
            (
                "arch=compute_90,code=sm_80",
                "sm_80 cannot be built from compute_90",
            ),
            ("arch=compute_80,code=compute_90", "write `code=compute_80`"),
            ("arch=compute_90,code=sm_90a", "differ in the arch-specific suffix"),
            ("arch=compute_90a,code=sm_90", "write `arch=compute_90a,code=sm_90a`"),
            ("arch=compute_90a,code=compute_90", "differ in the arch-specific suffix"),
            ("arch=compute_90a,code=sm_100a", "write `arch=compute_100a,code=sm_100a`"),
            ("arch=compute_90a,code=compute_100a", "write `code=compute_90a`"),
            ("arch=compute_90,code=sm_90b", "is not `sm_XX`, `compute_XX`"),
            ("arch=compute_90aa,code=sm_90", "names a virtual architecture"),
            ("arch=compute_90,code=[sm_90", "no closing `]`"),
            (
                "arch=compute_80,code=sm_80;current",
                "`current` must be the whole value",
            ),
            (";;", "no items"),
        ];
        for (value, why) in cases {
            let e = parse(Some(value)).unwrap_err();
            assert!(e.starts_with("invalid CUPY_NVCC_GENERATE_CODE="), "{e}");
            assert!(e.contains(why), "{value}: {e}");
            assert!(e.contains("arch=compute_90,code=sm_90"), "{e}");
        }
        assert!(
            parse(Some("arch=compute_80,code=sm_80;x"))
                .unwrap_err()
                .contains("item 2 `x`")
        );
    }

    #[test]
    fn default_is_data_centre_sass_plus_ptx_for_the_oldest() {
        let shown = |l: Vec<Gencode>| l.iter().map(Gencode::to_string).collect::<Vec<_>>();
        // nvcc 13.0: sm_80, sm_90, sm_100 of its twelve, and PTX that every GPU from 7.5 on runs.
        let l = default_list(NVCC13.sass, NVCC13.virtual_archs).unwrap();
        assert_eq!(
            shown(l.clone()),
            [
                "arch=compute_75,code=compute_75",
                "arch=compute_80,code=sm_80",
                "arch=compute_90,code=sm_90",
                "arch=compute_100,code=sm_100"
            ]
        );
        assert_eq!(names(&l), ["compute_75", "sm_80", "sm_90", "sm_100"]);
        // Printed back, it parses to the same list: the default is a value one can set.
        assert_eq!(list(&show(&l)), l);
        // Restricted to what this nvcc builds (CUDA 11.8: no sm_100; PTX of compute_35 then).
        assert_eq!(
            shown(default_list(&[90, 35, 80, 86], &[35, 80, 86, 90]).unwrap()),
            ["arch=compute_35,code=compute_35", "arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90"]
        );
        // The oldest virtual architecture is one of the machine code's: one item for both.
        assert_eq!(
            shown(default_list(&[80, 90, 100, 120], &[80, 90, 100, 120]).unwrap()),
            ["arch=compute_80,code=[sm_80,compute_80]", "arch=compute_90,code=sm_90", "arch=compute_100,code=sm_100"]
        );
        // An nvcc that builds none of them: its newest machine code, from the closest older
        // virtual architecture when it has none of its own.
        assert_eq!(
            shown(default_list(&[75, 87], &[75, 80]).unwrap()),
            ["arch=compute_75,code=compute_75", "arch=compute_80,code=sm_87"]
        );
        assert!(default_list(&[], &[80]).is_err());
        assert!(default_list(&[80], &[]).is_err());
    }

    #[test]
    fn current_and_supported() {
        assert_eq!(
            parse_compute_caps("9.0\n9.0\n12.0\n"),
            Ok(vec![90, 90, 120])
        );
        assert!(parse_compute_caps("N/A").is_err());
        let l = current_list(&[90, 90, 120]);
        assert_eq!(names(&l), ["sm_90", "sm_120"]);
        let supported = Supported {
            sass: &[75, 90, 120],
            virtual_archs: &[75, 90, 120],
            ..Supported::default()
        };
        assert!(check_supported(&l, &supported, "x").is_ok());
        let old = Supported { sass: &[75, 90], virtual_archs: &[75, 90], ..Supported::default() };
        let e = check_supported(&list("arch=compute_70,code=sm_70"), &old, "CUPY_NVCC_GENERATE_CODE").unwrap_err();
        assert!(e.contains("asks for compute_70, sm_70 but this nvcc does not support them; it supports sm_75, sm_90"), "{e}");
    }
}

/// `list` without its PTX (`compute_XX`) codes; gencodes left with no code are dropped. A list
/// with no machine code at all is returned as it is (PTX is then the only way to run).
pub fn machine_code_only(list: Vec<Gencode>) -> Vec<Gencode> {
    let sass: Vec<Gencode> = list
        .iter()
        .map(|g| Gencode {
            arch: g.arch,
            codes: g.codes.iter().copied().filter(|c| matches!(c, Code::Sass(_))).collect(),
        })
        .filter(|g| !g.codes.is_empty())
        .collect();
    if sass.is_empty() { list } else { sass }
}

#[cfg(test)]
mod machine_code_tests {
    use super::*;

    #[test]
    fn machine_code_only_drops_ptx_unless_it_is_all_there_is() {
        let g = |arch, codes: &[Code]| Gencode { arch: Arch::plain(arch), codes: codes.to_vec() };
        let (sass, ptx) = (|n| Code::Sass(Arch::plain(n)), |n| Code::Ptx(Arch::plain(n)));
        let list = vec![g(80, &[sass(80)]), g(90, &[sass(90), ptx(90)]), g(100, &[ptx(100)])];
        assert_eq!(machine_code_only(list), vec![g(80, &[sass(80)]), g(90, &[sass(90)])]);
        let ptx = vec![g(90, &[ptx(90)])];
        assert_eq!(machine_code_only(ptx.clone()), ptx);
    }
}
