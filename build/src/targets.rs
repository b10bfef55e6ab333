//! Which GPU architectures the fat binaries hold: `CUPY_NVCC_GENERATE_CODE`.
//!
//! - `arch=compute_XX,code=sm_XX` items separated by `;`: machine code (SASS) for `sm_XX` from the
//!   virtual architecture `compute_XX`; `code=compute_XX` embeds PTX instead (the driver compiles it
//!   for newer GPUs at load time); `code=[sm_XX,compute_XX]` does both.
//! - `current`: SASS for the GPUs of the build machine (`nvidia-smi`).
//! - unset: SASS for every architecture this nvcc supports plus PTX for the newest, so the program
//!   also runs on GPUs newer than the toolkit.
//!
//! Arch-specific targets (`sm_90a`) are not accepted: generated kernels use no such features.

use std::fmt;

/// One target in a fat binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// Machine code for `sm_<N>`.
    Sass(u32),
    /// PTX for `compute_<N>`.
    Ptx(u32),
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Code::Sass(n) => write!(f, "sm_{n}"),
            Code::Ptx(n) => write!(f, "compute_{n}"),
        }
    }
}

/// One `-gencode`: a virtual architecture and what to build from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gencode {
    /// The virtual architecture `compute_<arch>`.
    pub arch: u32,
    /// What to build from it: machine code and/or PTX.
    pub codes: Vec<Code>,
}

impl fmt::Display for Gencode {
    /// nvcc's syntax: `arch=compute_90,code=sm_90` or `arch=compute_90,code=[sm_90,compute_90]`.
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

/// What `CUPY_NVCC_GENERATE_CODE` asks for, before nvcc or the GPUs are consulted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Unset: every SASS architecture of this nvcc plus PTX for the newest.
    Default,
    /// `current`: the GPUs present at build time.
    Current,
    /// An explicit list.
    List(Vec<Gencode>),
}

/// What a valid value looks like, appended to every parse error.
const EXPECTED: &str = "expected `;`-separated items such as `arch=compute_90,code=sm_90` (machine code), \
                        `arch=compute_90,code=compute_90` (PTX) or `arch=compute_90,code=[sm_90,compute_90]`, \
                        or `current` for the GPUs of this machine; unset it to build for every architecture nvcc supports";

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
    let arch = number(arch.trim(), "compute_")
        .ok_or_else(|| format!("`arch={arch}` names a virtual architecture `compute_XX`"))?;
    let code = code.trim();
    let code_list = match code.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or("`code=[` has no closing `]`")?,
        None => code,
    };
    let mut codes = Vec::new();
    for c in code_list.split(',').map(str::trim) {
        let parsed = if let Some(n) = number(c, "sm_") {
            if n < arch {
                return Err(format!(
                    "sm_{n} cannot be built from compute_{arch}: the machine code must be at least the virtual architecture"
                ));
            }
            Code::Sass(n)
        } else if let Some(n) = number(c, "compute_") {
            if n != arch {
                return Err(format!(
                    "PTX is for the virtual architecture itself: write `code=compute_{arch}` (or `arch=compute_{n}`)"
                ));
            }
            Code::Ptx(n)
        } else {
            return Err(format!(
                "`{c}` is not `sm_XX` or `compute_XX` (arch-specific targets such as sm_90a are not supported)"
            ));
        };
        if !codes.contains(&parsed) {
            codes.push(parsed);
        }
    }
    Ok(Gencode { arch, codes })
}

/// `sm_90` with prefix `sm_` -> 90; only digits after the prefix.
fn number(s: &str, prefix: &str) -> Option<u32> {
    let digits = s.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The default list: one `-gencode` per SASS architecture nvcc supports (`sass`), built from the
/// newest virtual architecture not above it (`virtual_archs`), plus PTX for the newest.
pub fn default_list(sass: &[u32], virtual_archs: &[u32]) -> Result<Vec<Gencode>, String> {
    let mut sass = sass.to_vec();
    sass.sort_unstable();
    sass.dedup();
    let newest = *sass
        .last()
        .ok_or("nvcc --list-gpu-code listed no sm_XX architecture")?;
    let mut list = Vec::new();
    for &n in &sass {
        let arch = virtual_archs
            .iter()
            .copied()
            .filter(|&v| v <= n)
            .max()
            .ok_or_else(|| {
                format!("nvcc --list-gpu-arch lists no virtual architecture for sm_{n}")
            })?;
        let mut codes = vec![Code::Sass(n)];
        if n == newest && arch == n {
            codes.push(Code::Ptx(n));
        }
        list.push(Gencode { arch, codes });
    }
    Ok(list)
}

/// The list for `current`: SASS for each GPU's compute capability, once each, in order.
pub fn current_list(capabilities: &[u32]) -> Vec<Gencode> {
    let mut list: Vec<Gencode> = Vec::new();
    for &n in capabilities {
        if !list.iter().any(|g| g.arch == n) {
            list.push(Gencode {
                arch: n,
                codes: vec![Code::Sass(n)],
            });
        }
    }
    list
}

/// Checks that nvcc supports every architecture of `list` (`sass`: its `sm_XX`, `virtual_archs`:
/// its `compute_XX`), so that the error names the variable instead of being nvcc's.
pub fn check_supported(
    list: &[Gencode],
    sass: &[u32],
    virtual_archs: &[u32],
    source: &str,
) -> Result<(), String> {
    let mut bad = Vec::new();
    for g in list {
        if !virtual_archs.contains(&g.arch) {
            bad.push(format!("compute_{}", g.arch));
        }
        for c in &g.codes {
            match c {
                Code::Sass(n) if !sass.contains(n) => bad.push(c.to_string()),
                _ => {}
            }
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    bad.dedup();
    let names: Vec<String> = sass.iter().map(|n| format!("sm_{n}")).collect();
    Err(format!(
        "{source} asks for {} but this nvcc does not support {}; it supports {} (nvcc --list-gpu-code). \
         Choose from those, or use a newer CUDA toolkit",
        bad.join(", "),
        if bad.len() == 1 { "it" } else { "them" },
        names.join(", ")
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
            [Code::Ptx(90)]
        );
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
            ("arch=compute_90,code=sm_90a", "sm_90a are not supported"),
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
    fn default_is_every_sass_plus_ptx_for_the_newest() {
        let l = default_list(&[90, 75, 120, 80], &[75, 80, 90, 120]).unwrap();
        let shown: Vec<String> = l.iter().map(Gencode::to_string).collect();
        assert_eq!(
            shown,
            [
                "arch=compute_75,code=sm_75",
                "arch=compute_80,code=sm_80",
                "arch=compute_90,code=sm_90",
                "arch=compute_120,code=[sm_120,compute_120]"
            ]
        );
        // A SASS target without its own virtual architecture is built from the closest older one.
        assert_eq!(
            default_list(&[80, 87], &[80]).unwrap()[1].to_string(),
            "arch=compute_80,code=sm_87"
        );
        assert!(default_list(&[], &[80]).is_err());
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
        assert!(check_supported(&l, &[75, 90, 120], &[75, 90, 120], "x").is_ok());
        let e = check_supported(
            &list("arch=compute_70,code=sm_70"),
            &[75, 90],
            &[75, 90],
            "CUPY_NVCC_GENERATE_CODE",
        )
        .unwrap_err();
        assert!(e.contains("asks for compute_70, sm_70 but this nvcc does not support them; it supports sm_75, sm_90"), "{e}");
    }
}

/// `list` without its PTX (`compute_XX`) codes; gencodes left with no code are dropped. A list
/// with no machine code at all is returned as it is (PTX is then the only way to run).
pub fn machine_code_only(list: Vec<Gencode>) -> Vec<Gencode> {
    let sass: Vec<Gencode> = list
        .iter()
        .map(|g| Gencode { arch: g.arch, codes: g.codes.iter().copied().filter(|c| matches!(c, Code::Sass(_))).collect() })
        .filter(|g| !g.codes.is_empty())
        .collect();
    if sass.is_empty() { list } else { sass }
}

#[cfg(test)]
mod machine_code_tests {
    use super::*;

    #[test]
    fn machine_code_only_drops_ptx_unless_it_is_all_there_is() {
        let g = |arch, codes: &[Code]| Gencode { arch, codes: codes.to_vec() };
        let list = vec![g(80, &[Code::Sass(80)]), g(90, &[Code::Sass(90), Code::Ptx(90)]), g(100, &[Code::Ptx(100)])];
        assert_eq!(machine_code_only(list), vec![g(80, &[Code::Sass(80)]), g(90, &[Code::Sass(90)])]);
        let ptx = vec![g(90, &[Code::Ptx(90)])];
        assert_eq!(machine_code_only(ptx.clone()), ptx);
    }
}
