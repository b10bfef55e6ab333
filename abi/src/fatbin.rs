//! The fat binary format: reading which targets a fat binary holds, from its headers alone (no
//! cuobjdump needed). The build crate lists the targets of what nvcc made with it; the runtime
//! checks a fat binary with it before the driver (which is not told the length) reads one.
//!
//! The layout, little-endian, as nvcc 12/13 writes it (`nvcc -fatbin`; checked against its output):
//!
//! ```text
//! container header, 16 bytes:
//!   +0  u32 magic        0xBA55ED50
//!   +4  u16 version      1
//!   +6  u16 header size  16 (the entries start here)
//!   +8  u64 size         bytes of entries that follow the header
//! entry header, `header size` bytes (64 for ELF, 80 for PTX, 112 for sm_100 ELF), then the payload:
//!   +0  u16 kind         1 = PTX, 2 = ELF (a cubin), others (e.g. LTO IR) exist
//!   +2  u16 version      0x0101
//!   +4  u32 header size  offset of the payload from the start of the entry
//!   +8  u64 payload size (padded); the next entry starts at +header size +payload size
//!   +16 u32 compressed size   bytes of compressed data at the payload's start (0: not compressed)
//!   +20 u32 options offset    from the entry's start, of a (u32 offset, u32 size) pair locating
//!                             the ptxas options (PTX entries; 0: none)
//!   +28 u32 arch         the SM version: 80 for sm_80 / compute_80
//!   +32 u32 name offset, +36 u32 name size: the object's name, from the entry's start (0: none)
//!   +40 u64 flags        0x1 64-bit, 0x10 Linux, 0x2000 LZ4-compressed, 0x8000 zstd-compressed,
//!                        0x10_0000 arch-specific (`sm_90a`, `compute_90a`; `arch` is still 90),
//!                        0x20_0000 family-specific (`sm_100f`; read as plain `sm_100`)
//!   +56 u64 uncompressed size (compressed entries)
//! ```
//!
//! A file may hold several containers back to back (a linker concatenates them); all are read.
//! [`entries`] lists them; [`check`] also checks what the driver reads inside each entry, since it
//! is not told the file's length: the options and name it locates through the header, an
//! uncompressed cubin's own tables ([`crate::cubin::check`]), an uncompressed PTX text's NUL, and
//! a compressed payload's declared sizes (the compressed bytes inside the payload; for zstd, the
//! frame's own content size equal to the declared uncompressed size). The offsets of the header
//! fields past +8 were read from nvcc 13's output (`-compress-mode` none, speed, balance, size).

use std::fmt;

/// The magic number that starts every fat binary container.
pub const MAGIC: u32 = 0xBA55_ED50;

const CONTAINER_HEADER: usize = 16;
/// The fields read from an entry header end at +32; real headers are 64 bytes or more.
const MIN_ENTRY_HEADER: usize = 32;

/// What one entry of a fat binary holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// PTX for the virtual architecture `compute_<arch>`, compiled by the driver at load time.
    Ptx,
    /// A cubin (ELF) with machine code (SASS) for `sm_<arch>`.
    Elf,
    /// Another kind (e.g. LTO IR), by its number.
    Other(u16),
}

/// One entry of a fat binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What the payload is (machine code, PTX, other).
    pub kind: EntryKind,
    /// The SM version, `major * 10 + minor`: 90 for sm_90 and for sm_90a.
    pub arch: u32,
    /// Arch-specific code (`sm_90a`, `compute_90a`): it runs on compute capability `arch` exactly,
    /// and its PTX compiles for no other architecture.
    pub specific: bool,
    /// The payload's size in bytes (as stored, padded).
    pub size: u64,
}

impl Entry {
    /// The target name nvcc uses for it: `sm_90` (ELF), `compute_90` (PTX), `sm_90a` /
    /// `compute_90a` (arch-specific); `None` for other kinds.
    pub fn target(&self) -> Option<String> {
        let suffix = if self.specific { "a" } else { "" };
        match self.kind {
            EntryKind::Elf => Some(format!("sm_{}{suffix}", self.arch)),
            EntryKind::Ptx => Some(format!("compute_{}{suffix}", self.arch)),
            EntryKind::Other(_) => None,
        }
    }
}

/// Bytes that are not a well-formed fat binary: what is wrong and at which byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The byte offset in the fat binary where the problem is.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a valid fat binary: {} (at byte {})",
            self.message, self.offset
        )
    }
}

impl std::error::Error for FormatError {}

/// Every entry of every container in `bytes`, in file order.
pub fn entries(bytes: &[u8]) -> Result<Vec<Entry>, FormatError> {
    Ok(walk(bytes)?.into_iter().map(|p| p.entry).collect())
}

/// [`entries`], after checking that everything the driver reads inside each entry lies inside
/// it (see the module documentation): the check the runtime makes before the driver sees a fat
/// binary.
pub fn check(bytes: &[u8]) -> Result<Vec<Entry>, FormatError> {
    let placed = walk(bytes)?;
    for p in &placed {
        check_entry(bytes, p)?;
    }
    Ok(placed.into_iter().map(|p| p.entry).collect())
}

/// An entry and where it lies in the file.
struct Placed {
    entry: Entry,
    /// The entry header's offset.
    at: usize,
    /// The header's size: the payload starts at `at + header`.
    header: usize,
    /// The offset one past the payload.
    end: usize,
}

/// Flags (+40) of compressed payloads.
const FLAG_LZ4: u64 = 0x2000;
/// Flag (+40) of arch-specific code (`sm_90a`, `compute_90a`), checked against nvcc 13.0's output.
const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
/// The end of the flags field: a header shorter than this has no flags.
const FLAGS_END: usize = 48;
const FLAG_ZSTD: u64 = 0x8000;
/// The header fields [`check`] reads end at +64 (every real header is at least that long).
const CHECKED_ENTRY_HEADER: usize = 64;
/// Neither LZ4 (at most 255:1) nor zstd (at most 128 KiB out of a 4-byte block: 32768:1) expands
/// data by more than this.
const MAX_EXPANSION: u64 = 65536;
/// The first bytes of a zstd frame (nvcc's `-compress-mode=size` payloads, and cuprum-build's
/// compressed parts).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

fn check_entry(bytes: &[u8], p: &Placed) -> Result<(), FormatError> {
    let err = |offset: usize, message: String| FormatError { offset, message };
    let at = p.at;
    let extent = p.end - at;
    if p.header < CHECKED_ENTRY_HEADER {
        return Err(err(
            at,
            format!("entry header size {} is below {CHECKED_ENTRY_HEADER}", p.header),
        ));
    }
    let field32 = |o: usize| read_u32(bytes, at + o).map_or(u64::MAX, u64::from);
    let field64 = |o: usize| read_u64(bytes, at + o).unwrap_or(u64::MAX);
    let inside = |offset: u64, size: u64| offset.checked_add(size).is_some_and(|e| e <= extent as u64);
    // What the header locates: the ptxas options and the object's name.
    let options = field32(20);
    if options != 0 {
        if !inside(options, 8) || options + 8 > p.header as u64 {
            return Err(err(
                at,
                format!("the entry's options field (at +{options}) lies outside its {}-byte header", p.header),
            ));
        }
        let (offset, size) = (field32(options as usize), field32(options as usize + 4));
        if size > 0 && !inside(offset, size) {
            return Err(err(
                at,
                format!("the entry's options ({size} bytes at +{offset}) run past the entry's {extent} bytes"),
            ));
        }
    }
    let (name, name_len) = (field32(32), field32(36));
    if (name != 0 || name_len != 0) && !inside(name, name_len) {
        return Err(err(
            at,
            format!("the entry's name ({name_len} bytes at +{name}) runs past the entry's {extent} bytes"),
        ));
    }
    let payload = bytes.get(at + p.header..p.end).unwrap_or_default();
    let flags = field64(40);
    if flags & (FLAG_LZ4 | FLAG_ZSTD) != 0 {
        let compressed = field32(16);
        let uncompressed = field64(56);
        if compressed == 0 || compressed > payload.len() as u64 {
            return Err(err(
                at,
                format!(
                    "the entry's compressed size {compressed} is not within its {}-byte payload",
                    payload.len()
                ),
            ));
        }
        if uncompressed == 0 || uncompressed > compressed.saturating_mul(MAX_EXPANSION) {
            return Err(err(
                at,
                format!(
                    "the entry's uncompressed size {uncompressed} is impossible for {compressed} compressed bytes"
                ),
            ));
        }
        if payload.starts_with(&ZSTD_MAGIC) {
            if let Some(declared) = zstd_content_size(payload) {
                if declared != uncompressed {
                    return Err(err(
                        at + p.header,
                        format!(
                            "the zstd frame holds {declared} bytes but the entry declares {uncompressed}"
                        ),
                    ));
                }
            }
        }
        return Ok(());
    }
    match p.entry.kind {
        EntryKind::Elf => crate::cubin::check(payload).map_err(|e| {
            err(
                (at + p.header).saturating_add(usize::try_from(e.offset).unwrap_or(usize::MAX)),
                format!("its sm_{} cubin: {}", p.entry.arch, e.message),
            )
        }),
        EntryKind::Ptx if !payload.contains(&0) => Err(err(
            at + p.header,
            format!("the compute_{} PTX text is not NUL-terminated within its entry", p.entry.arch),
        )),
        _ => Ok(()),
    }
}

/// The content size a zstd frame header declares, when it declares one (RFC 8878, 3.1.1.1).
fn zstd_content_size(frame: &[u8]) -> Option<u64> {
    let descriptor = *frame.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    let fcs_bytes = match descriptor >> 6 {
        0 if single_segment => 1,
        0 => return None,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let start = 5 + usize::from(!single_segment) + dict_bytes;
    let field = frame.get(start..start + fcs_bytes)?;
    let mut v = [0u8; 8];
    v[..fcs_bytes].copy_from_slice(field);
    let v = u64::from_le_bytes(v);
    Some(if fcs_bytes == 2 { v + 256 } else { v })
}

/// Every entry of every container, with its place; checks the containers' and entries' sizes.
fn walk(bytes: &[u8]) -> Result<Vec<Placed>, FormatError> {
    let err = |offset: usize, message: String| FormatError { offset, message };
    let mut out = Vec::new();
    let mut pos = 0;
    if bytes.is_empty() {
        return Err(err(0, "the file is empty".into()));
    }
    while pos < bytes.len() {
        let magic =
            read_u32(bytes, pos).ok_or_else(|| err(pos, "truncated container header".into()))?;
        if magic != MAGIC {
            return Err(err(
                pos,
                format!("magic is {magic:#010x}, expected {MAGIC:#010x}"),
            ));
        }
        let header_size = usize::from(
            read_u16(bytes, pos + 6)
                .ok_or_else(|| err(pos, "truncated container header".into()))?,
        );
        let size = read_u64(bytes, pos + 8)
            .ok_or_else(|| err(pos, "truncated container header".into()))?;
        if header_size < CONTAINER_HEADER {
            return Err(err(
                pos,
                format!("container header size {header_size} is below {CONTAINER_HEADER}"),
            ));
        }
        let start = pos + header_size;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                err(
                    pos,
                    format!(
                        "the container claims {size} bytes but the file has {} after its header",
                        bytes.len().saturating_sub(start)
                    ),
                )
            })?;
        let mut at = start;
        while at < end {
            if end - at < MIN_ENTRY_HEADER {
                return Err(err(at, "truncated entry header".into()));
            }
            let kind = read_u16(bytes, at).unwrap_or_default();
            let entry_header = read_u32(bytes, at + 4).unwrap_or_default() as usize;
            let payload = read_u64(bytes, at + 8).unwrap_or_default();
            let arch = read_u32(bytes, at + 28).unwrap_or_default();
            let flags = if entry_header >= FLAGS_END {
                read_u64(bytes, at + 40).unwrap_or_default()
            } else {
                0
            };
            if entry_header < MIN_ENTRY_HEADER {
                return Err(err(
                    at,
                    format!("entry header size {entry_header} is below {MIN_ENTRY_HEADER}"),
                ));
            }
            let next = usize::try_from(payload)
                .ok()
                .and_then(|p| at.checked_add(entry_header)?.checked_add(p))
                .filter(|&n| n <= end)
                .ok_or_else(|| {
                    err(
                        at,
                        format!(
                            "the entry's payload ({payload} bytes) runs past the container's end"
                        ),
                    )
                })?;
            let kind = match kind {
                1 => EntryKind::Ptx,
                2 => EntryKind::Elf,
                k => EntryKind::Other(k),
            };
            out.push(Placed {
                entry: Entry {
                    kind,
                    arch,
                    specific: flags & FLAG_ARCH_SPECIFIC != 0,
                    size: payload,
                },
                at,
                header: entry_header,
                end: next,
            });
            at = next;
        }
        pos = end;
        // Containers are 8-byte aligned; zero padding may follow the last one.
        while bytes.get(pos) == Some(&0) && pos % 8 != 0 {
            pos += 1;
        }
        if bytes.get(pos..).unwrap_or_default().iter().all(|&b| b == 0) {
            break;
        }
    }
    Ok(out)
}

/// A piece of a fat binary: its targets (`sm_80`, `sm_86`) and the fat binary holding them.
pub type Piece = (Vec<String>, Vec<u8>);

/// The fat binary split into one fat binary per *family* of targets, each a container header
/// and its entries verbatim, with the family's targets in file order: the machine code of one
/// major architecture together (`sm_80`, `sm_86`, `sm_89`: a GPU runs machine code of its own
/// major architecture only, and these differ little, so compressed together they take about a
/// fifth of their room apart; `sm_90a` with `sm_90`), each PTX alone (`compute_90`,
/// `compute_90a`). `None` when that leaves one
/// family, when two entries have the same target, or when an entry is of another kind (LTO IR):
/// then the fat binary stays whole. A program loads only the piece its GPU runs
/// (`crate::parts`, "Targets").
pub fn split_by_family(bytes: &[u8]) -> Result<Option<Vec<Piece>>, FormatError> {
    let placed = walk(bytes)?;
    // (family: machine code and its major architecture, or PTX and its architecture and suffix;
    // targets; the entries' byte ranges)
    type Family = ((bool, u32, bool), Vec<String>, Vec<(usize, usize)>);
    let mut families: Vec<Family> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for p in &placed {
        let Some(target) = p.entry.target() else {
            return Ok(None);
        };
        if seen.contains(&target) {
            return Ok(None);
        }
        seen.push(target.clone());
        let key = match p.entry.kind {
            EntryKind::Elf => (true, p.entry.arch / 10, false),
            _ => (false, p.entry.arch, p.entry.specific),
        };
        match families.iter_mut().find(|f| f.0 == key) {
            Some(f) => {
                f.1.push(target);
                f.2.push((p.at, p.end));
            }
            None => families.push((key, vec![target], vec![(p.at, p.end)])),
        }
    }
    if families.len() < 2 {
        return Ok(None);
    }
    let out = families
        .into_iter()
        .map(|(_, targets, ranges)| {
            let body: usize = ranges.iter().map(|(a, b)| b - a).sum();
            let mut piece = Vec::with_capacity(CONTAINER_HEADER + body);
            piece.extend_from_slice(&MAGIC.to_le_bytes());
            piece.extend_from_slice(&1u16.to_le_bytes());
            piece.extend_from_slice(&(CONTAINER_HEADER as u16).to_le_bytes());
            piece.extend_from_slice(&(body as u64).to_le_bytes());
            for (a, b) in ranges {
                piece.extend_from_slice(&bytes[a..b]);
            }
            (targets, piece)
        })
        .collect();
    Ok(Some(out))
}

/// The targets a fat binary holds, as nvcc names them (`sm_80`, `sm_90`, `compute_90`), in file
/// order, each once. Entries of other kinds (LTO IR) are not listed.
pub fn targets(bytes: &[u8]) -> Result<Vec<String>, FormatError> {
    let mut out: Vec<String> = Vec::new();
    for target in entries(bytes)?.iter().filter_map(Entry::target) {
        if !out.contains(&target) {
            out.push(target);
        }
    }
    Ok(out)
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry with a `header`-byte header and `payload` bytes of payload.
    fn entry(kind: u16, arch: u32, header: u32, payload: usize) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend(kind.to_le_bytes());
        e.extend(0x0101u16.to_le_bytes());
        e.extend(header.to_le_bytes());
        e.extend((payload as u64).to_le_bytes());
        e.resize(28, 0);
        e.extend(arch.to_le_bytes());
        e.resize(header as usize + payload, 0xAB);
        e
    }

    fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut c = Vec::new();
        c.extend(MAGIC.to_le_bytes());
        c.extend(1u16.to_le_bytes());
        c.extend(16u16.to_le_bytes());
        c.extend((body.len() as u64).to_le_bytes());
        c.extend(body);
        c
    }

    #[test]
    fn lists_cubins_and_ptx_in_order() {
        let fb = container(&[
            entry(2, 80, 64, 24),
            entry(2, 90, 64, 8),
            entry(1, 90, 80, 16),
        ]);
        assert_eq!(targets(&fb).unwrap(), ["sm_80", "sm_90", "compute_90"]);
        let e = entries(&fb).unwrap();
        assert_eq!(
            e[0],
            Entry {
                kind: EntryKind::Elf,
                arch: 80,
                specific: false,
                size: 24
            }
        );
    }

    #[test]
    fn splits_into_one_fat_binary_per_family_of_targets() {
        let both = container(&[entry(2, 90, 64, 24), entry(1, 90, 80, 40)]);
        let pieces = split_by_family(&both).unwrap().unwrap();
        let names: Vec<&[String]> = pieces.iter().map(|p| p.0.as_slice()).collect();
        assert_eq!(names, [["sm_90"], ["compute_90"]]);
        for (targets, piece) in &pieces {
            let e = entries(piece).unwrap();
            assert_eq!(e.len(), 1);
            assert_eq!(e[0].target().as_ref(), Some(&targets[0]));
        }
        assert_eq!(pieces[0].1.len() + pieces[1].1.len(), both.len() + 16);
        // Machine code of one major architecture stays together, in file order; PTX apart.
        let many = container(&[
            entry(2, 80, 64, 8),
            entry(2, 90, 64, 16),
            entry(2, 86, 64, 24),
            entry(1, 90, 80, 8),
            entry(2, 89, 64, 32),
        ]);
        let pieces = split_by_family(&many).unwrap().unwrap();
        let names: Vec<Vec<&str>> = pieces.iter().map(|p| p.0.iter().map(String::as_str).collect()).collect();
        assert_eq!(names, [vec!["sm_80", "sm_86", "sm_89"], vec!["sm_90"], vec!["compute_90"]]);
        let ampere = entries(&pieces[0].1).unwrap();
        assert_eq!(ampere.iter().map(|e| (e.arch, e.size)).collect::<Vec<_>>(), [(80, 8), (86, 24), (89, 32)]);
        // One family, a repeated target, or an entry of another kind: whole.
        assert_eq!(split_by_family(&container(&[entry(2, 90, 64, 8)])).unwrap(), None);
        assert_eq!(
            split_by_family(&container(&[entry(2, 80, 64, 8), entry(2, 86, 64, 8)])).unwrap(),
            None
        );
        assert_eq!(
            split_by_family(&container(&[entry(2, 90, 64, 8), entry(2, 90, 64, 8)])).unwrap(),
            None
        );
        assert_eq!(
            split_by_family(&container(&[entry(2, 90, 64, 8), entry(7, 90, 64, 8)])).unwrap(),
            None
        );
        assert!(split_by_family(&both[..20]).is_err());
    }

    /// [`entry`] with the arch-specific flag.
    fn specific_entry(kind: u16, arch: u32, header: u32, payload: usize) -> Vec<u8> {
        let mut e = entry(kind, arch, header, payload);
        e[40..48].copy_from_slice(&(0x11 | FLAG_ARCH_SPECIFIC).to_le_bytes());
        e
    }

    #[test]
    fn names_arch_specific_entries_with_their_suffix() {
        let fb = container(&[
            entry(2, 80, 64, 8),
            specific_entry(2, 90, 64, 8),
            specific_entry(1, 90, 80, 8),
            entry(2, 90, 64, 8),
            entry(1, 90, 80, 8),
        ]);
        assert_eq!(
            targets(&fb).unwrap(),
            ["sm_80", "sm_90a", "compute_90a", "sm_90", "compute_90"]
        );
        let e = entries(&fb).unwrap();
        assert!(e[1].specific && e[1].arch == 90 && !e[3].specific);
        // sm_90a with sm_90 (both Hopper machine code); each PTX alone.
        let names: Vec<Vec<String>> = split_by_family(&fb).unwrap().unwrap().into_iter().map(|p| p.0).collect();
        assert_eq!(
            names,
            [vec!["sm_80"], vec!["sm_90a", "sm_90"], vec!["compute_90a"], vec!["compute_90"]]
        );
    }

    #[test]
    fn reads_nvccs_arch_specific_fat_binary() {
        // `nvcc -fatbin -compress-mode=none -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]'`
        // (nvcc 13.0) of `extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }`.
        let fb = include_bytes!("testdata/add_one_sm_90a.fatbin");
        let e = check(fb).unwrap();
        assert_eq!(targets(fb).unwrap(), ["sm_90a", "compute_90a"]);
        assert!(e.iter().all(|e| e.arch == 90 && e.specific));
    }

    #[test]
    fn reads_concatenated_containers_and_skips_other_kinds() {
        let mut fb = container(&[entry(2, 75, 64, 8)]);
        fb.extend(container(&[entry(4, 90, 64, 8), entry(2, 75, 64, 8)]));
        fb.extend([0; 8]);
        assert_eq!(entries(&fb).unwrap().len(), 3);
        assert_eq!(targets(&fb).unwrap(), ["sm_75"]);
    }

    /// An entry as nvcc writes it: `header` bytes of header with the flags, the sizes and (for
    /// PTX) the options pair, then `payload`.
    fn real_entry(kind: u16, header: u32, flags: u64, compressed: u32, uncompressed: u64, payload: &[u8]) -> Vec<u8> {
        let mut e = entry(kind, 90, header, 0);
        e.truncate(32);
        e.resize(header as usize, 0);
        e[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        e[16..20].copy_from_slice(&compressed.to_le_bytes());
        e[40..48].copy_from_slice(&flags.to_le_bytes());
        e[56..64].copy_from_slice(&uncompressed.to_le_bytes());
        if kind == 1 {
            e[20..24].copy_from_slice(&64u32.to_le_bytes());
            e[64..68].copy_from_slice(&72u32.to_le_bytes());
        }
        e.extend_from_slice(payload);
        e
    }

    fn ptx() -> Vec<u8> {
        b".version 9.0\n.target sm_90\n\0\0\0".to_vec()
    }

    #[test]
    fn check_reads_inside_each_entry() {
        let cubin = crate::cubin::tests::tiny();
        let good = container(&[real_entry(1, 80, 0x11, 0, 0, &ptx()), real_entry(2, 64, 0x11, 0, 0, &cubin)]);
        assert_eq!(check(&good).unwrap(), entries(&good).unwrap());

        let fails = |fb: &[u8], what: &str| -> String {
            let e = check(fb).expect_err(what).to_string();
            assert!(entries(fb).is_ok(), "{what}: the listing still reads it");
            e
        };
        // A damaged cubin inside: the error names the entry's cubin and the cubin's problem.
        let mut bad = cubin.clone();
        bad[0x28..0x30].copy_from_slice(&(cubin.len() as u64).to_le_bytes());
        let e = fails(&container(&[real_entry(2, 64, 0x11, 0, 0, &bad)]), "cubin");
        assert!(e.contains("sm_90 cubin") && e.contains("section headers"), "{e}");
        // PTX without its NUL.
        let e = fails(&container(&[real_entry(1, 80, 0x11, 0, 0, b".version 9.0\n")]), "ptx");
        assert!(e.contains("NUL"), "{e}");
        // The options pair outside the header, the options or the name outside the entry.
        let mut e1 = real_entry(1, 80, 0x11, 0, 0, &ptx());
        e1[20..24].copy_from_slice(&76u32.to_le_bytes());
        assert!(fails(&container(&[e1]), "options offset").contains("options field"));
        let mut e2 = real_entry(1, 80, 0x11, 0, 0, &ptx());
        e2[68..72].copy_from_slice(&1000u32.to_le_bytes());
        assert!(fails(&container(&[e2]), "options size").contains("options ("));
        let mut e3 = real_entry(2, 64, 0x11, 0, 0, &cubin);
        e3[32..36].copy_from_slice(&60u32.to_le_bytes());
        e3[36..40].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(fails(&container(&[e3]), "name").contains("name"));
        // A header too short to hold the fields read.
        assert!(fails(&container(&[entry(2, 90, 48, 8)]), "short header").contains("below 64"));
    }

    #[test]
    fn check_compressed_sizes() {
        // A zstd frame header declaring 1238 bytes (2-byte content size: 1238 - 256 = 0x3d6).
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x60, 0xd6, 0x03];
        frame.resize(40, 0x55);
        let zstd = |c: u32, u: u64| container(&[real_entry(1, 80, 0x8011, c, u, &frame)]);
        check(&zstd(38, 1238)).unwrap();
        assert!(check(&zstd(38, 1239)).unwrap_err().message.contains("zstd frame holds 1238"));
        assert!(check(&zstd(41, 1238)).unwrap_err().message.contains("compressed size 41"));
        assert!(check(&zstd(0, 1238)).unwrap_err().message.contains("compressed size 0"));
        assert!(check(&zstd(38, 0)).unwrap_err().message.contains("uncompressed size 0"));
        assert!(check(&zstd(38, u64::MAX)).unwrap_err().message.contains("impossible"));
        // LZ4 (no frame header): only the sizes.
        let lz4 = container(&[real_entry(2, 64, 0x2011, 40, 6152, &[0x13; 40])]);
        check(&lz4).unwrap();
        assert_eq!(zstd_content_size(&[0x28, 0xb5, 0x2f, 0xfd, 0x20, 7]), Some(7));
        assert_eq!(zstd_content_size(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 7]), None);
        assert_eq!(zstd_content_size(&[0x28, 0xb5, 0x2f, 0xfd, 0xa0, 1, 0, 0]), None);
        assert_eq!(zstd_content_size(&[0x28, 0xb5, 0x2f, 0xfd, 0xa0, 1, 0, 0, 0]), Some(1));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(targets(&[]).unwrap_err().message.contains("empty"));
        let elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        assert!(targets(elf).unwrap_err().message.contains("magic"));
        let mut short = container(&[entry(2, 80, 64, 24)]);
        short.truncate(short.len() - 1);
        assert!(targets(&short).unwrap_err().message.contains("claims"));
        // The container is consistent but the entry's payload size points past it.
        let mut lying = container(&[entry(2, 80, 64, 24)]);
        lying[16 + 8] = 200;
        let e = targets(&lying).unwrap_err();
        assert_eq!(e.offset, 16);
        assert!(e.message.contains("runs past"), "{e}");
    }
}
