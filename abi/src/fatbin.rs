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
//! entry header, `header size` bytes (64 for ELF, 80 for PTX), then the payload:
//!   +0  u16 kind         1 = PTX, 2 = ELF (a cubin), others (e.g. LTO IR) exist
//!   +2  u16 version      0x0101
//!   +4  u32 header size  offset of the payload from the start of the entry
//!   +8  u64 payload size (padded); the next entry starts at +header size +payload size
//!   +28 u32 arch         the SM version: 80 for sm_80 / compute_80
//! ```
//!
//! A file may hold several containers back to back (a linker concatenates them); all are read.

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
    pub kind: EntryKind,
    /// The SM version, `major * 10 + minor`: 90 for sm_90.
    pub arch: u32,
    /// The payload's size in bytes (as stored, padded).
    pub size: u64,
}

impl Entry {
    /// The target name nvcc uses for it: `sm_90` (ELF), `compute_90` (PTX); `None` for other kinds.
    pub fn target(&self) -> Option<String> {
        match self.kind {
            EntryKind::Elf => Some(format!("sm_{}", self.arch)),
            EntryKind::Ptx => Some(format!("compute_{}", self.arch)),
            EntryKind::Other(_) => None,
        }
    }
}

/// Bytes that are not a well-formed fat binary: what is wrong and at which byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub offset: usize,
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
            out.push(Entry {
                kind,
                arch,
                size: payload,
            });
            at = next;
        }
        pos = end;
        // Containers are 8-byte aligned; zero padding may follow the last one.
        while pos < bytes.len() && pos % 8 != 0 && bytes[pos] == 0 {
            pos += 1;
        }
        if bytes[pos..].iter().all(|&b| b == 0) {
            break;
        }
    }
    Ok(out)
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
                size: 24
            }
        );
    }

    #[test]
    fn reads_concatenated_containers_and_skips_other_kinds() {
        let mut fb = container(&[entry(2, 75, 64, 8)]);
        fb.extend(container(&[entry(4, 90, 64, 8), entry(2, 75, 64, 8)]));
        fb.extend([0; 8]);
        assert_eq!(entries(&fb).unwrap().len(), 3);
        assert_eq!(targets(&fb).unwrap(), ["sm_75"]);
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
