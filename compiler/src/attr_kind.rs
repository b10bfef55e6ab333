//! Which attribute marks an item: the kinds of kernel and `#[device]`.

/// Which attribute an item was marked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    /// `#[elementwise]`.
    Elementwise,
    /// `#[reduction]`.
    Reduction,
    /// `#[rawkernel]`.
    RawKernel,
    /// `#[device]` (a function or a struct).
    Device,
}

impl AttrKind {
    /// The attribute a path names, by its last segment (`cuprum::elementwise` too).
    pub fn from_path(path: &syn::Path) -> Option<AttrKind> {
        let last = path.segments.last()?.ident.to_string();
        Some(match last.as_str() {
            "elementwise" => AttrKind::Elementwise,
            "reduction" => AttrKind::Reduction,
            "rawkernel" => AttrKind::RawKernel,
            "device" => AttrKind::Device,
            _ => return None,
        })
    }
}
