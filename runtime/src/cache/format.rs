//! The entry file's format, and what is wrong with a damaged one.
//!
//! An entry file is `MAGIC`, the format version, the key, the payload's length, the payload and a
//! SHA-256 over everything before it. [`decode`] accepts a file only when all of them agree with
//! the key it is read for; otherwise it says which check failed ([`Damage`]), so that a lookup
//! can treat the entry as a miss and `cuprum cache verify` can say what is wrong with it.

use std::fmt;

use sha2::{Digest, Sha256};

use super::key::CacheKey;

const MAGIC: &[u8; 8] = b"CUPRUMKC";
const FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8;
const CHECKSUM_LEN: usize = 32;

/// Why an entry is not usable. A damaged entry is a miss; the next write replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Something other than a regular file has the entry's name (`what`: "a FIFO", "a
    /// directory", ...). It is never opened, so it cannot block a reader.
    NotAFile(&'static str),
    /// The file could not be read (the I/O error's text).
    Unreadable(String),
    /// Shorter than an entry's header and checksum.
    TooShort(u64),
    /// Does not start with cuprum's magic bytes.
    NotAnEntry,
    /// Written in another entry format.
    Format(u32),
    /// Holds the entry of another key (`key`: the one in its header).
    OtherKey(CacheKey),
    /// The header's payload length disagrees with the file's size (a torn or extended file).
    Length {
        /// The payload length the header records.
        header: u64,
        /// The payload length the file has.
        actual: u64,
    },
    /// The checksum does not match (flipped bits, or an interrupted write).
    Checksum,
    /// The file is whole, but its payload is not a compiled image (`CompiledImage::decode`).
    Payload,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::NotAFile(what) => write!(f, "{what}, not a regular file"),
            Damage::Unreadable(e) => write!(f, "cannot be read: {e}"),
            Damage::TooShort(n) => write!(
                f,
                "{n} bytes, shorter than an entry's header and checksum ({} bytes)",
                HEADER_LEN + CHECKSUM_LEN
            ),
            Damage::NotAnEntry => f.write_str("not a cuprum cache entry (wrong magic bytes)"),
            Damage::Format(v) => write!(f, "entry format {v}; this cuprum reads format {FORMAT}"),
            Damage::OtherKey(k) => write!(f, "holds the entry of another key ({k})"),
            Damage::Length { header, actual } => write!(
                f,
                "its header announces {header} payload bytes, the file holds {actual}"
            ),
            Damage::Checksum => f.write_str("checksum mismatch"),
            Damage::Payload => {
                f.write_str("checksum valid, but the payload is not a compiled image")
            }
        }
    }
}

/// The bytes of the entry file for `payload` under `key`.
pub fn encode(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + CHECKSUM_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// The payload of an entry file read for `key`, or what is wrong with it.
pub fn decode<'a>(key: &CacheKey, bytes: &'a [u8]) -> Result<&'a [u8], Damage> {
    if bytes.len() < HEADER_LEN + CHECKSUM_LEN {
        return Err(Damage::TooShort(bytes.len() as u64));
    }
    if &bytes[..8] != MAGIC {
        return Err(Damage::NotAnEntry);
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let format = u32::from_le_bytes([body[8], body[9], body[10], body[11]]);
    if format != FORMAT {
        return Err(Damage::Format(format));
    }
    let mut header_key = [0u8; 32];
    header_key.copy_from_slice(&body[12..44]);
    if &header_key != key.as_bytes() {
        return Err(Damage::OtherKey(CacheKey::from_bytes(header_key)));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&body[44..52]);
    let header = u64::from_le_bytes(len);
    let actual = (body.len() - HEADER_LEN) as u64;
    if header != actual {
        return Err(Damage::Length { header, actual });
    }
    if Sha256::digest(body).as_slice() != sum {
        return Err(Damage::Checksum);
    }
    Ok(&body[HEADER_LEN..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_names_its_damage() {
        let key = CacheKey::from_bytes([7; 32]);
        let good = encode(&key, b"payload");
        assert_eq!(decode(&key, &good), Ok(&b"payload"[..]));

        let other = CacheKey::from_bytes([8; 32]);
        assert_eq!(decode(&other, &good), Err(Damage::OtherKey(key)));
        assert_eq!(decode(&key, &good[..10]), Err(Damage::TooShort(10)));
        let mut b = good.clone();
        b[0] = b'X';
        assert_eq!(decode(&key, &b), Err(Damage::NotAnEntry));
        let mut b = good.clone();
        b[8] = 9;
        assert_eq!(decode(&key, &b), Err(Damage::Format(9)));
        let mut b = good.clone();
        b.insert(HEADER_LEN, b'x');
        assert_eq!(
            decode(&key, &b),
            Err(Damage::Length {
                header: 7,
                actual: 8
            })
        );
        let mut b = good.clone();
        b[HEADER_LEN + 1] ^= 1;
        assert_eq!(decode(&key, &b), Err(Damage::Checksum));
        // Every message says what is wrong in words.
        for d in [
            Damage::NotAFile("a FIFO"),
            Damage::TooShort(3),
            Damage::Checksum,
            Damage::Payload,
        ] {
            assert!(d.to_string().len() > 10, "{d:?}");
        }
    }
}
