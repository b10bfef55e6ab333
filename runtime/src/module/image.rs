//! The checks a module image passes before the driver sees it (docs/architecture.md, The lookup
//! chain): the driver reads an image without being told its length.

use std::borrow::Cow;

use crate::cache::ImageKind;
use crate::error::{Error, Result};

/// Checks that `image` is self-consistent enough for the driver, which reads it without being
/// told its length: PTX must be NUL-terminated (a copy with the NUL is made when needed); a cubin's
/// header, program and section header tables, segments, sections, names, symbols, relocations,
/// notes and attribute records must lie inside the buffer (`cuprum_abi::cubin::check`); a fat
/// binary's containers and entries must lie inside it, and inside each entry its options, its
/// name, an uncompressed cubin (checked as above), an uncompressed PTX text's NUL and a compressed
/// payload's declared sizes (`cuprum_abi::fatbin::check`, the reader the build crate uses too).
/// Every load goes through here: user images, the parts of embedded fat binaries, disk cache
/// entries and NVRTC's output.
pub(super) fn checked_image<'a>(
    kind: ImageKind,
    image: &'a [u8],
    what: &str,
) -> Result<Cow<'a, [u8]>> {
    let bad = |detail: String| Error::ModuleLoad {
        what: what.to_string(),
        detail,
    };
    match kind {
        ImageKind::Ptx => {
            // Whatever starts with neither magic number is taken for PTX: text, then NULs.
            let text_len = image.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let text = &image[..text_len];
            if text.is_empty() {
                return Err(bad("empty PTX".to_string()));
            }
            if let Some(at) = text.iter().position(|&b| b == 0) {
                return Err(bad(format!(
                    "not a cubin, a fat binary or PTX text: no ELF or fat binary magic number, \
                     and a NUL byte at byte {at} (PTX is text)"
                )));
            }
            match std::str::from_utf8(text) {
                Err(e) => {
                    return Err(bad(format!(
                        "not a cubin, a fat binary or PTX text: no ELF or fat binary magic \
                         number, and bytes that are not UTF-8 at byte {} (PTX is text)",
                        e.valid_up_to()
                    )));
                }
                Ok(t) if !t.contains(".version") => {
                    return Err(bad(
                        "not a cubin, a fat binary or PTX text: no ELF or fat binary magic \
                         number, and no `.version` directive (every PTX text starts with one)"
                            .to_string(),
                    ));
                }
                Ok(_) => {}
            }
            if image.ends_with(&[0]) {
                Ok(Cow::Borrowed(image))
            } else {
                let mut v = image.to_vec();
                v.push(0);
                Ok(Cow::Owned(v))
            }
        }
        ImageKind::Cubin => match cuprum_abi::cubin::check(image) {
            Ok(()) => Ok(Cow::Borrowed(image)),
            Err(e) => Err(bad(e.to_string())),
        },
        ImageKind::Fatbin => match cuprum_abi::fatbin::check(image) {
            Ok(_) => Ok(Cow::Borrowed(image)),
            Err(e) => Err(bad(e.to_string())),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::module::RawModule;

    #[test]
    fn images_are_checked_before_the_driver_sees_them() {
        assert!(RawModule::from_bytes(b"\x7fELF\x02\x01 short".to_vec()).is_err());
        let mut fat = 0xBA55_ED50u32.to_le_bytes().to_vec();
        fat.extend_from_slice(&[1, 0, 16, 0]);
        fat.extend_from_slice(&1000u64.to_le_bytes());
        let e = RawModule::from_bytes(fat).unwrap_err().to_string();
        assert!(e.contains("not a valid fat binary") && e.contains("claims 1000 bytes"), "{e}");
        assert!(RawModule::from_bytes(Vec::new()).is_err());
        // PTX text gets its NUL.
        let m = RawModule::from_bytes(b".version 8.0\n.target sm_90\n".to_vec()).unwrap();
        assert!(m.code().is_none());
        let e = RawModule::from_file("no/such/file.cubin")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no/such/file.cubin"), "{e}");
    }
}
