//! A kernel's part of its unit's fat binary, as embedded: the fat binary nvcc wrote, or (the
//! default, `CUPRUM_NVCC_COMPRESS=zstd`; docs/building.md, "Size and load time") one zstd frame of
//! it that cuprum-build made, with the unit's dictionary when its listing has one
//! ([`cuprum_abi::parts::DICTIONARY`]). A frame is decompressed here with libzstd, several times faster than
//! the driver decompresses nvcc's compressed cubins, and the images inside it are then checked
//! like any other ([`crate::module::RawModule::from_bytes`]) before the driver sees them.

use std::borrow::Cow;

/// The most a frame may declare (a fat binary of one kernel is a few MB at most): a larger
/// declared size is damage, not a part, and is not allocated.
const MAX_PART: u64 = 1 << 30;

/// The fat binary of the part `bytes`: the bytes themselves, or what their zstd frame holds
/// (`dictionary`: the unit's, empty when it has none). A frame that does not declare its size,
/// declares more than 1 GiB, or does not decompress to exactly that size is an error that says
/// which.
pub fn fatbin_of<'a>(bytes: &'a [u8], dictionary: &[u8]) -> Result<Cow<'a, [u8]>, String> {
    fatbin_with(bytes, &mut None, dictionary)
}

/// [`fatbin_of`] with a decompression context kept by the caller: made with `dictionary` at the
/// first frame, then reused, so a unit digests its dictionary once, not at every part (20-30 us
/// each on the GPU machine's host; docs/building.md, "Size and load time").
pub fn fatbin_with<'a>(
    bytes: &'a [u8],
    context: &mut Option<zstd::bulk::Decompressor<'static>>,
    dictionary: &[u8],
) -> Result<Cow<'a, [u8]>, String> {
    if !bytes.starts_with(&cuprum_abi::fatbin::ZSTD_MAGIC) {
        return Ok(Cow::Borrowed(bytes));
    }
    let size = match zstd::zstd_safe::get_frame_content_size(bytes) {
        Ok(Some(n)) if n <= MAX_PART => n as usize,
        Ok(Some(n)) => {
            return Err(format!(
                "its zstd frame declares {n} bytes (more than {MAX_PART})"
            ));
        }
        Ok(None) => return Err("its zstd frame does not declare its size".into()),
        Err(_) => return Err("its zstd frame header is damaged".into()),
    };
    let fail = |e: std::io::Error| format!("its zstd frame does not decompress: {e}");
    let plain = prepared(context, dictionary)
        .map_err(fail)?
        .decompress(bytes, size)
        .map_err(fail)?;
    if plain.len() != size {
        return Err(format!(
            "its zstd frame holds {} bytes, not the {size} it declares",
            plain.len()
        ));
    }
    Ok(Cow::Owned(plain))
}

/// The decompression context in `context`, made with `dictionary` (digesting it) when there is
/// none yet.
pub(crate) fn prepared<'c>(
    context: &'c mut Option<zstd::bulk::Decompressor<'static>>,
    dictionary: &[u8],
) -> std::io::Result<&'c mut zstd::bulk::Decompressor<'static>> {
    match context {
        Some(d) => Ok(d),
        None => Ok(context.insert(zstd::bulk::Decompressor::with_dictionary(dictionary)?)),
    }
}

/// Runs zstd's decompressor once on a small frame, so that its code and tables are in memory
/// before a first call decompresses a part (a warm-up hook's work: `unit::prepare_units`).
pub(crate) fn warm_decompressor() {
    let data = [7u8; 4096];
    if let Ok(frame) = zstd::bulk::compress(&data, 1) {
        let _ = fatbin_of(&frame, &[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_decompressed_and_checked() {
        let data: Vec<u8> = (0..4096u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        assert!(matches!(fatbin_of(&data, &[]), Ok(Cow::Borrowed(_))));
        let z = zstd::bulk::compress(&data, 3).unwrap();
        assert_eq!(fatbin_of(&z, &[]).unwrap().as_ref(), data.as_slice());
        // Truncated, damaged, or declaring too much: errors, no panic, no huge allocation.
        assert!(fatbin_of(&z[..z.len() / 2], &[]).is_err());
        for at in 4..z.len() {
            let mut d = z.clone();
            d[at] ^= 0x55;
            let _ = fatbin_of(&d, &[]);
        }
        let mut huge = z.clone();
        // Frame header descriptor: single segment, an 8-byte content size (0xE0), then 2^62.
        huge.splice(4..z.len(), [0xE0u8, 0, 0, 0, 0, 0, 0, 0, 0x40]);
        assert!(fatbin_of(&huge, &[]).unwrap_err().contains("declares"));
        // One context for many frames, after a failure too.
        let mut context = None;
        assert!(fatbin_with(&z[..z.len() / 2], &mut context, &[]).is_err());
        for _ in 0..3 {
            assert_eq!(
                fatbin_with(&z, &mut context, &[]).unwrap().as_ref(),
                data.as_slice()
            );
        }
    }
}
