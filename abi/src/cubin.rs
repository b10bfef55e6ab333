//! The checks a cubin (a CUDA ELF file) passes before the driver sees it.
//!
//! `cuModuleLoadData` is given a pointer, not a length: the driver finds everything in an image
//! through the image's own tables, so an offset or a size that points outside the buffer makes it
//! read past the end (a crash, or garbage taken for code). [`check`] walks the same tables and
//! refuses an image where anything the driver locates through them lies outside it:
//!
//! - the ELF header: 64-bit, little-endian, version 1, machine `EM_CUDA` (190), a 64-byte header;
//! - the program header table (56-byte entries) and the section header table (64-byte entries)
//!   inside the image, with counts below the ELF escape values (no extended numbering);
//! - every segment's file bytes `[p_offset, p_offset + p_filesz)`, and every section's bytes
//!   `[sh_offset, sh_offset + sh_size)` except those that occupy no file space (`SHT_NOBITS` and
//!   the CUDA variants `.nv.global`, `.nv.local`, `.nv.shared` of relocatable cubins);
//! - names: the section name string table exists and is a string table, every string table ends
//!   with a NUL, every section name and symbol name is an offset inside its table;
//! - symbol tables (24-byte entries) linked to a string table, with section indices in range;
//!   relocation tables (16/24-byte entries) linked to a symbol table, applying to a section that
//!   exists and naming symbols that exist;
//! - notes (`SHT_NOTE`) and the CUDA attribute records of `.nv.info*` (`SHT_CUDA_INFO`) and
//!   `.nv.compat`, which the driver parses, framed inside their sections;
//! - the layout a compiler writes: the ELF header, the header tables and the sections do not share
//!   bytes (two sections may name the same bytes exactly) and are aligned; every segment with file
//!   bytes is the program header table or runs from the start of one section to the end of
//!   another (padded to the segment's alignment), cutting none; a memory-only segment starts
//!   where a section does; no section or segment reserves more than 1 TiB; tables of fixed-size
//!   entries hold whole entries; section 0 is all zeros; `e_phoff` is 0 without program headers.
//!   The driver trusts this layout: before these checks, images whose damaged extents still lay
//!   inside the file crashed it on an H100 (`runtime/src/tests/gpu_images.rs`).
//!
//! Everything is read with bounds-checked accessors and checked arithmetic: no input panics
//! (`runtime/src/tests/image_fuzz.rs` feeds it hundreds of thousands of damaged images). It checks
//! what the driver *locates*, not what it *means*: a well-framed image with nonsense machine code
//! passes, and the driver refuses or runs it.

use std::fmt;

/// `e_machine` of CUDA ELF files.
pub const EM_CUDA: u16 = 190;

const EHDR_SIZE: u64 = 64;
const PHDR_SIZE: u64 = 56;
const SHDR_SIZE: u64 = 64;
const SYM_SIZE: u64 = 24;

const ET_REL: u64 = 1;
const ET_EXEC: u64 = 2;
const PT_PHDR: u64 = 6;
/// The most memory a section or segment may reserve (1 TiB, past any GPU's memory): a larger
/// size is damage, not a program.
const MAX_MEMORY: u64 = 1 << 40;

const SHT_NULL: u32 = 0;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_RELA: u32 = 4;
const SHT_NOTE: u32 = 7;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const SHT_DYNSYM: u32 = 11;
/// `.nv.info` and `.nv.info.<kernel>`: attribute records the driver reads at load time.
const SHT_CUDA_INFO: u32 = 0x7000_0000;
/// `.nv.compat` and sm_100's `.nv.merc.nv.info*`: records framed as `.nv.info`'s.
const SHT_CUDA_RECORDS: [u32; 2] = [0x7000_0086, 0x7000_0083];
/// Sections of relocatable cubins that, like `SHT_NOBITS`, occupy no bytes of the file (their
/// size is the memory they reserve): `.nv.global`, `.nv.local.*`, `.nv.shared.*`.
const SHT_CUDA_NOBITS: [u32; 3] = [0x7000_0007, 0x7000_0009, 0x7000_000a];

/// Section indices from here up are reserved (`SHN_LORESERVE`): no extended numbering.
const SHN_LORESERVE: u64 = 0xff00;
/// `e_phnum` escape value (`PN_XNUM`): the real count would be elsewhere; not supported.
const PN_XNUM: u64 = 0xffff;

/// Bytes that are not a well-formed cubin: what is wrong and at which byte offset of the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The byte offset in the image where the problem is.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a valid cubin: {} (at byte {})",
            self.message, self.offset
        )
    }
}

impl std::error::Error for FormatError {}

fn err(offset: u64, message: impl Into<String>) -> FormatError {
    FormatError {
        offset,
        message: message.into(),
    }
}

/// Little-endian reads at 64-bit offsets; `None` past the end (never a panic).
struct Image<'a>(&'a [u8]);

impl Image<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn bytes<const N: usize>(&self, at: u64) -> Option<[u8; N]> {
        let start = usize::try_from(at).ok()?;
        self.0.get(start..start.checked_add(N)?)?.try_into().ok()
    }

    fn u8(&self, at: u64) -> Option<u8> {
        self.bytes::<1>(at).map(|b| b[0])
    }

    fn u16(&self, at: u64) -> Option<u64> {
        self.bytes(at).map(|b| u64::from(u16::from_le_bytes(b)))
    }

    fn u32(&self, at: u64) -> Option<u64> {
        self.bytes(at).map(|b| u64::from(u32::from_le_bytes(b)))
    }

    fn u64(&self, at: u64) -> Option<u64> {
        self.bytes(at).map(u64::from_le_bytes)
    }

    /// Whether `[offset, offset + size)` lies inside the image.
    fn holds(&self, offset: u64, size: u64) -> bool {
        offset
            .checked_add(size)
            .is_some_and(|end| end <= self.len())
    }
}

/// The fields of one section header that the checks use.
#[derive(Clone, Copy)]
struct Section {
    /// Where its header is (for messages).
    at: u64,
    name: u64,
    kind: u32,
    offset: u64,
    size: u64,
    link: u64,
    info: u64,
    align: u64,
    entsize: u64,
}

/// The fields of one program header that the checks use.
#[derive(Clone, Copy)]
struct Segment {
    at: u64,
    kind: u64,
    offset: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

impl Section {
    fn has_file_bytes(&self) -> bool {
        self.kind != SHT_NOBITS && !SHT_CUDA_NOBITS.contains(&self.kind)
    }
}

/// Checks that `bytes` is a cubin whose tables all lie inside it (see the module documentation).
pub fn check(bytes: &[u8]) -> Result<(), FormatError> {
    let img = Image(bytes);
    if img.len() < EHDR_SIZE {
        return Err(err(
            0,
            format!("{} bytes is shorter than an ELF header (64)", img.len()),
        ));
    }
    if bytes.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err(err(0, "no ELF magic number"));
    }
    // The header is 64 bytes long (checked above), so these reads cannot fail; `?`-free
    // fallbacks keep it that way if the constants ever change.
    let byte = |at| img.u8(at).unwrap_or(0);
    let half = |at| img.u16(at).unwrap_or(0);
    let word = |at| img.u32(at).unwrap_or(0);
    let quad = |at| img.u64(at).unwrap_or(0);
    if byte(4) != 2 {
        return Err(err(4, "not a 64-bit ELF file (EI_CLASS is not ELFCLASS64)"));
    }
    if byte(5) != 1 {
        return Err(err(
            5,
            "not a little-endian ELF file (EI_DATA is not ELFDATA2LSB)",
        ));
    }
    if byte(6) != 1 || word(0x14) != 1 {
        return Err(err(6, "unknown ELF version (expected 1)"));
    }
    if half(0x12) != u64::from(EM_CUDA) {
        return Err(err(
            0x12,
            format!("machine {} is not EM_CUDA ({EM_CUDA})", half(0x12)),
        ));
    }
    if half(0x34) != EHDR_SIZE {
        return Err(err(
            0x34,
            format!("ELF header size {} is not 64", half(0x34)),
        ));
    }

    // Program headers: the table, then each segment's file bytes.
    let (phoff, phentsize, phnum) = (quad(0x20), half(0x36), half(0x38));
    if phnum > 0 {
        if phnum == PN_XNUM {
            return Err(err(
                0x38,
                "extended program header numbering is not supported",
            ));
        }
        if phentsize != PHDR_SIZE {
            return Err(err(
                0x36,
                format!("program header size {phentsize} is not 56"),
            ));
        }
        if !img.holds(phoff, phnum * PHDR_SIZE) {
            return Err(err(
                0x20,
                format!(
                    "the {phnum} program headers at byte {phoff} run past the end ({} bytes)",
                    img.len()
                ),
            ));
        }
    }
    let segments: Vec<Segment> = (0..phnum)
        .map(|i| {
            let at = phoff + i * PHDR_SIZE;
            Segment {
                at,
                kind: word(at),
                offset: quad(at + 8),
                filesz: quad(at + 32),
                memsz: quad(at + 40),
                align: quad(at + 48),
            }
        })
        .collect();
    for (
        i,
        &Segment {
            at, offset, filesz, ..
        },
    ) in segments.iter().enumerate()
    {
        if filesz > 0 && !img.holds(offset, filesz) {
            return Err(err(
                at,
                format!(
                    "segment {i} ({filesz} bytes at byte {offset}) runs past the end ({} bytes)",
                    img.len()
                ),
            ));
        }
    }

    // Section headers.
    let (shoff, shentsize, shnum, shstrndx) = (quad(0x28), half(0x3A), half(0x3C), half(0x3E));
    if shnum == 0 {
        return Err(err(
            0x3C,
            "no section headers (a cubin has sections; extended numbering is not supported)",
        ));
    }
    if shnum >= SHN_LORESERVE {
        return Err(err(
            0x3C,
            format!("section count {shnum} is in the reserved range"),
        ));
    }
    if shentsize != SHDR_SIZE {
        return Err(err(
            0x3A,
            format!("section header size {shentsize} is not 64"),
        ));
    }
    if !img.holds(shoff, shnum * SHDR_SIZE) {
        return Err(err(
            0x28,
            format!(
                "the {shnum} section headers at byte {shoff} run past the end ({} bytes)",
                img.len()
            ),
        ));
    }
    let sections: Vec<Section> = (0..shnum)
        .map(|i| {
            let at = shoff + i * SHDR_SIZE;
            Section {
                at,
                name: word(at),
                kind: word(at + 4) as u32,
                offset: quad(at + 24),
                size: quad(at + 32),
                link: word(at + 40),
                info: word(at + 44),
                align: quad(at + 48),
                entsize: quad(at + 56),
            }
        })
        .collect();
    for (i, s) in sections.iter().enumerate() {
        if s.has_file_bytes() && !img.holds(s.offset, s.size) {
            return Err(err(
                s.at,
                format!(
                    "section {i} ({} bytes at byte {}) runs past the end ({} bytes)",
                    s.size,
                    s.offset,
                    img.len()
                ),
            ));
        }
    }
    // From here on every section with file bytes lies inside the image.
    let section = |index: u64| sections.get(usize::try_from(index).ok()?);
    let strtab = |index: u64, what: &str, at: u64| -> Result<Section, FormatError> {
        match section(index) {
            Some(s) if s.kind == SHT_STRTAB => Ok(*s),
            Some(_) => Err(err(
                at,
                format!("{what} (section {index}) is not a string table"),
            )),
            None => Err(err(
                at,
                format!("{what} is section {index}, past the {shnum} sections"),
            )),
        }
    };
    if shstrndx == 0 {
        return Err(err(0x3E, "no section name string table (e_shstrndx is 0)"));
    }
    let names = strtab(shstrndx, "the section name table", 0x3E)?;

    for (i, s) in sections.iter().enumerate() {
        if s.kind == SHT_STRTAB && s.size > 0 && byte(s.offset + s.size - 1) != 0 {
            return Err(err(
                s.at,
                format!("string table {i} does not end with a NUL"),
            ));
        }
    }
    for (i, s) in sections.iter().enumerate() {
        if i > 0 && s.name >= names.size {
            return Err(err(
                s.at,
                format!(
                    "section {i}'s name is at byte {} of a {}-byte name table",
                    s.name, names.size
                ),
            ));
        }
        match s.kind {
            SHT_SYMTAB | SHT_DYNSYM => check_symbols(&img, i, s, &sections, shnum)?,
            SHT_REL | SHT_RELA => check_relocations(&img, i, s, &sections, shnum)?,
            SHT_NOTE => check_notes(&img, i, s)?,
            SHT_CUDA_INFO => check_attributes(&img, i, s)?,
            k if SHT_CUDA_RECORDS.contains(&k) => check_attributes(&img, i, s)?,
            _ => {}
        }
    }
    check_layout(&img, (phoff, phnum, shoff, shnum), &sections, &segments)
}

/// The image's parts do not overlap and the segments are made of whole sections: the ELF
/// header, the two header tables and every section with file bytes are disjoint and aligned,
/// and a segment's file bytes are the program header table (`PT_PHDR`, or a `PT_LOAD` of it)
/// or run from the start of one section to the end of another (padded to the segment's
/// alignment), cutting none. The driver copies segments to the GPU and reads sections through
/// their own offsets; an image where the two disagree, or where one table lies over another's
/// bytes, is not one a compiler wrote.
fn check_layout(
    img: &Image<'_>,
    (phoff, phnum, shoff, shnum): (u64, u64, u64, u64),
    sections: &[Section],
    segments: &[Segment],
) -> Result<(), FormatError> {
    let e_type = img.u16(0x10).unwrap_or(0);
    if e_type != ET_REL && e_type != ET_EXEC {
        return Err(err(
            0x10,
            format!("file type {e_type} is neither ET_REL (1) nor ET_EXEC (2)"),
        ));
    }
    if shoff % 8 != 0 {
        return Err(err(
            0x28,
            format!("the section headers at byte {shoff} are not 8-byte aligned"),
        ));
    }
    if phnum > 0 && phoff % 8 != 0 {
        return Err(err(
            0x20,
            format!("the program headers at byte {phoff} are not 8-byte aligned"),
        ));
    }
    if phnum == 0 && phoff != 0 {
        return Err(err(
            0x20,
            format!("no program headers, but e_phoff is {phoff} (not 0)"),
        ));
    }
    if let Some(s) = sections.first() {
        if (
            s.name, s.kind, s.offset, s.size, s.link, s.info, s.align, s.entsize,
        ) != (0, SHT_NULL, 0, 0, 0, 0, 0, 0)
            || img.u64(s.at + 8) != Some(0)
            || img.u64(s.at + 16) != Some(0)
        {
            return Err(err(s.at, "section 0 (SHN_UNDEF) is not all zeros"));
        }
    }
    for (i, s) in sections.iter().enumerate() {
        if s.has_file_bytes() {
            if s.entsize > 0 && s.size % s.entsize != 0 {
                return Err(err(
                    s.at,
                    format!(
                        "section {i} ({} bytes) is not a whole number of its {}-byte entries",
                        s.size, s.entsize
                    ),
                ));
            }
        } else if s.offset > img.len() || s.size > MAX_MEMORY {
            return Err(err(
                s.at,
                format!(
                    "section {i} reserves {} bytes of memory at file position {}: past the end ({} bytes) or more than {MAX_MEMORY}",
                    s.size,
                    s.offset,
                    img.len()
                ),
            ));
        }
    }
    // (start, end, what) of every part with file bytes; table extents were checked, so no
    // overflow.
    let mut parts: Vec<(u64, u64, String)> = vec![
        (0, EHDR_SIZE, "the ELF header".to_string()),
        (
            shoff,
            shoff + shnum * SHDR_SIZE,
            "the section headers".to_string(),
        ),
    ];
    if phnum > 0 {
        parts.push((
            phoff,
            phoff + phnum * PHDR_SIZE,
            "the program headers".to_string(),
        ));
    }
    for (i, s) in sections.iter().enumerate() {
        if !s.has_file_bytes() || s.size == 0 {
            continue;
        }
        if s.align > 1 && (!s.align.is_power_of_two() || s.offset % s.align != 0) {
            return Err(err(
                s.at,
                format!(
                    "section {i} at byte {} is not aligned to its alignment {}",
                    s.offset, s.align
                ),
            ));
        }
        parts.push((s.offset, s.offset + s.size, format!("section {i}")));
    }
    parts.sort_by_key(|p| (p.0, p.1));
    // Two sections may name the same bytes (sm_100's `.nv.merc.*` sections alias constant banks
    // exactly); anything else that shares bytes is refused.
    parts.dedup_by(|b, a| {
        (a.0, a.1) == (b.0, b.1) && a.2.starts_with("section") && b.2.starts_with("section")
    });
    for w in parts.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(err(
                w[1].0,
                format!(
                    "{} (bytes {}..{}) overlaps {} (bytes {}..{})",
                    w[1].2, w[1].0, w[1].1, w[0].2, w[0].0, w[0].1
                ),
            ));
        }
    }
    let table = (phoff, phoff + phnum * PHDR_SIZE);
    for (i, g) in segments.iter().enumerate() {
        if g.memsz < g.filesz {
            return Err(err(
                g.at,
                format!(
                    "segment {i} has fewer bytes in memory ({}) than in the file ({})",
                    g.memsz, g.filesz
                ),
            ));
        }
        if g.kind == PT_PHDR && (g.offset, g.offset + g.filesz) != table {
            return Err(err(
                g.at,
                format!("segment {i} (PT_PHDR) is not the program header table"),
            ));
        }
        if g.memsz > MAX_MEMORY {
            return Err(err(
                g.at,
                format!(
                    "segment {i} takes {} bytes of memory (more than {MAX_MEMORY})",
                    g.memsz
                ),
            ));
        }
        if g.filesz == 0 {
            // Memory only: it starts where a section does (the sections it reserves).
            if !sections.iter().skip(1).any(|s| s.offset == g.offset) {
                return Err(err(
                    g.at,
                    format!(
                        "segment {i} (memory only) starts at byte {}, where no section starts",
                        g.offset
                    ),
                ));
            }
            continue;
        }
        let (start, end) = (g.offset, g.offset + g.filesz);
        if (start, end) == table {
            continue;
        }
        // Sections with file bytes lie inside the image (checked), so their ends do not overflow.
        let mut filled = sections
            .iter()
            .filter(|s| s.has_file_bytes() && s.size > 0)
            .map(|s| (s.offset, s.offset + s.size));
        // The end is a section's end, or that end padded to the segment's alignment (nvcc pads a
        // 23-byte `.nv.global.init` to a 24-byte segment).
        let pad = if g.align.is_power_of_two() && g.align <= 4096 {
            g.align.max(8)
        } else {
            8
        };
        // Or it runs on to where the next section starts, over padding only: nvcc 13's sm_110
        // cubins end a `.nv.global.init` segment at the 16-byte aligned section after it.
        let padding_to_next = |b: u64| {
            sections.iter().skip(1).any(|s| s.offset == end)
                && !sections.iter().any(|s| s.has_file_bytes() && s.size > 0 && b < s.offset && s.offset < end)
        };
        let whole = filled.clone().any(|(a, _)| a == start)
            && filled
                .clone()
                .any(|(_, b)| b <= end && (end <= b.next_multiple_of(pad) || padding_to_next(b)));
        let cut = filled.any(|(a, b)| a < end && start < b && !(start <= a && b <= end));
        if !whole || cut {
            return Err(err(
                g.at,
                format!(
                    "segment {i} (bytes {start}..{end}) does not run from the start of a section to the end of one"
                ),
            ));
        }
    }
    Ok(())
}

fn check_symbols(
    img: &Image<'_>,
    i: usize,
    s: &Section,
    sections: &[Section],
    shnum: u64,
) -> Result<(), FormatError> {
    if s.entsize != SYM_SIZE || s.size % SYM_SIZE != 0 {
        return Err(err(
            s.at,
            format!(
                "symbol table {i} has {}-byte entries and {} bytes (entries are 24 bytes)",
                s.entsize, s.size
            ),
        ));
    }
    let strings = match usize::try_from(s.link).ok().and_then(|l| sections.get(l)) {
        Some(t) if t.kind == SHT_STRTAB => t,
        _ => {
            return Err(err(
                s.at,
                format!(
                    "symbol table {i} links section {}, not a string table",
                    s.link
                ),
            ));
        }
    };
    for k in 0..s.size / SYM_SIZE {
        let at = s.offset + k * SYM_SIZE;
        let name = img.u32(at).unwrap_or(u64::MAX);
        let shndx = img.u16(at + 6).unwrap_or(u64::MAX);
        if name >= strings.size {
            return Err(err(
                at,
                format!(
                    "symbol {k} of table {i}: its name is at byte {name} of a {}-byte string table",
                    strings.size
                ),
            ));
        }
        if shndx >= shnum && shndx < SHN_LORESERVE {
            return Err(err(
                at,
                format!("symbol {k} of table {i} is in section {shndx}, past the {shnum} sections"),
            ));
        }
        // A symbol defined in a section lies inside it (the loader resolves kernels, constant
        // banks and globals through these extents).
        if shndx != 0 && shndx < SHN_LORESERVE {
            let (value, size) = (
                img.u64(at + 8).unwrap_or(u64::MAX),
                img.u64(at + 16).unwrap_or(u64::MAX),
            );
            let host = usize::try_from(shndx).ok().and_then(|h| sections.get(h));
            if let Some(host) = host.filter(|h| h.kind != SHT_NULL) {
                if value.checked_add(size).is_none_or(|end| end > host.size) {
                    return Err(err(
                        at,
                        format!(
                            "symbol {k} of table {i} covers bytes {value}..+{size} of section {shndx}, which has {} bytes",
                            host.size
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_relocations(
    img: &Image<'_>,
    i: usize,
    s: &Section,
    sections: &[Section],
    shnum: u64,
) -> Result<(), FormatError> {
    let entry = if s.kind == SHT_RELA { 24 } else { 16 };
    if s.entsize != entry || s.size % entry != 0 {
        return Err(err(
            s.at,
            format!(
                "relocation table {i} has {}-byte entries and {} bytes (entries are {entry} bytes)",
                s.entsize, s.size
            ),
        ));
    }
    let symbols = match usize::try_from(s.link).ok().and_then(|l| sections.get(l)) {
        Some(t) if matches!(t.kind, SHT_SYMTAB | SHT_DYNSYM) => t,
        _ => {
            return Err(err(
                s.at,
                format!(
                    "relocation table {i} links section {}, not a symbol table",
                    s.link
                ),
            ));
        }
    };
    if s.info >= shnum {
        return Err(err(
            s.at,
            format!(
                "relocation table {i} applies to section {}, past the {shnum} sections",
                s.info
            ),
        ));
    }
    let nsyms = symbols.size / SYM_SIZE;
    for k in 0..s.size / entry {
        let at = s.offset + k * entry;
        let sym = img.u64(at + 8).unwrap_or(u64::MAX) >> 32;
        if sym >= nsyms {
            return Err(err(
                at,
                format!("relocation {k} of table {i} names symbol {sym}, past the {nsyms} symbols"),
            ));
        }
        // The place it patches lies inside the section it applies to (4 bytes at least).
        let offset = img.u64(at).unwrap_or(u64::MAX);
        let target = usize::try_from(s.info).ok().and_then(|t| sections.get(t));
        if let Some(target) = target.filter(|t| s.info != 0 && t.kind != SHT_NULL) {
            if offset.checked_add(4).is_none_or(|end| end > target.size) {
                return Err(err(
                    at,
                    format!(
                        "relocation {k} of table {i} patches byte {offset} of section {}, which has {} bytes",
                        s.info, target.size
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// ELF notes: `namesz`, `descsz`, `type`, then the name and the descriptor, each padded to 4.
fn check_notes(img: &Image<'_>, i: usize, s: &Section) -> Result<(), FormatError> {
    let pad4 = |n: u64| n.checked_add(3).map(|n| n & !3);
    let mut pos = 0u64;
    while pos < s.size {
        let at = s.offset + pos;
        let len = match (img.u32(at), img.u32(at + 4)) {
            (Some(name), Some(desc)) if s.size - pos >= 12 => pad4(name)
                .zip(pad4(desc))
                .and_then(|(n, d)| n.checked_add(d)?.checked_add(12)),
            _ => None,
        };
        match len {
            Some(len) if len <= s.size - pos => pos += len,
            _ => {
                return Err(err(
                    at,
                    format!(
                        "a note at byte {pos} of note section {i} runs past its {} bytes",
                        s.size
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `.nv.info` attribute records: a format byte and an attribute byte, then a 2-byte value
/// (formats 1 to 3) or a 2-byte size and that many bytes (format 4). A format this reader does not
/// know ends the walk without an error (a newer toolkit's records are the driver's business).
fn check_attributes(img: &Image<'_>, i: usize, s: &Section) -> Result<(), FormatError> {
    let mut pos = 0u64;
    while pos < s.size {
        let at = s.offset + pos;
        let len = match img.u8(at) {
            Some(1..=3) => Some(4),
            Some(4) => img.u16(at + 2).map(|n| n + 4),
            _ => return Ok(()),
        };
        match len {
            Some(len) if s.size - pos >= 4 && len <= s.size - pos => pos += len,
            _ => {
                return Err(err(
                    at,
                    format!(
                        "an attribute record at byte {pos} of section {i} runs past its {} bytes",
                        s.size
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal cubin: header, a name table, a string table, a symbol table with one symbol,
    /// a note, an attribute section and a relocation table, then one program header and the
    /// section headers.
    pub(crate) fn tiny() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[6] = 1;
        b[0x10..0x12].copy_from_slice(&2u16.to_le_bytes());
        b[0x12..0x14].copy_from_slice(&EM_CUDA.to_le_bytes());
        b[0x14..0x18].copy_from_slice(&1u32.to_le_bytes());
        b[0x34..0x36].copy_from_slice(&64u16.to_le_bytes());
        let names = b"\0.shstrtab\0.strtab\0.symtab\0.note\0.nv.info\0.rela\0";
        let names_at = b.len() as u64;
        b.extend_from_slice(names);
        let strings_at = b.len() as u64;
        b.extend_from_slice(b"\0kernel\0");
        while b.len() % 8 != 0 {
            b.push(0);
        }
        let syms_at = b.len() as u64;
        b.extend_from_slice(&[0; 24]); // the null symbol
        let mut sym = [0u8; 24];
        sym[..4].copy_from_slice(&1u32.to_le_bytes());
        sym[6..8].copy_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&sym);
        let note_at = b.len() as u64;
        for v in [4u32, 4, 1000] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(b"NVDA1234");
        let info_at = b.len() as u64;
        b.extend_from_slice(&[0x04, 0x2f, 4, 0, 1, 2, 3, 4, 0x03, 0x1b, 0xff, 0x00]);
        let rela_at = b.len() as u64;
        let mut rela = [0u8; 24];
        rela[8..16].copy_from_slice(&(1u64 << 32).to_le_bytes());
        b.extend_from_slice(&rela);
        let phoff = b.len() as u64;
        let mut ph = [0u8; 56];
        ph[..4].copy_from_slice(&1u32.to_le_bytes());
        ph[8..16].copy_from_slice(&syms_at.to_le_bytes());
        ph[32..40].copy_from_slice(&48u64.to_le_bytes());
        ph[40..48].copy_from_slice(&48u64.to_le_bytes());
        b.extend_from_slice(&ph);
        let shoff = b.len() as u64;
        let mut sh = |name: u32, kind: u32, off: u64, size: u64, link: u32, info: u32, ent: u64| {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&off.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            h[40..44].copy_from_slice(&link.to_le_bytes());
            h[44..48].copy_from_slice(&info.to_le_bytes());
            h[56..64].copy_from_slice(&ent.to_le_bytes());
            b.extend_from_slice(&h);
        };
        sh(0, 0, 0, 0, 0, 0, 0);
        sh(1, SHT_STRTAB, names_at, names.len() as u64, 0, 0, 0);
        sh(11, SHT_STRTAB, strings_at, 8, 0, 0, 0);
        sh(19, SHT_SYMTAB, syms_at, 48, 2, 1, 24);
        sh(27, SHT_NOTE, note_at, 20, 0, 0, 0);
        sh(33, SHT_CUDA_INFO, info_at, 12, 3, 0, 0);
        sh(42, SHT_RELA, rela_at, 24, 3, 1, 24);
        sh(33, SHT_NOBITS, shoff, 1 << 30, 0, 0, 0);
        b[0x20..0x28].copy_from_slice(&phoff.to_le_bytes());
        b[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        b[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        b[0x38..0x3A].copy_from_slice(&1u16.to_le_bytes());
        b[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        b[0x3C..0x3E].copy_from_slice(&8u16.to_le_bytes());
        b[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        b
    }

    fn shdr(b: &[u8], i: usize) -> usize {
        let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap()) as usize;
        shoff + 64 * i
    }

    fn rejects(b: &[u8], what: &str) -> String {
        match check(b) {
            Ok(()) => panic!("accepted: {what}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_well_formed_image_passes() {
        check(&tiny()).unwrap();
    }

    #[test]
    fn headers_and_identity() {
        assert!(rejects(&tiny()[..40], "short").contains("shorter than an ELF header"));
        let mut b = tiny();
        b[4] = 1;
        assert!(rejects(&b, "32-bit").contains("64-bit"));
        let mut b = tiny();
        b[5] = 2;
        assert!(rejects(&b, "big-endian").contains("little-endian"));
        let mut b = tiny();
        b[0x12] = 62;
        assert!(rejects(&b, "x86-64").contains("EM_CUDA"));
        let mut b = tiny();
        b[0x34] = 52;
        assert!(rejects(&b, "ehsize").contains("header size"));
        let mut b = tiny();
        b[0x3A] = 40;
        assert!(rejects(&b, "shentsize").contains("section header size"));
        let mut b = tiny();
        b[0x36] = 32;
        assert!(rejects(&b, "phentsize").contains("program header size"));
    }

    #[test]
    fn tables_and_contents_must_lie_inside() {
        let len = tiny().len() as u64;
        let mut b = tiny();
        b[0x28..0x30].copy_from_slice(&(len - 64).to_le_bytes());
        assert!(rejects(&b, "shoff").contains("section headers"));
        let mut b = tiny();
        b[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(rejects(&b, "shoff overflow").contains("section headers"));
        let mut b = tiny();
        b[0x3C] = 0xff;
        assert!(rejects(&b, "shnum").contains("section headers"));
        let mut b = tiny();
        b[0x20..0x28].copy_from_slice(&len.to_le_bytes());
        assert!(rejects(&b, "phoff").contains("program headers"));
        // A segment's bytes.
        let mut b = tiny();
        let phoff = u64::from_le_bytes(b[0x20..0x28].try_into().unwrap()) as usize;
        b[phoff + 32..phoff + 40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(rejects(&b, "filesz").contains("segment 0"));
        // A section's bytes (offset, then size); NOBITS sections are exempt (section 7 is one).
        let mut b = tiny();
        let s = shdr(&b, 4);
        b[s + 24..s + 32].copy_from_slice(&(len - 4).to_le_bytes());
        assert!(rejects(&b, "sh_offset").contains("section 4"));
        let mut b = tiny();
        b[s + 32..s + 40].copy_from_slice(&(u64::MAX - 2).to_le_bytes());
        assert!(rejects(&b, "sh_size").contains("section 4"));
    }

    #[test]
    fn names_symbols_relocations_notes_and_attributes() {
        let mut b = tiny();
        b[0x3E] = 9;
        assert!(rejects(&b, "shstrndx").contains("past the 8 sections"));
        let mut b = tiny();
        b[0x3E] = 3;
        assert!(rejects(&b, "shstrndx kind").contains("not a string table"));
        let mut b = tiny();
        b[0x3E] = 0;
        assert!(rejects(&b, "no names").contains("e_shstrndx is 0"));
        let mut b = tiny();
        let s = shdr(&b, 2);
        b[s..s + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(rejects(&b, "sh_name").contains("name table"));
        // A string table without its final NUL.
        let mut b = tiny();
        let at = u64::from_le_bytes(b[shdr(&b, 2) + 24..shdr(&b, 2) + 32].try_into().unwrap());
        b[at as usize + 7] = b'x';
        assert!(rejects(&b, "strtab NUL").contains("does not end with a NUL"));
        // A symbol's name and section.
        let syms =
            u64::from_le_bytes(b[shdr(&b, 3) + 24..shdr(&b, 3) + 32].try_into().unwrap()) as usize;
        let mut b = tiny();
        b[syms + 24] = 8;
        assert!(rejects(&b, "st_name").contains("symbol 1"));
        let mut b = tiny();
        b[syms + 24 + 6] = 8;
        assert!(rejects(&b, "st_shndx").contains("section 8"));
        let mut b = tiny();
        let h = shdr(&b, 3);
        b[h + 40] = 1;
        check(&b).unwrap(); // the name table is a string table too
        let h = shdr(&b, 3);
        b[h + 40] = 4;
        assert!(rejects(&b, "sh_link").contains("not a string table"));
        // Relocations: the symbol, the target section, the entry size.
        let rela =
            u64::from_le_bytes(b[shdr(&b, 6) + 24..shdr(&b, 6) + 32].try_into().unwrap()) as usize;
        let mut b = tiny();
        b[rela + 12] = 2;
        assert!(rejects(&b, "r_sym").contains("symbol 2"));
        let mut b = tiny();
        let h = shdr(&b, 6);
        b[h + 44] = 8;
        assert!(rejects(&b, "rela info").contains("applies to section 8"));
        let mut b = tiny();
        let h = shdr(&b, 6);
        b[h + 56] = 16;
        assert!(rejects(&b, "rela entsize").contains("entries are 24"));
        // A note whose descriptor runs past its section.
        let note =
            u64::from_le_bytes(b[shdr(&b, 4) + 24..shdr(&b, 4) + 32].try_into().unwrap()) as usize;
        let mut b = tiny();
        b[note + 4] = 5;
        assert!(rejects(&b, "descsz").contains("note"));
        let mut b = tiny();
        b[note + 3] = 0xff;
        assert!(rejects(&b, "namesz").contains("note"));
        // An attribute record whose size runs past its section; an unknown format ends the walk.
        let info =
            u64::from_le_bytes(b[shdr(&b, 5) + 24..shdr(&b, 5) + 32].try_into().unwrap()) as usize;
        let mut b = tiny();
        b[info + 2] = 9;
        assert!(rejects(&b, "SVAL size").contains("attribute record"));
        let mut b = tiny();
        b[info + 8] = 0x77;
        check(&b).unwrap();
    }

    #[test]
    fn the_layout_is_one_a_compiler_writes() {
        let phoff = |b: &[u8]| u64::from_le_bytes(b[0x20..0x28].try_into().unwrap()) as usize;
        let off = |b: &[u8], i: usize| {
            u64::from_le_bytes(b[shdr(b, i) + 24..shdr(b, i) + 32].try_into().unwrap())
        };
        // Two sections sharing bytes: the string table moved into the symbol table.
        let mut b = tiny();
        let (h, syms) = (shdr(&b, 2), off(&b, 3));
        b[h + 24..h + 32].copy_from_slice(&(syms + 16).to_le_bytes());
        b[(syms + 16 + 7) as usize] = 0; // keep its final NUL
        assert!(rejects(&b, "overlap").contains("overlaps"));
        // The program headers moved over the section headers.
        let mut b = tiny();
        let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap());
        b[0x20..0x28].copy_from_slice(&shoff.to_le_bytes());
        assert!(rejects(&b, "phdrs over shdrs").contains("overlaps"));
        // A segment that cuts its section, or ends inside one.
        let mut b = tiny();
        let p = phoff(&b);
        let inside = off(&b, 3) + 8;
        b[p + 8..p + 16].copy_from_slice(&inside.to_le_bytes());
        b[p + 32..p + 40].copy_from_slice(&40u64.to_le_bytes());
        assert!(rejects(&b, "cut").contains("segment 0"));
        let mut b = tiny();
        b[p + 32..p + 40].copy_from_slice(&24u64.to_le_bytes());
        assert!(rejects(&b, "short segment").contains("segment 0"));
        // Less memory than file bytes; a memory-only segment where no section starts; too much.
        let mut b = tiny();
        b[p + 40..p + 48].copy_from_slice(&8u64.to_le_bytes());
        assert!(rejects(&b, "memsz").contains("fewer bytes in memory"));
        let mut b = tiny();
        b[p + 32..p + 40].copy_from_slice(&0u64.to_le_bytes());
        b[p + 8..p + 16].copy_from_slice(&3u64.to_le_bytes());
        assert!(rejects(&b, "memory-only").contains("where no section starts"));
        let mut b = tiny();
        b[p + 40..p + 48].copy_from_slice(&(1u64 << 41).to_le_bytes());
        assert!(rejects(&b, "huge memsz").contains("more than"));
        // PT_PHDR must be the table.
        let mut b = tiny();
        b[p..p + 4].copy_from_slice(&6u32.to_le_bytes());
        assert!(rejects(&b, "PT_PHDR").contains("PT_PHDR"));
        // Whole entries; section 0; e_phoff without program headers; alignment; e_type.
        let mut b = tiny();
        let h = shdr(&b, 4); // the 20-byte note, given 8-byte entries
        b[h + 56] = 8;
        assert!(rejects(&b, "entries").contains("whole number"));
        let mut b = tiny();
        let h = shdr(&b, 0);
        b[h + 8] = 1;
        assert!(rejects(&b, "section 0").contains("section 0"));
        let mut b = tiny();
        b[0x38] = 0;
        assert!(rejects(&b, "phoff").contains("e_phoff"));
        let mut b = tiny();
        let h = shdr(&b, 3);
        b[h + 48] = 16;
        if off(&b, 3) % 16 != 0 {
            assert!(rejects(&b, "align").contains("aligned"));
        }
        b[h + 48] = 3;
        assert!(rejects(&b, "align 3").contains("aligned"));
        let mut b = tiny();
        b[0x10] = 3;
        assert!(rejects(&b, "ET_DYN").contains("file type"));
        // NOBITS memory past 1 TiB.
        let mut b = tiny();
        let h = shdr(&b, 7);
        b[h + 32..h + 40].copy_from_slice(&(1u64 << 41).to_le_bytes());
        assert!(rejects(&b, "nobits").contains("section 7"));
    }

    #[test]
    fn a_segment_padded_to_the_next_section_passes() {
        // `nvcc -cubin -arch=sm_110` (13.0) of a kernel calling sinf: its `.nv.global.init` (24
        // bytes) is the start of a 32-byte segment that ends where `.nv.constant0` starts.
        check(include_bytes!("testdata/sin_sm_110.cubin")).unwrap();
    }

    #[test]
    fn no_input_panics() {
        // Every truncation, and every single-byte overwrite of the headers with boundary values.
        let good = tiny();
        for n in 0..good.len() {
            let _ = check(&good[..n]);
        }
        for at in 0..good.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0xfe, 0xff] {
                let mut b = good.clone();
                b[at] = v;
                let _ = check(&b);
            }
        }
    }
}
