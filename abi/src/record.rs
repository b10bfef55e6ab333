//! The audit record of an embedded unit: what a program carries for one kernel file, written
//! into the program's data so that `cuprum audit EXECUTABLE` can list it without running the
//! program (and without a GPU).
//!
//! The macro of a file's owner kernel embeds the unit (`registry::KernelUnit`) and, referenced
//! from it, this record ([`encode`]): the linker keeps the record exactly when it keeps the unit.
//! `cuprum audit` reads the executable's bytes and finds every record by its magic ([`find_all`]).
//!
//! # Format, version 1
//!
//! ```text
//! CUPRUM-UNIT-v1\0            the magic: MAGIC_PREFIX, the format version in decimal, a NUL
//! 0000012f\n                  the text's length in bytes, 8 lowercase hex digits, a newline
//! id 3f2a...                  the text (UTF-8): one `key value` line each
//! file runtime/kernels/elementwise.rs
//! targets sm_90 compute_90    (empty value: none listed)
//! fatbin_bytes 84016          (`fatbin_bytes none`: no fat binary in this build)
//! build cuprum-build 1        one `build` line per line of the build record (none: no record)
//! build status compiled
//! kernel elementwise add      a kernel: its kind and Rust name
//! instance cuprum_elementwise_add__f32__contiguous
//!                             its precompiled entry points, one line each
//! end
//! ```
//!
//! Values escape `\` as `\\` and a newline as `\n`. Readers skip lines of keys they do not know
//! (a later version 1 writer may add some); a change that old readers would misread takes a new
//! version number, which they report instead of reading.

use std::fmt;

/// What every record starts with, before the version number.
pub const MAGIC_PREFIX: &[u8] = b"CUPRUM-UNIT-v";

/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;

/// The largest text a reader accepts (a guard against reading a damaged length).
const MAX_TEXT: usize = 64 << 20;

/// One embedded unit, as its record describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnitRecord {
    /// The unit id (`mangle::unit_id` of its CUDA C).
    pub id: String,
    /// The kernel file, as the build named it.
    pub file: String,
    /// The targets of the fat binary (`sm_90`, `compute_90`), as the build listed them.
    pub targets: Vec<String>,
    /// The embedded fat binary's size; `None`: the program has no fat binary for the unit.
    pub fatbin_bytes: Option<u64>,
    /// The build record (`cuprum/<id>.build`) verbatim; empty when the build made none.
    pub build: String,
    /// The file's kernels, in the unit's order.
    pub kernels: Vec<KernelRecord>,
}

/// One kernel of a unit and its precompiled entry points.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelRecord {
    /// `rawkernel`, `elementwise` or `reduction` ([`crate::KernelKind::name`]).
    pub kind: String,
    /// The kernel's Rust name.
    pub name: String,
    /// The symbols of its precompiled entry points.
    pub instances: Vec<String>,
}

/// Why bytes that start with [`MAGIC_PREFIX`] are not a record this crate reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// Not the magic, a version and a NUL.
    NotARecord,
    /// A record of another format version.
    Version(u32),
    /// The bytes end before the record does.
    Truncated,
    /// The length line is not 8 hex digits and a newline, or too large.
    BadLength,
    /// The text is not UTF-8.
    NotUtf8,
    /// A line of the text is not what the format says (its number, from 1, and why).
    BadLine(usize, String),
    /// No `end` line, or a required key is missing.
    Incomplete(&'static str),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::NotARecord => f.write_str("not a unit record"),
            RecordError::Version(v) => write!(
                f,
                "a unit record of format version {v}, this cuprum reads version {VERSION} (audit it with the cuprum that built it)"
            ),
            RecordError::Truncated => f.write_str("the record is truncated"),
            RecordError::BadLength => f.write_str("the record's length is damaged"),
            RecordError::NotUtf8 => f.write_str("the record's text is not UTF-8"),
            RecordError::BadLine(n, why) => write!(f, "line {n} of the record: {why}"),
            RecordError::Incomplete(what) => write!(f, "the record is incomplete: {what}"),
        }
    }
}

impl std::error::Error for RecordError {}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\n', "\\n").replace('\r', "\\r")
}

fn unescape(value: &str) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

/// The record of `unit`, as a program embeds it (the magic, the length, the text).
pub fn encode(unit: &UnitRecord) -> Vec<u8> {
    use fmt::Write;
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "id {}", escape(&unit.id));
    let _ = writeln!(text, "file {}", escape(&unit.file));
    let targets: Vec<String> = unit.targets.iter().map(|t| escape(t)).collect();
    let _ = writeln!(text, "targets {}", targets.join(" "));
    match unit.fatbin_bytes {
        Some(n) => {
            let _ = writeln!(text, "fatbin_bytes {n}");
        }
        None => text.push_str("fatbin_bytes none\n"),
    }
    for line in unit.build.lines() {
        let _ = writeln!(text, "build {}", escape(line));
    }
    for k in &unit.kernels {
        let _ = writeln!(text, "kernel {} {}", escape(&k.kind), escape(&k.name));
        for s in &k.instances {
            let _ = writeln!(text, "instance {}", escape(s));
        }
    }
    text.push_str("end\n");
    let mut out = Vec::with_capacity(MAGIC_PREFIX.len() + 12 + text.len());
    out.extend_from_slice(MAGIC_PREFIX);
    out.extend_from_slice(format!("{VERSION}\0{:08x}\n", text.len()).as_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// The version number after [`MAGIC_PREFIX`] at the start of `bytes`, and where the length
/// starts; `None` when `bytes` does not start with the magic, digits and a NUL.
fn header(bytes: &[u8]) -> Option<(u32, usize)> {
    let rest = bytes.strip_prefix(MAGIC_PREFIX)?;
    let digits = rest.iter().take(10).take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&0) {
        return None;
    }
    let version = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some((version, MAGIC_PREFIX.len() + digits + 1))
}

/// The record at the start of `bytes` and its length in bytes.
pub fn decode(bytes: &[u8]) -> Result<(UnitRecord, usize), RecordError> {
    let (version, at) = header(bytes).ok_or(RecordError::NotARecord)?;
    if version != VERSION {
        return Err(RecordError::Version(version));
    }
    let len_line = bytes.get(at..at + 9).ok_or(RecordError::Truncated)?;
    if len_line[8] != b'\n' || !len_line[..8].iter().all(u8::is_ascii_hexdigit) {
        return Err(RecordError::BadLength);
    }
    let len = std::str::from_utf8(&len_line[..8])
        .ok()
        .and_then(|s| usize::from_str_radix(s, 16).ok())
        .filter(|&n| n <= MAX_TEXT)
        .ok_or(RecordError::BadLength)?;
    let start = at + 9;
    let text = bytes.get(start..start + len).ok_or(RecordError::Truncated)?;
    let text = std::str::from_utf8(text).map_err(|_| RecordError::NotUtf8)?;
    Ok((parse_text(text)?, start + len))
}

fn parse_text(text: &str) -> Result<UnitRecord, RecordError> {
    let mut unit = UnitRecord::default();
    let (mut id, mut file, mut fatbin, mut end) = (false, false, false, false);
    let mut build = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if end {
            return Err(RecordError::BadLine(n, "text after `end`".into()));
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = || unescape(value).ok_or_else(|| RecordError::BadLine(n, "a bad escape".into()));
        match key {
            "id" => (unit.id, id) = (value()?, true),
            "file" => (unit.file, file) = (value()?, true),
            "targets" => {
                unit.targets = value()?.split_whitespace().map(String::from).collect();
            }
            "fatbin_bytes" => {
                let v = value()?;
                unit.fatbin_bytes = match v.as_str() {
                    "none" => None,
                    v => Some(v.parse().map_err(|_| RecordError::BadLine(n, format!("fatbin_bytes `{v}`")))?),
                };
                fatbin = true;
            }
            "build" => build.push(value()?),
            "kernel" => {
                let v = value()?;
                let (kind, name) = v
                    .split_once(' ')
                    .filter(|(k, n)| !k.is_empty() && !n.is_empty())
                    .ok_or_else(|| RecordError::BadLine(n, "a kernel line without kind and name".into()))?;
                unit.kernels.push(KernelRecord { kind: kind.into(), name: name.into(), instances: Vec::new() });
            }
            "instance" => {
                let kernel = unit
                    .kernels
                    .last_mut()
                    .ok_or_else(|| RecordError::BadLine(n, "an instance before any kernel".into()))?;
                kernel.instances.push(value()?);
            }
            "end" => end = true,
            _ => {}
        }
    }
    if !end {
        return Err(RecordError::Incomplete("no `end` line"));
    }
    if !(id && file && fatbin) {
        return Err(RecordError::Incomplete("`id`, `file` or `fatbin_bytes` is missing"));
    }
    if !build.is_empty() {
        unit.build = build.join("\n") + "\n";
    }
    Ok(unit)
}

/// A place in a file where a record starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its byte offset in the file.
    pub offset: usize,
    /// The record, or why it cannot be read.
    pub record: Result<UnitRecord, RecordError>,
}

/// Every record in `bytes` (an executable or a library), in the order of their offsets: each
/// place that starts with the magic, a version number and a NUL. Bytes that start with
/// [`MAGIC_PREFIX`] but not with a version and a NUL (the reader's own constant in a program that
/// links this crate's reader) are skipped.
pub fn find_all(bytes: &[u8]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut at = 0;
    let first = MAGIC_PREFIX[0];
    while let Some(k) = bytes[at..].iter().position(|&b| b == first) {
        let offset = at + k;
        at = offset + 1;
        if !bytes[offset..].starts_with(MAGIC_PREFIX) || header(&bytes[offset..]).is_none() {
            continue;
        }
        let record = decode(&bytes[offset..]).map(|(r, len)| {
            at = offset + len;
            r
        });
        found.push(Found { offset, record });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UnitRecord {
        UnitRecord {
            id: "3f2a00ff".into(),
            file: "kernels/odd name\\with\nnewline.rs".into(),
            targets: vec!["sm_80".into(), "sm_90".into(), "compute_90".into()],
            fatbin_bytes: Some(84016),
            build: "cuprum-build 1\nstatus compiled\ntargets sm_80 sm_90 compute_90\n".into(),
            kernels: vec![
                KernelRecord {
                    kind: "elementwise".into(),
                    name: "add".into(),
                    instances: vec!["cuprum_elementwise_add__f32".into(), "cuprum_elementwise_add__f64".into()],
                },
                KernelRecord { kind: "rawkernel".into(), name: "generic".into(), instances: Vec::new() },
            ],
        }
    }

    #[test]
    fn a_record_round_trips() {
        let unit = sample();
        let bytes = encode(&unit);
        assert!(bytes.starts_with(b"CUPRUM-UNIT-v1\0"));
        assert_eq!(decode(&bytes), Ok((unit.clone(), bytes.len())));
        let bare = UnitRecord { id: "00".into(), file: "k.rs".into(), ..UnitRecord::default() };
        let bytes = encode(&bare);
        assert_eq!(decode(&bytes).unwrap().0, bare);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("\nfatbin_bytes none\n") && text.ends_with("end\n"), "{text}");
    }

    #[test]
    fn records_are_found_among_other_bytes() {
        let a = sample();
        let b = UnitRecord { id: "01".into(), file: "b.rs".into(), fatbin_bytes: None, ..UnitRecord::default() };
        let mut file = b"\x7fELF junk CUPRUM-UNIT-v and CUPRUM-UNIT-vx\0 ".to_vec();
        file.extend_from_slice(&encode(&a));
        file.extend_from_slice(b"\0\0");
        let at_b = file.len();
        file.extend_from_slice(&encode(&b));
        file.extend_from_slice(MAGIC_PREFIX);
        let found = find_all(&file);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].record, Ok(a));
        assert_eq!(found[1], Found { offset: at_b, record: Ok(b) });
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let bytes = encode(&sample());
        // Every truncation, and every byte flipped: an error or a record, never a panic.
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "truncated to {n}");
            let _ = find_all(&bytes[..n]);
            let mut flipped = bytes.clone();
            flipped[n] ^= 0x55;
            let _ = decode(&flipped);
            let _ = find_all(&flipped);
        }
        let v2 = [b"CUPRUM-UNIT-v2\0".as_slice(), &bytes[15..]].concat();
        assert_eq!(decode(&v2), Err(RecordError::Version(2)));
        assert!(decode(&v2).unwrap_err().to_string().contains("format version 2"));
        assert_eq!(decode(b"CUPRUM-UNIT-v1\0zzzzzzzz\n"), Err(RecordError::BadLength));
        assert_eq!(decode(b"CUPRUM-UNIT-v1\0ffffffff\n"), Err(RecordError::BadLength));
        assert_eq!(decode(b"CUPRUM-UNIT-v1\x0000000010\nid 1\n"), Err(RecordError::Truncated));
        let text = "id 1\nfile a.rs\nfatbin_bytes 3\n";
        let no_end = [b"CUPRUM-UNIT-v1\0".as_slice(), format!("{:08x}\n{text}", text.len()).as_bytes()].concat();
        assert_eq!(decode(&no_end), Err(RecordError::Incomplete("no `end` line")));
        let text = "id 1\nfile a.rs\nfatbin_bytes 3\ninstance orphan\nend\n";
        let orphan = [b"CUPRUM-UNIT-v1\0".as_slice(), format!("{:08x}\n{text}", text.len()).as_bytes()].concat();
        assert!(matches!(decode(&orphan), Err(RecordError::BadLine(4, _))));
        // Unknown keys are skipped (a later writer of version 1 may add some).
        let text = "id 1\nfile a.rs\nfuture key\nfatbin_bytes 3\nend\n";
        let later = [b"CUPRUM-UNIT-v1\0".as_slice(), format!("{:08x}\n{text}", text.len()).as_bytes()].concat();
        assert_eq!(decode(&later).unwrap().0.fatbin_bytes, Some(3));
        assert_eq!(decode(b"CUPRUM"), Err(RecordError::NotARecord));
    }
}
