//! The tuning file: which candidate configuration each tuned launch site takes on one GPU
//! architecture, as measured by a tuning run (docs/tuning.md).
//!
//! One file per architecture, `tuning/<arch>.toml` (`sm_90.toml`), written by the tuner (the
//! runtime's `tuning::tune`, `cuprum tune`), checked and embedded by the build (cuprum-build's
//! `Tuning`), read by the runtime at a site's first launch. A small subset of TOML, so that
//! people and TOML tools read it:
//!
//! ```text
//! # cuprum tuning file (docs/tuning.md): written by `cuprum tune` on NVIDIA H200.
//! format = 1
//! arch = "sm_90"
//! device = "NVIDIA H200"
//!
//! [reduce_full]
//! candidates = ["b256_w4", "b256_w2", "b128_w4"]
//! large = "b256_w2"  # median ms: b256_w4 0.5210, b256_w2 0.5120, b128_w4 0.5302
//! small = "b256_w4"
//! ```
//!
//! - `format` (required, first value): 1. `arch` (required): the file's architecture, the same as
//!   its name. `device` (optional): the GPU the measurements come from.
//! - One `[site]` table per tuned launch site, `candidates` first (the site's candidate names, in
//!   the site's order: a file whose list differs from the program's is stale), then one
//!   `key = "candidate"` line per problem class the site distinguishes. A comment after a choice
//!   is kept as its note (the tuner writes the measured medians there).
//! - Names (sites, keys, candidates) are TOML bare keys: ASCII letters, digits, `_` and `-`.
//!
//! [`parse`] reads a file and [`TuningFile::write`] writes one; `parse(&f.write()) == Ok(f)`.

use std::fmt;

/// The one format version this module reads and writes.
pub const FORMAT: u32 = 1;

/// A tuning file: the choices of every tuned site on one architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningFile {
    /// The architecture, `sm_XY` (`sm_90`): the file's name without `.toml`.
    pub arch: String,
    /// The GPU the measurements were taken on (its name), if recorded.
    pub device: Option<String>,
    /// The tuned sites, in the file's order (names unique).
    pub sites: Vec<SiteChoices>,
}

/// One site's table: its candidates and the choice for each key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteChoices {
    /// The site's name (`reduce_full`).
    pub name: String,
    /// The site's candidate names when it was tuned, in the site's order (non-empty, unique).
    pub candidates: Vec<String>,
    /// The choice per key, in the file's order (keys unique, each choice one of `candidates`).
    pub choices: Vec<Choice>,
}

/// The measured best candidate for one key of a site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The problem class (`large`).
    pub key: String,
    /// The chosen candidate's name.
    pub candidate: String,
    /// The comment after the choice (the tuner writes the measured medians), if any.
    pub note: Option<String>,
}

/// A mistake in a tuning file: the line (1-based; 0: the file as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line of the mistake, 1-based; 0 for a mistake of the whole file (a missing value).
    pub line: usize,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 { write!(f, "{}", self.message) } else { write!(f, "line {}: {}", self.line, self.message) }
    }
}

impl std::error::Error for ParseError {}

/// The file name of `arch`'s tuning file (`sm_90` -> `sm_90.toml`).
pub fn file_name(arch: &str) -> String {
    format!("{arch}.toml")
}

/// The architecture name of a compute capability (`(9, 0)` -> `sm_90`).
pub fn arch_name(major: u32, minor: u32) -> String {
    format!("sm_{major}{minor}")
}

/// Whether `name` is a TOML bare key (ASCII letters, digits, `_`, `-`; not empty): the names of
/// sites, keys and candidates.
pub fn is_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_arch(arch: &str) -> bool {
    arch.strip_prefix("sm_").is_some_and(|d| !d.is_empty() && d.len() <= 4 && d.bytes().all(|b| b.is_ascii_digit()))
}

impl TuningFile {
    /// The site named `name`, if the file has it.
    pub fn site(&self, name: &str) -> Option<&SiteChoices> {
        self.sites.iter().find(|s| s.name == name)
    }

    /// The file's text (format 1), which [`parse`] reads back to `self`.
    ///
    /// # Panics
    ///
    /// If `self` breaks the rules [`parse`] checks (a name that is not a bare key, a choice not
    /// among the candidates, ...): build files with the tuner or check them with [`parse`].
    pub fn write(&self) -> String {
        if let Err(e) = self.check() {
            panic!("cuprum_abi::tuning: cannot write an invalid tuning file: {e}");
        }
        let mut s = String::new();
        s.push_str("# cuprum tuning file (docs/tuning.md): the measured best launch configuration of each\n");
        s.push_str("# tuned site on this architecture. The build embeds it; rerun the tuner to refresh it.\n");
        s.push_str(&format!("format = {FORMAT}\narch = {}\n", quote(&self.arch)));
        if let Some(d) = &self.device {
            s.push_str(&format!("device = {}\n", quote(d)));
        }
        for site in &self.sites {
            s.push_str(&format!("\n[{}]\ncandidates = [", site.name));
            for (k, c) in site.candidates.iter().enumerate() {
                s.push_str(if k == 0 { "" } else { ", " });
                s.push_str(&quote(c));
            }
            s.push_str("]\n");
            for c in &site.choices {
                s.push_str(&format!("{} = {}", c.key, quote(&c.candidate)));
                if let Some(n) = &c.note {
                    s.push_str("  # ");
                    s.push_str(n);
                }
                s.push('\n');
            }
        }
        s
    }

    /// Checks the rules [`parse`] enforces on a file built in memory.
    pub fn check(&self) -> Result<(), ParseError> {
        parse(&self.write_unchecked()).map(|_| ())
    }

    fn write_unchecked(&self) -> String {
        let mut s = format!("format = {FORMAT}\narch = {}\n", quote(&self.arch));
        if let Some(d) = &self.device {
            s.push_str(&format!("device = {}\n", quote(d)));
        }
        for site in &self.sites {
            s.push_str(&format!("[{}]\ncandidates = [{}]\n", site.name, site.candidates.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ")));
            for c in &site.choices {
                s.push_str(&format!("{} = {}", c.key, quote(&c.candidate)));
                if let Some(n) = &c.note {
                    s.push_str(" # ");
                    s.push_str(n);
                }
                s.push('\n');
            }
        }
        s
    }
}

/// A TOML basic string of `s` (`"`, `\` and control characters escaped).
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if c.is_control() => q.push_str(&format!("\\u{:04X}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Reads a TOML basic string at the start of `s`: its value and the rest after the closing quote.
fn unquote(s: &str) -> Result<(String, &str), String> {
    let Some(body) = s.strip_prefix('"') else {
        return Err(format!("expected a string in double quotes, found `{s}`"));
    };
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, ch)) = chars.next() {
        match ch {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => match chars.next() {
                Some((_, '"')) => out.push('"'),
                Some((_, '\\')) => out.push('\\'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((j, 'u')) => {
                    let hex = body.get(j + 1..j + 5).ok_or("a `\\u` escape needs four hex digits")?;
                    let c = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).ok_or(format!("`\\u{hex}` is not a character"))?;
                    out.push(c);
                    for _ in 0..4 {
                        chars.next();
                    }
                }
                _ => return Err("unknown escape in a string (the file uses only \\\" \\\\ \\n \\t \\uXXXX)".into()),
            },
            c => out.push(c),
        }
    }
    Err("a string without its closing `\"`".into())
}

/// The rest of a line after a value: empty, or a comment (returned without `#` and the spaces
/// around it).
fn trailing(rest: &str) -> Result<Option<String>, String> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(None);
    }
    match rest.strip_prefix('#') {
        Some(c) => Ok(Some(c.trim().to_string())),
        None => Err(format!("unexpected `{rest}` after the value (one `key = value` per line; comments start with `#`)")),
    }
}

/// Reads a tuning file (format 1), checking every rule of the module's documentation.
pub fn parse(text: &str) -> Result<TuningFile, ParseError> {
    let mut format = None;
    let mut arch: Option<String> = None;
    let mut device = None;
    let mut sites: Vec<SiteChoices> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let err = |message: String| ParseError { line, message };
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(head) = l.strip_prefix('[') {
            let Some((name, rest)) = head.split_once(']') else {
                return Err(err(format!("`{l}`: a table header is `[site_name]`")));
            };
            let name = name.trim();
            if !is_name(name) {
                return Err(err(format!("`[{name}]`: a site name is letters, digits, `_` and `-`")));
            }
            trailing(rest).map_err(err)?;
            if format.is_none() || arch.is_none() {
                return Err(err("`format` and `arch` come before the first `[site]` table".into()));
            }
            if sites.iter().any(|s| s.name == name) {
                return Err(err(format!("site `{name}` appears twice; keep one `[{name}]` table")));
            }
            sites.push(SiteChoices { name: name.to_string(), candidates: Vec::new(), choices: Vec::new() });
            continue;
        }
        let Some((key, value)) = l.split_once('=') else {
            return Err(err(format!("`{l}` is not `key = value`")));
        };
        let (key, value) = (key.trim(), value.trim());
        if !is_name(key) {
            return Err(err(format!("`{key}`: a key is letters, digits, `_` and `-`")));
        }
        match sites.last_mut() {
            None => match key {
                "format" => {
                    let num = value.split_once('#').map_or(value, |(a, _)| a.trim());
                    let v: u32 = num.parse().map_err(|_| err(format!("`format = {num}`: the format is a number")))?;
                    if v != FORMAT {
                        return Err(err(format!("format {v}: this cuprum reads format {FORMAT}; rerun the tuner to rewrite the file")));
                    }
                    if format.replace(v).is_some() {
                        return Err(err("`format` is given twice".into()));
                    }
                }
                "arch" | "device" => {
                    if format.is_none() {
                        return Err(err("`format = 1` comes first".into()));
                    }
                    let (v, rest) = unquote(value).map_err(err)?;
                    trailing(rest).map_err(err)?;
                    if key == "arch" {
                        if !is_arch(&v) {
                            return Err(err(format!("arch `{v}`: an architecture is `sm_` and its digits (`sm_90`)")));
                        }
                        if arch.replace(v).is_some() {
                            return Err(err("`arch` is given twice".into()));
                        }
                    } else if device.replace(v).is_some() {
                        return Err(err("`device` is given twice".into()));
                    }
                }
                _ => return Err(err(format!("unknown key `{key}` before the first `[site]` (known: format, arch, device)"))),
            },
            Some(site) => {
                if key == "candidates" {
                    if !site.candidates.is_empty() || !site.choices.is_empty() {
                        return Err(err(format!("`candidates` of `[{}]` must come once, before its choices", site.name)));
                    }
                    let Some(mut rest) = value.strip_prefix('[') else {
                        return Err(err("`candidates` is a list of strings: `[\"a\", \"b\"]`".into()));
                    };
                    loop {
                        rest = rest.trim_start();
                        if let Some(r) = rest.strip_prefix(']') {
                            trailing(r).map_err(err)?;
                            break;
                        }
                        let (c, r) = unquote(rest).map_err(err)?;
                        if !is_name(&c) {
                            return Err(err(format!("candidate `{c}`: a name is letters, digits, `_` and `-`")));
                        }
                        if site.candidates.contains(&c) {
                            return Err(err(format!("candidate `{c}` is listed twice")));
                        }
                        site.candidates.push(c);
                        rest = r.trim_start();
                        if let Some(r) = rest.strip_prefix(',') {
                            rest = r;
                        } else if !rest.starts_with(']') {
                            return Err(err("candidates are separated by `,` and the list ends with `]` on the same line".into()));
                        }
                    }
                    if site.candidates.is_empty() {
                        return Err(err(format!("`[{}]` lists no candidates", site.name)));
                    }
                } else {
                    if site.candidates.is_empty() {
                        return Err(err(format!("`candidates = [...]` comes first in `[{}]`", site.name)));
                    }
                    let (c, rest) = unquote(value).map_err(err)?;
                    let note = trailing(rest).map_err(err)?;
                    if !site.candidates.contains(&c) {
                        return Err(err(format!(
                            "`{key} = \"{c}\"`: `{c}` is not a candidate of `[{}]` ({})",
                            site.name,
                            site.candidates.join(", ")
                        )));
                    }
                    if site.choices.iter().any(|x| x.key == key) {
                        return Err(err(format!("key `{key}` of `[{}]` is given twice", site.name)));
                    }
                    site.choices.push(Choice { key: key.to_string(), candidate: c, note });
                }
            }
        }
    }
    let whole = |message: &str| ParseError { line: 0, message: message.to_string() };
    if format.is_none() {
        return Err(whole("no `format = 1` line: not a cuprum tuning file"));
    }
    let Some(arch) = arch else {
        return Err(whole("no `arch = \"sm_XY\"` line"));
    };
    if let Some(s) = sites.iter().find(|s| s.candidates.is_empty()) {
        return Err(whole(&format!("`[{}]` has no `candidates = [...]`", s.name)));
    }
    Ok(TuningFile { arch, device, sites })
}

/// Reads the tuning file named `file_name` (`sm_90.toml`): [`parse`], and the file's `arch` must
/// be its name's.
pub fn parse_named(file_name: &str, text: &str) -> Result<TuningFile, ParseError> {
    let f = parse(text)?;
    let stem = file_name.strip_suffix(".toml").unwrap_or(file_name);
    if f.arch != stem {
        return Err(ParseError {
            line: 0,
            message: format!("the file says `arch = \"{}\"` but is named `{file_name}`; name it `{}`", f.arch, self::file_name(&f.arch)),
        });
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TuningFile {
        TuningFile {
            arch: "sm_90".into(),
            device: Some("NVIDIA H200 \"SXM\"".into()),
            sites: vec![
                SiteChoices {
                    name: "reduce_full".into(),
                    candidates: vec!["b256_w4".into(), "b256_w2".into(), "b128_w4".into()],
                    choices: vec![
                        Choice { key: "large".into(), candidate: "b256_w2".into(), note: Some("median ms: b256_w4 0.5210, b256_w2 0.5120".into()) },
                        Choice { key: "small".into(), candidate: "b256_w4".into(), note: None },
                    ],
                },
                SiteChoices { name: "gemm-wgmma".into(), candidates: vec!["sms".into()], choices: vec![] },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let f = sample();
        let text = f.write();
        assert_eq!(parse(&text), Ok(f.clone()));
        assert_eq!(parse(&text).unwrap().write(), text);
        assert_eq!(parse_named("sm_90.toml", &text), Ok(f));
    }

    #[test]
    fn reads_hand_written_toml() {
        let text = "# hi\nformat = 1 # v\n arch = \"sm_80\"  \n\n[s]  # site\ncandidates = [ \"a\",\"b\" , ]\nk1 = \"b\"#fast\n";
        let f = parse(text).unwrap();
        assert_eq!(f.arch, "sm_80");
        assert_eq!(f.device, None);
        let s = f.site("s").unwrap();
        assert_eq!(s.candidates, ["a", "b"]);
        assert_eq!(s.choices, [Choice { key: "k1".into(), candidate: "b".into(), note: Some("fast".into()) }]);
    }

    #[test]
    fn mistakes_name_their_line() {
        let head = "format = 1\narch = \"sm_90\"\n";
        let cases: &[(&str, usize, &str)] = &[
            ("format = 2\narch = \"sm_90\"\n", 1, "reads format 1"),
            ("arch = \"sm_90\"\n", 1, "comes first"),
            ("format = 1\narch = \"gfx90\"\n", 2, "`sm_`"),
            ("format = 1\n", 0, "no `arch"),
            ("", 0, "not a cuprum tuning file"),
            ("format = 1\narch = \"sm_90\"\nspeed = 3\n", 3, "unknown key `speed`"),
            ("format = 1\narch = \"sm_90\"\nfoo\n", 3, "not `key = value`"),
        ];
        for (text, line, want) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
        let site_cases: &[(&str, usize, &str)] = &[
            ("[s]\nk = \"a\"\n", 4, "comes first"),
            ("[s]\ncandidates = [\"a\"]\nk = \"z\"\n", 5, "not a candidate of `[s]` (a)"),
            ("[s]\ncandidates = [\"a\"]\nk = \"a\"\nk = \"a\"\n", 6, "given twice"),
            ("[s]\ncandidates = [\"a\", \"a\"]\n", 4, "listed twice"),
            ("[s]\ncandidates = []\n", 4, "no candidates"),
            ("[s]\ncandidates = [\"a\"]\n[s]\ncandidates = [\"a\"]\n", 5, "appears twice"),
            ("[s t]\n", 3, "site name"),
            ("[s]\ncandidates = [\"a\"]\nk = \"a\" x\n", 5, "after the value"),
            ("[s]\ncandidates = [\"a\"]\nk = \"a\n", 5, "closing"),
            ("[s]\ncandidates = [\"a\" \"b\"]\n", 4, "separated by `,`"),
            ("[s]\n", 0, "has no `candidates"),
        ];
        for (body, line, want) in site_cases {
            let text = format!("{head}{body}");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_name_must_match_the_arch() {
        let text = sample().write();
        let e = parse_named("sm_80.toml", &text).unwrap_err();
        assert!(e.message.contains("name it `sm_90.toml`"), "{e}");
    }

    #[test]
    #[should_panic(expected = "not a candidate")]
    fn writing_an_invalid_file_panics() {
        let mut f = sample();
        f.sites[0].choices[0].candidate = "b512_w1".into();
        f.write();
    }

    #[test]
    fn names() {
        assert_eq!(arch_name(9, 0), "sm_90");
        assert_eq!(file_name("sm_90"), "sm_90.toml");
        assert!(is_name("b256_w4") && is_name("n-2") && !is_name("") && !is_name("a b") && !is_name("a.b"));
    }
}
