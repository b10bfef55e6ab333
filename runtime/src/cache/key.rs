//! The cache key: a SHA-256 over everything that determines a compiled image, computed without
//! running a compiler.
//!
//! Covered: the CUDA source, the embedded headers (by digest), the effective compile options (the
//! target architecture and the debug flags are among them), the name expressions, the target
//! (`sm_90` or `compute_90`), the NVRTC version and cuprum's version. Each field is written with a
//! tag and a length prefix, so no two different inputs serialize to the same bytes.

use std::fmt;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// Bumped when the serialization below or the entry format changes.
const KEY_FORMAT: u32 = 1;

/// A 256-bit cache key. Its hex form names the entry on disk.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A key from raw bytes (for tests and tools).
    pub fn from_bytes(bytes: [u8; 32]) -> CacheKey {
        CacheKey(bytes)
    }

    /// 64 lower-case hex digits.
    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            let _ = write!(s, "{b:02x}");
        }
        s
    }

    /// Parses 64 hex digits (either case).
    pub fn from_hex(s: &str) -> Option<CacheKey> {
        if s.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16)?;
            let lo = (pair[1] as char).to_digit(16)?;
            out[i] = (hi * 16 + lo) as u8;
        }
        Some(CacheKey(out))
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({})", self.hex())
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// The digest of a set of headers (name and text of each, in order). The runtime's build script
/// computes the digest of the embedded headers with it (`nvrtc::EMBEDDED_HEADERS_DIGEST`); in the
/// library only the test of that constant calls it.
#[cfg_attr(not(test), allow(dead_code))]
pub fn headers_digest(headers: &[(&str, &str)]) -> [u8; 32] {
    let mut h = Sha256::new();
    field(&mut h, b"nheaders", &(headers.len() as u64).to_le_bytes());
    for (name, text) in headers {
        field(&mut h, b"hname", name.as_bytes());
        field(&mut h, b"htext", text.as_bytes());
    }
    h.finalize().into()
}

/// Everything a compiled image depends on.
#[derive(Clone, Copy, Debug)]
pub struct KeyInputs<'a> {
    /// The CUDA C source.
    pub source: &'a str,
    /// `headers_digest` of the headers handed to the compiler.
    pub headers_digest: [u8; 32],
    /// The complete option list given to the compiler (architecture and debug flags included).
    pub options: &'a [String],
    /// Name expressions whose lowered names the entry records.
    pub name_expressions: &'a [String],
    /// The code target, e.g. `sm_90` (CUBIN) or `compute_90` (PTX).
    pub target: &'a str,
    /// The compiler's version (NVRTC's major and minor).
    pub compiler_version: (i32, i32),
    /// cuprum's version; [`KeyInputs::new`] fills in this crate's `CARGO_PKG_VERSION`.
    pub cuprum_version: &'a str,
}

impl<'a> KeyInputs<'a> {
    /// Inputs with cuprum's own version filled in.
    pub fn new(
        source: &'a str,
        headers_digest: [u8; 32],
        options: &'a [String],
        name_expressions: &'a [String],
        target: &'a str,
        compiler_version: (i32, i32),
    ) -> Self {
        KeyInputs {
            source,
            headers_digest,
            options,
            name_expressions,
            target,
            compiler_version,
            cuprum_version: env!("CARGO_PKG_VERSION"),
        }
    }

    /// The key. Pure: the same inputs give the same key in every process and on every machine.
    pub fn key(&self) -> CacheKey {
        let mut h = Sha256::new();
        field(&mut h, b"cuprum-kernel-cache", &KEY_FORMAT.to_le_bytes());
        field(&mut h, b"cuprum", self.cuprum_version.as_bytes());
        field(&mut h, b"compiler", b"nvrtc");
        field(&mut h, b"cmajor", &self.compiler_version.0.to_le_bytes());
        field(&mut h, b"cminor", &self.compiler_version.1.to_le_bytes());
        field(&mut h, b"target", self.target.as_bytes());
        field(&mut h, b"headers", &self.headers_digest);
        field(
            &mut h,
            b"noptions",
            &(self.options.len() as u64).to_le_bytes(),
        );
        for o in self.options {
            field(&mut h, b"option", o.as_bytes());
        }
        field(
            &mut h,
            b"nnames",
            &(self.name_expressions.len() as u64).to_le_bytes(),
        );
        for n in self.name_expressions {
            field(&mut h, b"name", n.as_bytes());
        }
        field(&mut h, b"source", self.source.as_bytes());
        CacheKey(h.finalize().into())
    }
}

/// One tagged, length-prefixed field.
fn field(h: &mut Sha256, tag: &[u8], value: &[u8]) {
    h.update((tag.len() as u32).to_le_bytes());
    h.update(tag);
    h.update((value.len() as u64).to_le_bytes());
    h.update(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The disk cache's keys and checksums are SHA-256 digests: a change of digest would orphan
    /// every user's entries (`runtime/src/tests/cache.rs` pins a whole key too).
    #[test]
    fn sha256_known_vectors() {
        let hex = |d: [u8; 32]| CacheKey::from_bytes(d).hex();
        assert_eq!(
            hex(Sha256::digest(b"").into()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(Sha256::digest(b"abc").into()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(Sha256::digest(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").into()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let million_a = vec![b'a'; 1_000_000];
        assert_eq!(
            hex(Sha256::digest(&million_a).into()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
