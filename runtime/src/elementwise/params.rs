//! The kernel parameters of an elementwise launch, laid out in the one parameter buffer
//! ([`ArgList`]) byte for byte as the C structs of
//! `abi/include/cuprum/elementwise.h` (`In`, `Out`, `InOut`, `Loop` per variant) and `Raw<T>` of
//! `types.h`. C's rules: each field at the next multiple of its alignment, the struct padded to a
//! multiple of its largest alignment. `src/tests/elementwise_nvrtc.rs` checks these sizes and
//! offsets against NVRTC's.

use super::plan::{ElementwisePlan, MAX_NDIM, Variant};
use crate::launch::ArgList;
use crate::element::ElemType;
/// C alignment of a dtype's C type ([`DType::c_align`](crate::DType::c_align)).
#[cfg(test)]
pub fn align_of(d: crate::DType) -> usize {
    d.c_align()
}

/// The bytes of a parameter struct written while it is laid out: enough for every field but a
/// struct element's zeroed value slot (`Raw<T>`, the largest without one, is 152 bytes). Past
/// this, a struct's bytes are zero ([`CStruct::zeroed`]).
const MAX_STRUCT: usize = 160;

/// One C struct being laid out, in place in the parameter buffer's zeroed bytes
/// ([`ArgList::push_in_place`]).
struct CStruct<'a> {
    bytes: &'a mut [u8],
    len: usize,
    align: usize,
}

impl CStruct<'_> {
    /// Lays out one struct of at most `room` bytes written (at most [`MAX_STRUCT`]) with
    /// `fields` at the end of `list`.
    #[inline]
    fn push(list: &mut ArgList, room: usize, fields: impl FnOnce(&mut CStruct<'_>)) {
        list.push_in_place(room.min(MAX_STRUCT), |bytes| {
            let mut s = CStruct { bytes, len: 0, align: 1 };
            fields(&mut s);
            s.len.next_multiple_of(s.align)
        });
    }
    fn field(&mut self, data: &[u8], align: usize) -> &mut Self {
        let at = self.len.next_multiple_of(align);
        self.bytes[at..at + data.len()].copy_from_slice(data);
        self.len = at + data.len();
        self.align = self.align.max(align);
        self
    }
    /// A field of `size` zero bytes (the unused value slot of an array input, which for a
    /// `#[device]` struct may be larger than the bytes written here).
    fn zeroed(&mut self, size: usize, align: usize) -> &mut Self {
        let at = self.len.next_multiple_of(align);
        self.len = at + size;
        self.align = self.align.max(align);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.field(&v.to_le_bytes(), 4)
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.field(&v.to_le_bytes(), 4)
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.field(&v.to_le_bytes(), 8)
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.field(&v.to_le_bytes(), 8)
    }
}

/// The elementwise layouts, written into the one parameter buffer ([`ArgList`]).
impl ArgList {
    /// A per-element input: an array (`ptr` non-zero, strides from the plan) or a scalar (the
    /// bytes of a value of a dtype; a `#[device]` struct input is always an array).
    pub fn input(&mut self, plan: &ElementwisePlan, elem: impl Into<ElemType>, ptr: u64, strides: Option<&[i64]>, scalar: Option<[u8; 16]>) {
        self.input_of(plan.variant, elem.into(), ptr, strides, scalar);
    }

    pub(crate) fn input_of(&mut self, variant: Variant, elem: ElemType, ptr: u64, strides: Option<&[i64]>, scalar: Option<[u8; 16]>) {
        // The pointer, the strides, the value (at most 16 bytes written, 16-aligned).
        CStruct::push(self, 8 + strides_bytes(variant) + 8 + 16, |s| {
            s.u64(ptr);
            strides_field(s, variant, strides);
            match scalar {
                Some(value) if elem.size() <= value.len() => s.field(&value[..elem.size()], elem.align()),
                _ => s.zeroed(elem.size(), elem.align()),
            };
        });
    }

    /// An output or output parameter (`Out` and `InOut` have one layout).
    pub fn output(&mut self, plan: &ElementwisePlan, ptr: u64, strides: &[i64]) {
        self.output_of(plan.variant, ptr, strides);
    }

    pub(crate) fn output_of(&mut self, variant: Variant, ptr: u64, strides: &[i64]) {
        CStruct::push(self, 8 + strides_bytes(variant), |s| {
            s.u64(ptr);
            strides_field(s, variant, Some(strides));
        });
    }

    /// A raw argument: `cuprum::Raw<T>` (pointer, size, ndim, contiguous, shape, strides).
    pub fn raw(&mut self, ptr: u64, shape: &[usize], strides: &[isize]) -> Result<(), String> {
        if shape.len() > MAX_NDIM {
            return Err(format!("a raw argument has {} dimensions; at most {MAX_NDIM} are supported", shape.len()));
        }
        CStruct::push(self, MAX_STRUCT, |s| {
            s.u64(ptr).u64(shape.iter().product::<usize>() as u64).i32(shape.len() as i32);
            s.i32(crate::array::shape::is_c_contiguous(shape, strides) as i32);
            for k in 0..MAX_NDIM {
                s.i64(shape.get(k).map_or(0, |&d| d as i64));
            }
            for k in 0..MAX_NDIM {
                s.i64(strides.get(k).map_or(0, |&d| d as i64));
            }
        });
        Ok(())
    }

    /// The loop (`cuprum::ew::Loop<V>`), last.
    pub fn loop_shape(&mut self, plan: &ElementwisePlan) {
        self.loop_of(plan.variant, plan.size, plan.items, &plan.dims, plan.vec, plan.bcast);
    }

    pub(crate) fn loop_of(&mut self, variant: Variant, size: u64, items: u64, dims: &[u64], vec: u32, bcast: u32) {
        CStruct::push(self, MAX_STRUCT, |s| match variant {
            Variant::Contig => {
                s.u64(size).u32(vec);
            }
            Variant::S32 | Variant::T32 => {
                s.u64(size).u32(items as u32).i32(dims.len() as i32).u32(vec).u32(bcast);
                for k in 0..MAX_NDIM {
                    let [d, m, sh] = super::plan::div32(dims.get(k).map_or(1, |&d| d as u32));
                    s.u32(d).u32(m).u32(sh);
                }
            }
            Variant::S64 => {
                s.u64(size).u64(items).i32(dims.len() as i32).u32(vec).u32(bcast);
                for k in 0..MAX_NDIM {
                    s.u64(dims.get(k).copied().unwrap_or(1));
                }
            }
        });
    }
}

/// The bytes of the strides field of a variant's `In`/`Out`.
fn strides_bytes(variant: Variant) -> usize {
    match variant {
        Variant::Contig => 0,
        Variant::S32 | Variant::T32 => 4 * MAX_NDIM,
        Variant::S64 => 8 * MAX_NDIM,
    }
}

fn strides_field(s: &mut CStruct<'_>, variant: Variant, strides: Option<&[i64]>) {
    let st = |k: usize| strides.and_then(|t| t.get(k)).copied().unwrap_or(0);
    match variant {
        Variant::Contig => {}
        Variant::S32 | Variant::T32 => {
            for k in 0..MAX_NDIM {
                s.i32(st(k) as i32);
            }
        }
        Variant::S64 => {
            for k in 0..MAX_NDIM {
                s.i64(st(k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn plan(variant: Variant) -> ElementwisePlan {
        ElementwisePlan { variant, size: 6, vec: 1, dims: vec![2, 3], strides: vec![], bcast: 0, items: 6 }
    }

    #[test]
    fn c_layouts() {
        let mut p = ArgList::new();
        p.input(&plan(Variant::Contig), DType::F32, 16, None, None);
        p.input(&plan(Variant::Contig), DType::C64, 16, None, None);
        p.input(&plan(Variant::S32), DType::F64, 16, Some(&[3, 1]), None);
        p.input(&plan(Variant::S32), DType::U8, 16, Some(&[3, 1]), Some([7; 16]));
        p.input(&plan(Variant::S64), DType::F16, 16, Some(&[3, 1]), None);
        p.output(&plan(Variant::Contig), 16, &[1]);
        p.output(&plan(Variant::S32), 16, &[3, 1]);
        p.output(&plan(Variant::S64), 16, &[3, 1]);
        p.raw(16, &[2, 3], &[3, 1]).unwrap();
        p.loop_shape(&plan(Variant::Contig));
        p.loop_shape(&plan(Variant::S32));
        p.loop_shape(&plan(Variant::S64));
        // `In<c64, contig>`: pointer, then the 16-aligned complex value: 32 bytes.
        assert_eq!(p.sizes(), &[16, 32, 48, 48, 80, 8, 40, 72, 152, 16, 120, 96]);
        let b = p.bytes(3);
        assert_eq!((b[8], b[12], b[40]), (3, 1, 7));
        let l = p.bytes(10);
        assert_eq!(l[12..16], 2i32.to_le_bytes());
        assert_eq!(l[24..28], 2u32.to_le_bytes());
        assert_eq!(l[36..40], 3u32.to_le_bytes());
    }
}
