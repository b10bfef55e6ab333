//! What a cache entry holds: a compiled image, its kind and the lowered names of its name
//! expressions. Encoded as a small versioned binary record (the disk layer adds the checksum).

/// The kind of a module image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// Machine code for one architecture (an ELF file).
    Cubin,
    /// PTX text; the driver compiles it for the GPU at load time.
    Ptx,
    /// A fat binary (several cubins and/or PTX).
    Fatbin,
}

impl ImageKind {
    fn tag(self) -> u8 {
        match self {
            ImageKind::Cubin => 1,
            ImageKind::Ptx => 2,
            ImageKind::Fatbin => 3,
        }
    }

    fn from_tag(t: u8) -> Option<ImageKind> {
        Some(match t {
            1 => ImageKind::Cubin,
            2 => ImageKind::Ptx,
            3 => ImageKind::Fatbin,
            _ => return None,
        })
    }

    /// Guesses the kind from the first bytes: ELF magic -> cubin, fatbin magic -> fatbin,
    /// anything else is taken as PTX text.
    pub fn sniff(bytes: &[u8]) -> ImageKind {
        if bytes.starts_with(b"\x7fELF") {
            ImageKind::Cubin
        } else if bytes.len() >= 4
            && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == cuprum_abi::fatbin::MAGIC
        {
            ImageKind::Fatbin
        } else {
            ImageKind::Ptx
        }
    }

    /// The usual file extension (`cubin`, `ptx`, `fatbin`).
    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::Cubin => "cubin",
            ImageKind::Ptx => "ptx",
            ImageKind::Fatbin => "fatbin",
        }
    }
}

/// A compiled module image and the lowered (mangled) names of its name expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledImage {
    /// What the image is (cubin, PTX or fat binary).
    pub kind: ImageKind,
    /// The image's bytes, as the driver loads them.
    pub image: Vec<u8>,
    /// `(name expression, lowered name)` pairs, e.g. `("fx3<float>", "_Z3fx3IfEvPT_i")`.
    pub lowered_names: Vec<(String, String)>,
}

const ENTRY_VERSION: u8 = 1;

impl CompiledImage {
    /// The lowered name of a name expression given at compile time.
    pub fn lowered_name(&self, expression: &str) -> Option<&str> {
        self.lowered_names
            .iter()
            .find(|(e, _)| e == expression)
            .map(|(_, l)| l.as_str())
    }

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let names: usize = self
            .lowered_names
            .iter()
            .map(|(a, b)| a.len() + b.len() + 8)
            .sum();
        let mut out = Vec::with_capacity(self.image.len() + names + 16);
        out.push(ENTRY_VERSION);
        out.push(self.kind.tag());
        out.extend_from_slice(&(self.lowered_names.len() as u32).to_le_bytes());
        for (expr, lowered) in &self.lowered_names {
            put_bytes(&mut out, expr.as_bytes());
            put_bytes(&mut out, lowered.as_bytes());
        }
        out.extend_from_slice(&(self.image.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.image);
        out
    }

    /// Parses a record; `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<CompiledImage> {
        let mut r = Reader(bytes);
        if r.u8()? != ENTRY_VERSION {
            return None;
        }
        let kind = ImageKind::from_tag(r.u8()?)?;
        let n = r.u32()? as usize;
        let mut lowered_names = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            let e = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            let l = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            lowered_names.push((e, l));
        }
        let len = usize::try_from(r.u64()?).ok()?;
        let image = r.take(len)?.to_vec();
        if !r.0.is_empty() {
            return None;
        }
        Some(CompiledImage {
            kind,
            image,
            lowered_names,
        })
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_garbage() {
        let img = CompiledImage {
            kind: ImageKind::Cubin,
            image: b"\x7fELF rest".to_vec(),
            lowered_names: vec![("fx3<float>".into(), "_Z3fx3IfEvPT_i".into())],
        };
        let enc = img.encode();
        assert_eq!(CompiledImage::decode(&enc), Some(img.clone()));
        assert_eq!(img.lowered_name("fx3<float>"), Some("_Z3fx3IfEvPT_i"));
        for cut in 0..enc.len() {
            assert_eq!(CompiledImage::decode(&enc[..cut]), None, "cut {cut}");
        }
        let mut longer = enc.clone();
        longer.push(0);
        assert_eq!(CompiledImage::decode(&longer), None);
    }

    #[test]
    fn sniffing() {
        assert_eq!(ImageKind::sniff(b"\x7fELF...."), ImageKind::Cubin);
        assert_eq!(
            ImageKind::sniff(&0xBA55_ED50u32.to_le_bytes()),
            ImageKind::Fatbin
        );
        assert_eq!(ImageKind::sniff(b"//\n.version 8.0"), ImageKind::Ptx);
    }
}
