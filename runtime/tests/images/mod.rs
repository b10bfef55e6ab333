//! Module image fixtures (`tests/fixtures/`, made from `tiny.cu` and `globals.cu` by `fixtures/make.sh` with nvcc
//! 13.0) and the seeded damage that `image_fuzz.rs` (CPU) and `gpu_images.rs` (GPU) do to them.
//! Included by both as `mod images;`.
#![allow(dead_code)]

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// One fixture: its file name and bytes.
pub struct Fixture {
    pub name: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! fixture {
    ($name:literal) => {
        Fixture {
            name: $name,
            bytes: include_bytes!(concat!("../fixtures/", $name)),
        }
    };
}

/// Every fixture: cubins (sm_90, sm_75, a relocatable sm_90, one with initialised globals from
/// `globals.cu`) and fat binaries (uncompressed with
/// sm_75, sm_90, compute_90 and sm_100 entries; zstd; LZ4).
pub const FIXTURES: &[Fixture] = &[
    fixture!("tiny.sm_90.cubin"),
    fixture!("tiny.sm_75.cubin"),
    fixture!("tiny.sm_90.rdc.cubin"),
    fixture!("globals.sm_90.cubin"),
    fixture!("tiny.fatbin"),
    fixture!("tiny.zstd.fatbin"),
    fixture!("tiny.lz4.fatbin"),
];

pub fn fixture(name: &str) -> &'static [u8] {
    FIXTURES
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no fixture {name}"))
        .bytes
}

/// The seed: `CUPRUM_TEST_SEED` (decimal or 0x-hex) when set, else from the clock. Printed, so
/// a failing run can be repeated.
pub fn seed(test: &str) -> u64 {
    let seed = match std::env::var("CUPRUM_TEST_SEED") {
        Ok(v) => {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            }
            .unwrap_or_else(|e| panic!("CUPRUM_TEST_SEED={v:?}: {e}"))
        }
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x5EED, |d| d.as_nanos() as u64),
    };
    println!("{test}: seed {seed} (CUPRUM_TEST_SEED={seed} repeats this run)");
    seed
}

fn le(b: &[u8], at: usize, width: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(width)?)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(s);
    Some(u64::from_le_bytes(v))
}

/// The header fields of the ELF file at `base` of `b`: `(offset in b, width)` of every field that
/// locates or sizes something (header, section and program headers, symbols, relocations, notes,
/// `.nv.info` records). Read from the intact fixture.
fn elf_fields(b: &[u8], base: usize, out: &mut Vec<(usize, usize)>) {
    for (o, w) in [
        (4, 1),
        (5, 1),
        (0x12, 2),
        (0x20, 8),
        (0x28, 8),
        (0x34, 2),
        (0x36, 2),
        (0x38, 2),
        (0x3A, 2),
        (0x3C, 2),
        (0x3E, 2),
    ] {
        out.push((base + o, w));
    }
    let g = |o: usize, w: usize| le(b, base + o, w).unwrap_or(0) as usize;
    let (phoff, phnum, shoff, shnum) = (g(0x20, 8), g(0x38, 2), g(0x28, 8), g(0x3C, 2));
    for i in 0..phnum {
        let at = base + phoff + 56 * i;
        out.extend([(at + 8, 8), (at + 32, 8)]);
    }
    for i in 0..shnum {
        let at = base + shoff + 64 * i;
        out.extend([
            (at, 4),
            (at + 4, 4),
            (at + 24, 8),
            (at + 32, 8),
            (at + 40, 4),
            (at + 44, 4),
            (at + 56, 8),
        ]);
        let kind = le(b, at + 4, 4).unwrap_or(0);
        let off = base + le(b, at + 24, 8).unwrap_or(0) as usize;
        let size = le(b, at + 32, 8).unwrap_or(0) as usize;
        match kind {
            // Symbols: name and section index; relocations: the symbol.
            2 => {
                (0..size / 24).for_each(|k| out.extend([(off + 24 * k, 4), (off + 24 * k + 6, 2)]))
            }
            4 => (0..size / 24).for_each(|k| out.push((off + 24 * k + 8, 8))),
            9 => (0..size / 16).for_each(|k| out.push((off + 16 * k + 8, 8))),
            // Notes: the name and descriptor sizes.
            7 => {
                let mut p = 0;
                while p + 12 <= size {
                    out.extend([(off + p, 4), (off + p + 4, 4)]);
                    let n = (le(b, off + p, 4).unwrap_or(0) as usize).div_ceil(4) * 4;
                    let d = (le(b, off + p + 4, 4).unwrap_or(0) as usize).div_ceil(4) * 4;
                    p += 12 + n + d;
                }
            }
            // .nv.info records: the format and the size of sized ones.
            0x7000_0000 => {
                let mut p = 0;
                while p + 4 <= size {
                    out.extend([(off + p, 1), (off + p + 2, 2)]);
                    p += if b.get(off + p) == Some(&4) {
                        4 + le(b, off + p + 2, 2).unwrap_or(0) as usize
                    } else {
                        4
                    };
                }
            }
            _ => {}
        }
    }
}

/// The fields of a fat binary: the containers', every entry header's, and the ELF fields of
/// every uncompressed cubin inside.
fn fatbin_fields(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut pos = 0;
    while pos + 16 <= b.len() {
        out.extend([(pos + 4, 2), (pos + 6, 2), (pos + 8, 8)]);
        let (header, size) = (
            le(b, pos + 6, 2).unwrap_or(16) as usize,
            le(b, pos + 8, 8).unwrap_or(0) as usize,
        );
        let (mut at, end) = (pos + header, pos + header + size);
        while at + 64 <= end {
            for (o, w) in [
                (0, 2),
                (4, 4),
                (8, 8),
                (16, 4),
                (20, 4),
                (28, 4),
                (32, 4),
                (36, 4),
                (40, 8),
                (56, 8),
            ] {
                out.push((at + o, w));
            }
            let eh = le(b, at + 4, 4).unwrap_or(64) as usize;
            let options = le(b, at + 20, 4).unwrap_or(0) as usize;
            if options != 0 {
                out.extend([(at + options, 4), (at + options + 4, 4)]);
            }
            let flags = le(b, at + 40, 8).unwrap_or(0);
            if le(b, at, 2) == Some(2) && flags & 0xA000 == 0 {
                elf_fields(b, at + eh, out);
            }
            at += eh + le(b, at + 8, 8).unwrap_or(0) as usize;
        }
        pos = end.next_multiple_of(8);
    }
}

/// A seeded source of damaged images.
pub struct Mutator {
    rng: Xoshiro256PlusPlus,
    /// Per fixture, its fields.
    fields: Vec<Vec<(usize, usize)>>,
}

impl Mutator {
    pub fn new(seed: u64) -> Mutator {
        let fields = FIXTURES
            .iter()
            .map(|f| {
                let mut out = Vec::new();
                if f.bytes.starts_with(b"\x7fELF") {
                    elf_fields(f.bytes, 0, &mut out);
                } else {
                    fatbin_fields(f.bytes, &mut out);
                }
                out.retain(|&(at, w)| at + w <= f.bytes.len());
                out
            })
            .collect();
        Mutator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            fields,
        }
    }

    /// How many locating fields fixture `i` has.
    /// A fixture with one to three of its *extents* damaged (an ELF header's table offsets and
    /// counts, a segment's or a section's file offset and size): what the checks answer for
    /// ("every section and program header lies inside the image"). Damage to what the bytes mean
    /// (types, links, code) is the driver's to interpret.
    pub fn next_extent(&mut self) -> (&'static str, Vec<u8>, String) {
        let elf: Vec<usize> = (0..FIXTURES.len())
            .filter(|&i| FIXTURES[i].bytes.starts_with(b"\x7fELF"))
            .collect();
        let i = elf[self.rng.random_range(0..elf.len())];
        let b0 = FIXTURES[i].bytes;
        let g = |o: usize, w: usize| le(b0, o, w).unwrap_or(0) as usize;
        let (phoff, phnum, shoff, shnum) = (g(0x20, 8), g(0x38, 2), g(0x28, 8), g(0x3C, 2));
        let mut extents: Vec<(usize, usize)> = vec![(0x20, 8), (0x28, 8), (0x38, 2), (0x3C, 2)];
        extents
            .extend((0..phnum).flat_map(|k| [(phoff + 56 * k + 8, 8), (phoff + 56 * k + 32, 8)]));
        extents
            .extend((0..shnum).flat_map(|k| [(shoff + 64 * k + 24, 8), (shoff + 64 * k + 32, 8)]));
        let mut b = b0.to_vec();
        let len = b.len();
        let mut what = Vec::new();
        for _ in 0..self.rng.random_range(1..=3u32) {
            let (at, w) = extents[self.rng.random_range(0..extents.len())];
            let old = le(&b, at, w).unwrap_or(0);
            let v = self.value(old, len, w);
            b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
            what.push(format!("extent at {at} ({w} bytes) {old:#x} -> {v:#x}"));
        }
        (FIXTURES[i].name, b, what.join("; "))
    }

    pub fn field_count(&self, i: usize) -> usize {
        self.fields[i].len()
    }

    /// A damaged copy of a random fixture: which one, the bytes, and what was done (1 to 3
    /// damages).
    pub fn next(&mut self) -> (&'static str, Vec<u8>, String) {
        let i = self.rng.random_range(0..FIXTURES.len());
        let mut b = FIXTURES[i].bytes.to_vec();
        let mut what = Vec::new();
        for _ in 0..self.rng.random_range(1..=3u32) {
            what.push(self.damage(i, &mut b));
        }
        (FIXTURES[i].name, b, what.join("; "))
    }

    fn value(&mut self, old: u64, len: usize, width: usize) -> u64 {
        let len = len as u64;
        let bits = 8 * width as u32;
        let max = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match self.rng.random_range(0..14u32) {
            0 => 0,
            1 => 1,
            2 => old.wrapping_add(1),
            3 => old.wrapping_sub(1),
            4 => old.wrapping_mul(2),
            5 => len.wrapping_sub(1),
            6 => len,
            7 => len + 1,
            8 => len / 2,
            9 => max,
            10 => 1u64 << (bits - 1),
            11 => (1u64 << (bits - 1)) - 1,
            12 => old.wrapping_add(self.rng.random_range(0..64)),
            _ => self.rng.random(),
        };
        v & max
    }

    fn damage(&mut self, fixture: usize, b: &mut Vec<u8>) -> String {
        let len = b.len();
        if len == 0 {
            b.push(self.rng.random());
            return "a byte into nothing".into();
        }
        match self.rng.random_range(0..100u32) {
            // Bit flips.
            0..20 => {
                let n = self.rng.random_range(1..=8u32);
                for _ in 0..n {
                    let at = self.rng.random_range(0..len);
                    b[at] ^= 1 << self.rng.random_range(0..8u32);
                }
                format!("{n} bit flips")
            }
            // Boundary values over single bytes.
            20..35 => {
                let at = self.rng.random_range(0..len);
                let v = [0u8, 1, 0x7f, 0x80, 0xfe, 0xff][self.rng.random_range(0..6usize)];
                b[at] = v;
                format!("byte {at} = {v:#x}")
            }
            // Truncation, mostly near either end.
            35..45 => {
                let n = match self.rng.random_range(0..3u32) {
                    0 => self.rng.random_range(0..len.min(128)),
                    1 => len - 1 - self.rng.random_range(0..len.min(128)),
                    _ => self.rng.random_range(0..len),
                };
                b.truncate(n);
                format!("truncated to {n}")
            }
            // A locating field set to a boundary value.
            45..80 => {
                let fields = &self.fields[fixture];
                let (at, w) = fields[self.rng.random_range(0..fields.len())];
                if at + w > b.len() {
                    return "a field past the end".into();
                }
                let old = le(b, at, w).unwrap_or(0);
                let v = self.value(old, len, w);
                b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
                format!("field at {at} ({w} bytes) {old:#x} -> {v:#x}")
            }
            // Garbage after the headers.
            80..85 => {
                let keep = [16usize, 64, 80, 144][self.rng.random_range(0..4usize)].min(len);
                let n = self.rng.random_range(0..len * 2);
                b.truncate(keep);
                b.extend((0..n).map(|_| self.rng.random::<u8>()));
                format!("garbage after byte {keep} ({n} bytes)")
            }
            // Bytes removed or inserted (everything after shifts).
            85..92 => {
                let at = self.rng.random_range(0..len);
                let n = self.rng.random_range(1..=16usize);
                if self.rng.random_bool(0.5) {
                    b.drain(at..(at + n).min(len));
                    format!("{n} bytes removed at {at}")
                } else {
                    let v: Vec<u8> = (0..n).map(|_| self.rng.random()).collect();
                    b.splice(at..at, v);
                    format!("{n} bytes inserted at {at}")
                }
            }
            // A block copied over another place.
            92..96 => {
                let n = self.rng.random_range(1..=64usize).min(len);
                let (from, to) = (
                    self.rng.random_range(0..=len - n),
                    self.rng.random_range(0..=len - n),
                );
                b.copy_within(from..from + n, to);
                format!("{n} bytes copied from {from} to {to}")
            }
            // Bytes appended.
            _ => {
                let n = self.rng.random_range(1..=256usize);
                let zero = self.rng.random_bool(0.5);
                b.extend((0..n).map(|_| if zero { 0 } else { self.rng.random::<u8>() }));
                format!(
                    "{n} {} bytes appended",
                    if zero { "zero" } else { "random" }
                )
            }
        }
    }
}

/// Where section header `i` of the ELF file at `base` of `b` is.
pub fn section_header(b: &[u8], base: usize, i: usize) -> usize {
    base + le(b, base + 0x28, 8).unwrap() as usize + 64 * i
}

/// The index of the first section of type `kind` of the ELF file at `base`.
pub fn section_of_kind(b: &[u8], base: usize, kind: u32) -> usize {
    let shnum = le(b, base + 0x3C, 2).unwrap() as usize;
    (0..shnum)
        .find(|&i| le(b, section_header(b, base, i) + 4, 4) == Some(u64::from(kind)))
        .unwrap_or_else(|| panic!("no section of type {kind:#x}"))
}

/// The file offset of section `i`'s bytes.
pub fn section_offset(b: &[u8], base: usize, i: usize) -> usize {
    base + le(b, section_header(b, base, i) + 24, 8).unwrap() as usize
}

/// Writes `v` little-endian over `width` bytes at `at`.
pub fn put(b: &mut [u8], at: usize, width: usize, v: u64) {
    b[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// The entries of a fat binary with one container: `(header offset, header size, payload
/// size, kind, arch)`.
pub fn fatbin_entries(b: &[u8]) -> Vec<(usize, usize, usize, u16, u32)> {
    let end = 16 + le(b, 8, 8).unwrap() as usize;
    let mut at = 16;
    let mut out = Vec::new();
    while at < end {
        let (eh, payload) = (
            le(b, at + 4, 4).unwrap() as usize,
            le(b, at + 8, 8).unwrap() as usize,
        );
        out.push((
            at,
            eh,
            payload,
            le(b, at, 2).unwrap() as u16,
            le(b, at + 28, 4).unwrap() as u32,
        ));
        at += eh + payload;
    }
    out
}

/// Deterministic damage that the checks refuse: `(what, bytes)`, each a single mistake in a
/// fixture the driver would otherwise read past.
pub fn refused_damage() -> Vec<(String, Vec<u8>)> {
    let cubin = fixture("tiny.sm_90.cubin");
    let len = cubin.len() as u64;
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut edit = |what: &str, base: &[u8], f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = base.to_vec();
        f(&mut b);
        out.push((what.to_string(), b));
    };
    let text = section_of_kind(cubin, 0, 1);
    edit("a section offset past the end", cubin, &|b| {
        put(b, section_header(cubin, 0, text) + 24, 8, len)
    });
    edit("a section size past the end", cubin, &|b| {
        put(b, section_header(cubin, 0, text) + 32, 8, u64::MAX - 8)
    });
    edit("the section headers past the end", cubin, &|b| {
        put(b, 0x28, 8, len - 64)
    });
    edit("the program headers past the end", cubin, &|b| {
        put(b, 0x20, 8, len)
    });
    edit("a segment past the end", cubin, &|b| {
        let phoff = le(cubin, 0x20, 8).unwrap() as usize;
        put(b, phoff + 32, 8, len * 4)
    });
    edit("too many sections", cubin, &|b| put(b, 0x3C, 2, 0xfeff));
    edit("no such name table", cubin, &|b| put(b, 0x3E, 2, 0x7fff));
    edit("a section name past its table", cubin, &|b| {
        put(b, section_header(cubin, 0, 2), 4, 0x7fff_ffff)
    });
    edit("a symbol name past its table", cubin, &|b| {
        let symtab = section_offset(cubin, 0, section_of_kind(cubin, 0, 2));
        put(b, symtab + 24, 4, 0xffff_fff0)
    });
    edit("a note past its section", cubin, &|b| {
        let note = section_offset(cubin, 0, section_of_kind(cubin, 0, 7));
        put(b, note + 4, 4, 0x00ff_ffff)
    });
    edit("an attribute record past its section", cubin, &|b| {
        let info = section_offset(cubin, 0, section_of_kind(cubin, 0, 0x7000_0000));
        put(b, info + 2, 2, 0xffff)
    });
    edit("garbage after the ELF header", cubin, &|b| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(15);
        for x in &mut b[64..] {
            *x = rng.random();
        }
    });
    edit("a 32-bit ELF header", cubin, &|b| b[4] = 1);
    edit("another machine", cubin, &|b| put(b, 0x12, 2, 62));
    edit(
        "the first half of a cubin",
        &cubin[..cubin.len() / 2],
        &|_| {},
    );
    edit("a cubin's ELF header alone", &cubin[..64], &|_| {});

    let fat = fixture("tiny.fatbin");
    let entries = fatbin_entries(fat);
    let (sm90, eh90, _, _, _) = *entries.iter().find(|e| e.3 == 2 && e.4 == 90).unwrap();
    let (ptx, ehptx, ptx_len, _, _) = *entries.iter().find(|e| e.3 == 1).unwrap();
    edit("a fat binary container longer than the file", fat, &|b| {
        put(b, 8, 8, fat.len() as u64)
    });
    edit("a fat binary entry longer than its container", fat, &|b| {
        put(b, sm90 + 8, 8, fat.len() as u64)
    });
    edit(
        "a fat binary's sm_90 cubin with a section past its end",
        fat,
        &|b| {
            let base = sm90 + eh90;
            put(b, section_header(fat, base, text) + 24, 8, 1 << 40)
        },
    );
    edit("a fat binary's PTX without its NUL", fat, &|b| {
        for x in &mut b[ptx + ehptx..ptx + ehptx + ptx_len] {
            if *x == 0 {
                *x = b' ';
            }
        }
    });
    edit("a fat binary's PTX options past the entry", fat, &|b| {
        put(b, ptx + 68, 4, 0xffff)
    });
    edit("a fat binary entry's name past the entry", fat, &|b| {
        put(b, sm90 + 32, 4, 8);
        put(b, sm90 + 36, 4, 0x0100_0000)
    });
    let zstd = fixture("tiny.zstd.fatbin");
    let z = fatbin_entries(zstd)[0];
    edit("a zstd entry declaring twice its size", zstd, &|b| {
        let u = le(zstd, z.0 + 56, 8).unwrap();
        put(b, z.0 + 56, 8, 2 * u)
    });
    edit(
        "a zstd entry with more compressed bytes than its payload",
        zstd,
        &|b| put(b, z.0 + 16, 4, z.2 as u64 + 1),
    );
    let lz4 = fixture("tiny.lz4.fatbin");
    let l = *fatbin_entries(lz4).iter().find(|e| e.3 == 1).unwrap();
    edit("an LZ4 entry declaring no uncompressed size", lz4, &|b| {
        put(b, l.0 + 56, 8, 0)
    });
    edit("an empty image", &[], &|_| {});
    edit("binary garbage", &[], &|b| {
        b.extend((0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8))
    });
    out
}
