//! `#line` directives: which line of the Rust kernel file each line of a generated unit comes
//! from, so that nvcc's and NVRTC's `-lineinfo` line tables (Nsight Compute, compute-sanitizer,
//! cuda-gdb) and their messages name Rust lines (docs/debugging.md).
//!
//! The [`Writer`](super::Writer) marks every line it writes for a Rust statement (or a function's
//! header and closing brace) with that statement's line: an invisible marker after the line's indentation
//! (`mark`). `resolve` removes the markers from the whole unit and, given a [`LineSource`],
//! puts a directive before each line the preprocessor would otherwise number wrongly: `#line 12
//! "src/kernels.rs"` before the code of line 12, and before generated code that follows Rust code
//! a directive back to the unit itself, `#line 80 "src/kernels.rs (generated CUDA C)"` (line 80 of
//! the unit as `cuprum emit` prints it), so that an nvcc message about cuprum's own glue never
//! points at a Rust line. Without a source the markers are only removed, and the text is the unit
//! without directives, byte for byte: [`cuprum_abi::unit::without_line_directives`] of a unit with
//! directives gives the unit without them.
//!
//! Lines are read from the spans of a file parsed outside a procedural macro (the build crate,
//! `cuprum emit`): proc-macro2's `span-locations`. Inside a macro the compiler's spans of text
//! parsed from a string all point at the macro call, so the macros never write directives; they
//! embed the unit the build crate wrote instead (`expand/unit.rs`).

use std::path::{Component, Path};

use proc_macro2::Span;

/// Where a file's code comes from: the name its `#line` directives give ([`source_name`]) and a
/// span of the parsed file, against which a node's span is checked to be the user's text (nodes
/// the compiler made, such as `#[fuse]`'s generated statements, have spans of no file).
#[derive(Debug, Clone)]
pub struct LineSource {
    name: String,
    anchor: Span,
}

impl LineSource {
    /// A source named `name` whose parsed text includes `anchor`.
    pub fn new(name: impl Into<String>, anchor: Span) -> Self {
        LineSource { name: name.into(), anchor }
    }

    /// The line (1-based) of `span` in the file, `None` when the span is not of the file's text.
    pub fn line_of(&self, span: Span) -> Option<u32> {
        span.join(self.anchor)?;
        let line = span.start().line;
        (line > 0).then(|| u32::try_from(line).ok()).flatten()
    }

    /// The line where `span` ends, `None` when the span is not of the file's text.
    pub fn end_line_of(&self, span: Span) -> Option<u32> {
        span.join(self.anchor)?;
        let line = span.end().line;
        (line > 0).then(|| u32::try_from(line).ok()).flatten()
    }
}

/// The name a kernel file goes by in `#line` directives: its path relative to its package's root
/// (the nearest folder above it with a `Cargo.toml`), `/`-separated (`src/kernels.rs`,
/// `kernels/elementwise.rs`), so that it is the same in every checkout, on every machine and
/// whichever crate includes the file; the file's name alone when no folder above it has a
/// `Cargo.toml`.
pub fn source_name(path: &Path) -> String {
    let absolute = std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf());
    let relative = absolute
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("Cargo.toml").is_file())
        .and_then(|root| absolute.strip_prefix(root).ok());
    match relative {
        Some(rel) => {
            let parts: Vec<String> = rel
                .components()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect();
            parts.join("/")
        }
        None => absolute.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string()),
    }
}

/// Starts and ends a marker: control characters no generated line holds (C strings are written
/// with them escaped, `c_string`).
const OPEN: char = '\u{2}';
const CLOSE: char = '\u{3}';

/// The marker that attributes the line it starts to Rust line `line`.
pub(crate) fn mark(line: u32) -> String {
    format!("{OPEN}{line}{CLOSE}")
}

/// The unit `text` without its markers, with directives when `source` is given (the module docs).
pub(crate) fn resolve(text: &str, source: Option<&LineSource>) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    // What the preprocessor gives the next line: a Rust line, or a line of the unit (in step with
    // `out` while no directive has moved it).
    #[derive(PartialEq)]
    enum Next {
        Rust(u32),
        Unit(usize),
    }
    let mut next = Next::Unit(1);
    let mut written = 0usize;
    let mut continued = false;
    for raw in text.split_inclusive('\n') {
        let (line, want) = unmark(raw);
        // A blank line holds no code: whatever line it gets, the next line is checked again.
        if let Some(source) = source
            && !continued
            && !line.trim().is_empty()
        {
            let want = match want {
                Some(l) => Next::Rust(l),
                None => Next::Unit(written + 1),
            };
            if next != want {
                match want {
                    Next::Rust(l) => {
                        out.push_str(&format!("{}{l} {}\n", cuprum_abi::unit::LINE_DIRECTIVE, c_quoted(&source.name)));
                        next = Next::Rust(l);
                    }
                    Next::Unit(_) => {
                        // The directive is line `written + 1`; the line after it `written + 2`.
                        let generated = format!("{} (generated CUDA C)", source.name);
                        out.push_str(&format!("{}{} {}\n", cuprum_abi::unit::LINE_DIRECTIVE, written + 2, c_quoted(&generated)));
                        next = Next::Unit(written + 2);
                    }
                }
                written += 1;
            }
        }
        // A directive never goes between the lines of a macro definition continued with `\`.
        continued = line.trim_end_matches(['\n', '\r']).ends_with('\\');
        out.push_str(&line);
        written += 1;
        next = match next {
            Next::Rust(l) => Next::Rust(l + 1),
            Next::Unit(n) => Next::Unit(n + 1),
        };
    }
    out
}

/// `raw` without markers, and the line its first marker names.
fn unmark(raw: &str) -> (String, Option<u32>) {
    if !raw.contains(OPEN) {
        return (raw.to_string(), None);
    }
    let mut line = String::with_capacity(raw.len());
    let mut first = None;
    let mut rest = raw;
    while let Some(at) = rest.find(OPEN) {
        line.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len_utf8()..];
        let end = after.find(CLOSE).unwrap_or(after.len());
        if first.is_none() {
            first = after[..end].parse().ok();
        }
        rest = after.get(end + CLOSE.len_utf8()..).unwrap_or("");
    }
    line.push_str(rest);
    (line, first)
}

/// `s` as a C string literal.
fn c_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> LineSource {
        // Spans of text parsed here (outside a macro) have lines.
        let file: syn::File = syn::parse_str("fn f() {}\n").unwrap();
        LineSource::new("src/k.rs", syn::spanned::Spanned::span(&file.items[0]))
    }

    #[test]
    fn rust_lines_get_directives_only_where_the_count_is_off() {
        let text = format!("head\n{}fn {{\n{}a;\n{}b;\n{}c;\n{}}}\ntail\n", mark(4), mark(5), mark(6), mark(9), mark(10));
        let got = resolve(&text, Some(&source()));
        assert_eq!(
            got,
            "head\n#line 4 \"src/k.rs\"\nfn {\na;\nb;\n#line 9 \"src/k.rs\"\nc;\n}\n#line 10 \"src/k.rs (generated CUDA C)\"\ntail\n"
        );
        // Line 10 of `got` is `tail`: the unit's own numbering.
        assert_eq!(got.lines().nth(9), Some("tail"));
        // Without a source: the markers go, nothing else changes.
        let plain = resolve(&text, None);
        assert_eq!(plain, "head\nfn {\na;\nb;\nc;\n}\ntail\n");
        assert_eq!(cuprum_abi::unit::without_line_directives(&got), plain);
    }

    #[test]
    fn a_marker_inside_a_line_and_macro_continuations() {
        let text = format!("{}if (c) {}y = 1;\n#define M \\\n    x\n{}z;\n", mark(3), mark(3), mark(7));
        let got = resolve(&text, Some(&source()));
        assert_eq!(
            got,
            "#line 3 \"src/k.rs\"\nif (c) y = 1;\n#line 4 \"src/k.rs (generated CUDA C)\"\n#define M \\\n    x\n#line 7 \"src/k.rs\"\nz;\n"
        );
    }

    #[test]
    fn spans_of_other_text_have_no_line() {
        let s = source();
        let file: syn::File = syn::parse_str("\n\nfn g() {}\n").unwrap();
        let other = syn::spanned::Spanned::span(&file.items[0]);
        assert_eq!(s.line_of(other), None, "another parse is another file");
        assert_eq!(s.line_of(Span::call_site()), None);
        let own: syn::File = syn::parse_str("\n\nfn h() {}\n").unwrap();
        let own_source = LineSource::new("x.rs", syn::spanned::Spanned::span(&own.items[0]));
        assert_eq!(own_source.line_of(syn::spanned::Spanned::span(&own.items[0])), Some(3));
    }

    #[test]
    fn names_are_relative_to_the_package() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(source_name(&manifest.join("src/back/cuda/lines.rs")), "src/back/cuda/lines.rs");
        assert_eq!(source_name(&manifest.join("tests/in/../in/casts.rs")), "tests/in/casts.rs");
        let dir = std::env::temp_dir().join(format!("cuprum-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("k.rs");
        std::fs::write(&file, "").unwrap();
        let name = source_name(&file);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(name, "k.rs", "no package above: the file's name only");
    }
}
