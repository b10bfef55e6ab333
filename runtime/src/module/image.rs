//! The checks a module image passes before the driver sees it (docs/architecture.md, The lookup
//! chain): the driver reads an image without being told its length.

use std::borrow::Cow;

use crate::cache::ImageKind;
use crate::error::{Error, Result};

/// Checks that `image` is self-consistent enough for the driver, which reads it without being
/// told its length: PTX must be NUL-terminated (a copy with the NUL is made when needed), an ELF
/// cubin's headers and tables must lie inside the buffer, a fatbin's containers and entries must
/// lie inside it (read by `cuprum_abi::fatbin`, the reader the build crate uses too).
pub(super) fn checked_image<'a>(
    kind: ImageKind,
    image: &'a [u8],
    what: &str,
) -> Result<Cow<'a, [u8]>> {
    let bad = |detail: &str| Error::ModuleLoad {
        what: what.to_string(),
        detail: detail.to_string(),
    };
    let u16_at = |o: usize| {
        image
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
    };
    let u64_at = |o: usize| {
        image
            .get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    match kind {
        ImageKind::Ptx => {
            if image.is_empty() {
                return Err(bad("empty PTX"));
            }
            if image.ends_with(&[0]) {
                Ok(Cow::Borrowed(image))
            } else {
                let mut v = image.to_vec();
                v.push(0);
                Ok(Cow::Owned(v))
            }
        }
        ImageKind::Cubin => {
            // ELF64 little-endian only (what nvcc and NVRTC produce).
            if image.len() < 64 || image[4] != 2 || image[5] != 1 {
                return Err(bad("not a 64-bit little-endian ELF file"));
            }
            let len = image.len() as u64;
            let (phoff, shoff) = (u64_at(0x20), u64_at(0x28));
            let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
            let (shentsize, shnum) = (u16_at(0x3A), u16_at(0x3C));
            let (Some(phoff), Some(shoff), Some(phe), Some(phn), Some(she), Some(shn)) =
                (phoff, shoff, phentsize, phnum, shentsize, shnum)
            else {
                return Err(bad("truncated ELF header"));
            };
            let fits = |off: u64, n: u64, size: u64| {
                n == 0 || off.checked_add(n * size).is_some_and(|e| e <= len)
            };
            if !fits(phoff, phn, phe) || !fits(shoff, shn, she) {
                return Err(bad("truncated ELF file"));
            }
            Ok(Cow::Borrowed(image))
        }
        ImageKind::Fatbin => match cuprum_abi::fatbin::entries(image) {
            Ok(_) => Ok(Cow::Borrowed(image)),
            Err(e) => Err(bad(&e.to_string())),
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
