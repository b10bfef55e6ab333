//! Memory layout of the types a `#[device]` struct holds, by CUDA C's rules (which equal Rust's
//! `#[repr(C)]` for these types except one: CUDA's `complex<T>` is aligned to twice its part,
//! `num_complex::Complex<T>` to its part).
//!
//! A struct shared between host and device must have no padding: the runtime copies arrays of
//! it as bytes (padding bytes are uninitialised in Rust), and without padding under the C rules
//! the two layouts are the same field for field. [`of_struct`] reports every gap so the front
//! end can say where to add a field or how to reorder.

use crate::ir::{StructDef, Ty};

/// A type's size and alignment under CUDA C's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
}

/// A struct's layout and the padding its C layout would need.
#[derive(Debug, Clone)]
pub struct StructLayout {
    /// The struct's size and alignment.
    pub layout: Layout,
    /// Byte offset of each field.
    pub offsets: Vec<u64>,
    /// `(index of the field it precedes, or fields.len() for the tail, bytes)`.
    pub gaps: Vec<(usize, u64)>,
}

/// The layout of a field type; `None` for a type with no fixed layout, or a struct that (directly
/// or not) contains itself, or one that is not in `structs`.
pub fn of(t: &Ty, structs: &[StructDef]) -> Option<Layout> {
    of_inner(t, structs, &mut Vec::new())
}

fn of_inner<'a>(t: &'a Ty, structs: &'a [StructDef], visiting: &mut Vec<&'a str>) -> Option<Layout> {
    match t {
        Ty::Scalar(d) => Some(Layout { size: d.size() as u64, align: d.c_align() as u64 }),
        Ty::Array(e, n) => {
            let l = of_inner(e, structs, visiting)?;
            Some(Layout { size: l.size.checked_mul(*n)?, align: l.align })
        }
        Ty::Struct(name) => {
            if visiting.contains(&name.as_str()) {
                return None;
            }
            let def = structs.iter().find(|s| s.name.text == *name)?;
            visiting.push(name);
            let l = struct_inner(def, structs, visiting).map(|s| s.layout);
            visiting.pop();
            l
        }
        _ => None,
    }
}

/// A struct's layout by C's rules; `None` as for [`of`].
pub fn of_struct(def: &StructDef, structs: &[StructDef]) -> Option<StructLayout> {
    let mut visiting = vec![def.name.text.as_str()];
    struct_inner(def, structs, &mut visiting)
}

fn struct_inner<'a>(def: &'a StructDef, structs: &'a [StructDef], visiting: &mut Vec<&'a str>) -> Option<StructLayout> {
    let mut offset = 0u64;
    let mut align = 1u64;
    let mut offsets = Vec::new();
    let mut gaps = Vec::new();
    for (k, f) in def.fields.iter().enumerate() {
        let l = of_inner(&f.ty, structs, visiting)?;
        let at = offset.div_ceil(l.align) * l.align;
        if at > offset {
            gaps.push((k, at - offset));
        }
        offsets.push(at);
        offset = at.checked_add(l.size)?;
        align = align.max(l.align);
    }
    let size = offset.div_ceil(align) * align;
    if size > offset {
        gaps.push((def.fields.len(), size - offset));
    }
    Some(StructLayout { layout: Layout { size, align }, offsets, gaps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuprum_abi::dtype::DType;
    use crate::ir::{FieldDef, Name};
    use proc_macro2::Span;

    fn def(name: &str, fields: &[(&str, Ty)]) -> StructDef {
        let n = |t: &str| Name { text: t.into(), span: Span::call_site() };
        StructDef { name: n(name), fields: fields.iter().map(|(f, t)| FieldDef { name: n(f), ty: t.clone() }).collect(), span: Span::call_site() }
    }

    #[test]
    fn packed_structs_have_no_gaps() {
        let p = def("P", &[("x", Ty::Scalar(DType::F32)), ("y", Ty::Scalar(DType::F32)), ("id", Ty::Scalar(DType::U32))]);
        let l = of_struct(&p, &[]).unwrap();
        assert_eq!(l.layout, Layout { size: 12, align: 4 });
        assert_eq!(l.offsets, vec![0, 4, 8]);
        assert!(l.gaps.is_empty());
    }

    #[test]
    fn gaps_inside_and_at_the_tail_are_found() {
        let s = def("S", &[("a", Ty::Scalar(DType::U8)), ("b", Ty::Scalar(DType::F64)), ("c", Ty::Scalar(DType::U16))]);
        let l = of_struct(&s, &[]).unwrap();
        assert_eq!(l.offsets, vec![0, 8, 16]);
        assert_eq!(l.gaps, vec![(1, 7), (3, 6)]);
        assert_eq!(l.layout, Layout { size: 24, align: 8 });
    }

    #[test]
    fn complex_is_aligned_to_twice_its_part() {
        // Rust would put `c` at 4; CUDA's complex<float> is at 8: a gap, so the struct is rejected.
        let s = def("S", &[("a", Ty::Scalar(DType::F32)), ("c", Ty::Scalar(DType::C32))]);
        assert_eq!(of_struct(&s, &[]).unwrap().gaps, vec![(1, 4)]);
    }

    #[test]
    fn nested_structs_and_arrays() {
        let inner = def("V3", &[("v", Ty::Array(Box::new(Ty::Scalar(DType::F32)), 3))]);
        let outer = def("B", &[("pos", Ty::Struct("V3".into())), ("vel", Ty::Struct("V3".into())), ("m", Ty::Scalar(DType::F32))]);
        let all = [inner, outer];
        let l = of_struct(&all[1], &all).unwrap();
        assert_eq!(l.layout, Layout { size: 28, align: 4 });
        assert_eq!(l.offsets, vec![0, 12, 24]);
    }

    #[test]
    fn recursive_structs_have_no_layout() {
        let a = def("A", &[("b", Ty::Struct("B".into()))]);
        let b = def("B", &[("a", Ty::Struct("A".into()))]);
        let all = [a, b];
        assert!(of_struct(&all[0], &all).is_none());
    }
}
