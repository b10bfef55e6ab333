//! Collecting errors across a phase and rendering them like rustc.
//!
//! Every phase pushes its errors into one [`Diagnostics`] and keeps going, and the phases share it,
//! so a kernel with three mistakes gets three messages, in source order. The macro turns the
//! combined `syn::Error` into `compile_error!`s at the user's spans; the build crate and the CLI
//! render them with [`render`] (`FILE:LINE:COL`, the line, a caret).

use proc_macro2::Span;

/// Errors collected by a phase.
#[derive(Debug, Default)]
pub struct Diagnostics {
    errors: Vec<syn::Error>,
}

impl Diagnostics {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Reports `message` at `span`.
    pub fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }
    /// Reports an error made elsewhere (syn's parse errors, a nested phase's).
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }
    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    /// How many errors were reported.
    pub fn len(&self) -> usize {
        self.errors.len()
    }
    /// Ends the checks: `Ok` when nothing was reported, otherwise every error combined, in source
    /// order (stable: errors at one position keep the order they were reported in).
    pub fn finish(mut self) -> Result<(), syn::Error> {
        self.errors.sort_by_key(|e| {
            let start = e.span().start();
            (start.line, start.column)
        });
        let mut iter = self.errors.into_iter();
        match iter.next() {
            None => Ok(()),
            Some(mut first) => {
                for e in iter {
                    first.combine(e);
                }
                Err(first)
            }
        }
    }
}

/// Renders every message of `error` like rustc: `error: MSG`, ` --> FILE:LINE:COL`, the line and a
/// caret under the span. Needs real line/column information (proc-macro2's `span-locations`,
/// outside a proc macro).
pub fn render(file: &str, source: &str, error: &syn::Error) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    for e in error.clone() {
        let span = e.span();
        let start = span.start();
        let end = span.end();
        let line_no = start.line.max(1);
        let text = lines.get(line_no - 1).copied().unwrap_or("");
        let col = start.column;
        let width = if end.line == start.line && end.column > start.column {
            end.column - start.column
        } else {
            text.chars().count().saturating_sub(col).max(1)
        };
        let gutter = line_no.to_string().len();
        let pad = " ".repeat(gutter);
        out.push_str(&format!("error: {e}\n"));
        out.push_str(&format!("{pad}--> {file}:{line_no}:{}\n", col + 1));
        out.push_str(&format!("{pad} |\n"));
        out.push_str(&format!("{line_no} | {text}\n"));
        let lead: String = text.chars().take(col).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        out.push_str(&format!("{pad} | {lead}{}\n\n", "^".repeat(width)));
    }
    out
}
