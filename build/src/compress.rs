//! Kernel parts as zstd frames (`CUPRUM_NVCC_COMPRESS=zstd`, the default; docs/building.md,
//! "Size and load time").
//!
//! nvcc writes each part uncompressed (`-compress-mode=none`; the fat binary cache keeps it so)
//! and cuprum-build, assembling the unit, compresses each into one zstd frame that declares its
//! content size, with a dictionary trained on the unit's parts when that makes the unit smaller
//! (listed first, as `cuprum_abi::parts::DICTIONARY`). The runtime (`registry::part`) decompresses it
//! with libzstd and checks the uncompressed images before the driver sees them: the same bytes as
//! nvcc's `-compress-mode=size`, which the driver decompresses several times more slowly.

use cuprum_abi::fatbin;

/// The level: nvcc's `size` mode compresses about as well; higher levels gain nothing on machine
/// code.
const LEVEL: i32 = 19;

/// The most a unit's dictionary may take: 64 KiB (measured on the built-ins at sm_90: a 64 KiB
/// dictionary takes the elementwise file from 695 to 608 KB with itself included, the
/// reductions' from 380 to 368 KB; 96 or 128 KiB take more than they save).
const MAX_DICTIONARY: usize = 64 << 10;

/// The COVER trainer's segment and d-mer sizes. Measured on the built-ins at sm_90 (machine code,
/// 39 and 93 parts): zstd's parameter search picks k = 1106, d = 8, and a COVER dictionary with
/// fixed k = 1106, d = 8 makes the units 589 and 389 KB where the default fastCover trainer
/// (`ZDICT_trainFromBuffer`) makes 628 and 403 KB, in 0.6 s instead of the search's 21 s.
const COVER_K: u32 = 1106;
const COVER_D: u32 = 8;

/// The most bytes of parts the dictionary is trained (and judged) on: COVER wants about a hundred
/// times the dictionary's size, and at the default target list a unit's parts are about 90 MB
/// (training on all of them took 12 s for the same dictionary, to 0.5% of the size).
const MAX_SAMPLE: usize = 100 * MAX_DICTIONARY;

/// The parts of one unit (the fat binaries nvcc wrote, one per kernel) as zstd frames, with the
/// dictionary they were compressed with when one makes the unit smaller: trained on the parts
/// themselves (kernels of one file share most of their machine code; an evenly spread sample of
/// at most [`MAX_SAMPLE`] bytes), at most a tenth of their size, and kept when it makes that
/// sample smaller. Without enough parts to train on, or when it does not pay, there is none.
/// The frames are compressed on up to four threads.
pub(crate) fn compress_unit(parts: &[&[u8]]) -> std::io::Result<Compressed> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let dictionary = if parts.len() < 4 {
        None
    } else {
        let step = total.div_ceil(MAX_SAMPLE).max(1);
        let sample: Vec<&[u8]> = parts.iter().step_by(step).copied().collect();
        train(&sample, MAX_DICTIONARY.min(total / 10)).filter(|dict| {
            let size = |d: &[u8]| -> std::io::Result<usize> {
                let mut c = zstd::bulk::Compressor::with_dictionary(LEVEL, d)?;
                sample.iter().map(|p| c.compress(p).map(|f| f.len())).sum()
            };
            matches!((size(dict), size(&[])), (Ok(with), Ok(without)) if with + dict.len() < without)
        })
    };
    let frames = compress_all(parts, dictionary.as_deref().unwrap_or(&[]))?;
    Ok(Compressed { dictionary, frames })
}

/// `parts` as zstd frames with `dictionary` (empty: none), in order, on up to four threads.
fn compress_all(parts: &[&[u8]], dictionary: &[u8]) -> std::io::Result<Vec<Vec<u8>>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let chunk = parts.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = parts
            .chunks(chunk)
            .map(|group| {
                s.spawn(move || -> std::io::Result<Vec<Vec<u8>>> {
                    let mut c = zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary)?;
                    group.iter().map(|p| c.compress(p)).collect()
                })
            })
            .collect();
        let mut frames = Vec::with_capacity(parts.len());
        for w in workers {
            frames.extend(w.join().map_err(|_| std::io::Error::other("a compression thread panicked"))??);
        }
        Ok(frames)
    })
}

/// A unit's parts as zstd frames, and the dictionary they need (if any).
pub(crate) struct Compressed {
    pub dictionary: Option<Vec<u8>>,
    pub frames: Vec<Vec<u8>>,
}

/// A dictionary of at most `max` bytes trained on `parts` with zstd's COVER algorithm
/// ([`COVER_K`], [`COVER_D`]); `None` when zstd cannot make one (too few or too small samples).
fn train(parts: &[&[u8]], max: usize) -> Option<Vec<u8>> {
    use zstd_sys::{ZDICT_cover_params_t, ZDICT_isError, ZDICT_params_t, ZDICT_trainFromBuffer_cover};
    let samples: Vec<u8> = parts.concat();
    let sizes: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    let count = u32::try_from(sizes.len()).ok()?;
    let mut dict = vec![0u8; max];
    let params = ZDICT_cover_params_t {
        k: COVER_K,
        d: COVER_D,
        steps: 0,
        nbThreads: 1,
        splitPoint: 1.0,
        shrinkDict: 0,
        shrinkDictMaxRegression: 0,
        zParams: ZDICT_params_t { compressionLevel: LEVEL, notificationLevel: 0, dictID: 0 },
    };
    // SAFETY: `dict` is writable for `dict.len()` bytes; `samples` holds exactly the sum of
    // `sizes` bytes, `sizes` has `count` entries; all three outlive the call, which reads and
    // writes nothing else (its parameters are passed by value).
    let n = unsafe {
        ZDICT_trainFromBuffer_cover(
            dict.as_mut_ptr().cast(),
            dict.len(),
            samples.as_ptr().cast(),
            sizes.as_ptr(),
            count,
            params,
        )
    };
    // SAFETY: a pure function of the returned code.
    if unsafe { ZDICT_isError(n) } != 0 || n > dict.len() {
        return None;
    }
    dict.truncate(n);
    Some(dict)
}


/// What a unit's compressed parts are made from: the parts' names and bytes. Level 19 with a
/// dictionary takes seconds for the built-ins (tens at the default target list), so
/// [`Compressed::reuse`] keeps the last result while this stays the same.
pub(crate) fn stamp(parts: &[(&str, &[u8])]) -> String {
    use std::hash::{Hash, Hasher};
    let mut text = format!(
        "cuprum-build zstd 3 level {LEVEL} dictionary {MAX_DICTIONARY} cover {COVER_K} {COVER_D} sample {MAX_SAMPLE}\n"
    );
    for (name, bytes) in parts {
        let mut h = std::hash::DefaultHasher::new();
        bytes.hash(&mut h);
        text.push_str(&format!("{name} {} {:016x}\n", bytes.len(), h.finish()));
    }
    text
}

impl Compressed {
    /// The parts compressed by an earlier build of the same unit: `fatbin` and `listing` as it
    /// wrote them, when they hold exactly `names` (and a dictionary first, if any).
    pub(crate) fn reuse(
        fatbin: &[u8],
        listing: &[cuprum_abi::parts::Part],
        names: &[&str],
    ) -> Option<Compressed> {
        let bytes = |p: &cuprum_abi::parts::Part| {
            fatbin
                .get(p.offset..p.offset.checked_add(p.len)?)
                .map(<[u8]>::to_vec)
        };
        let (dictionary, rest) = match listing.split_first() {
            Some((d, rest)) if d.kernel == cuprum_abi::parts::DICTIONARY => (Some(bytes(d)?), rest),
            _ => (None, listing),
        };
        if rest.len() != names.len() || rest.iter().zip(names).any(|(p, n)| p.kernel != *n) {
            return None;
        }
        let frames = rest.iter().map(bytes).collect::<Option<Vec<_>>>()?;
        frames
            .iter()
            .all(|f| is_frame(f))
            .then_some(Compressed { dictionary, frames })
    }
}

/// Whether `bytes` is a zstd frame (its magic number) rather than a fat binary.
pub fn is_frame(bytes: &[u8]) -> bool {
    bytes.starts_with(&cuprum_abi::fatbin::ZSTD_MAGIC)
}

/// The fat binary of a part: the bytes themselves, or what their zstd frame holds (`dictionary`:
/// the unit's, when its listing has one; empty otherwise).
pub fn fatbin_of<'a>(
    bytes: &'a [u8],
    dictionary: &[u8],
) -> Result<std::borrow::Cow<'a, [u8]>, String> {
    if !is_frame(bytes) {
        return Ok(bytes.into());
    }
    let size = zstd::zstd_safe::get_frame_content_size(bytes)
        .ok()
        .flatten()
        .ok_or("a zstd frame without its content size")?;
    let size = usize::try_from(size).map_err(|e| e.to_string())?;
    let plain = zstd::bulk::Decompressor::with_dictionary(dictionary)
        .and_then(|mut d| d.decompress(bytes, size))
        .map_err(|e| e.to_string())?;
    Ok(plain.into())
}

/// The targets of a part, compressed or not.
pub(crate) fn targets(bytes: &[u8]) -> Result<Vec<String>, String> {
    fatbin::targets(&fatbin_of(bytes, &[])?).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_declare_their_size_and_round_trip() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let z = zstd::bulk::compress(&data, LEVEL).unwrap();
        assert!(is_frame(&z) && z.len() < data.len() / 4);
        let size = zstd::zstd_safe::get_frame_content_size(&z).unwrap();
        assert_eq!(size, Some(data.len() as u64));
        assert_eq!(zstd::bulk::decompress(&z, data.len()).unwrap(), data);
        assert!(targets(&z[..z.len() - 1]).is_err());
    }

    #[test]
    fn an_earlier_units_frames_are_reused_only_when_they_match() {
        let parts: Vec<Vec<u8>> = (0..5u8).map(|k| vec![k; 3000]).collect();
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let c = compress_unit(&refs).unwrap();
        // The unit as assemble writes it: the dictionary first (if any), then the frames.
        let (mut blob, mut listing) = (Vec::new(), Vec::new());
        let mut push = |name: &str, bytes: &[u8]| {
            listing.push(cuprum_abi::parts::Part {
                kernel: name.into(),
                offset: blob.len(),
                len: bytes.len(),
            });
            blob.extend_from_slice(bytes);
        };
        if let Some(d) = &c.dictionary {
            push(cuprum_abi::parts::DICTIONARY, d);
        }
        let names = ["a", "b", "c[f32]", "c[f64]", "d"];
        for (n, f) in names.iter().zip(&c.frames) {
            push(n, f);
        }
        let again = Compressed::reuse(&blob, &listing, &names).expect("the same unit");
        assert_eq!(
            (again.dictionary, again.frames),
            (c.dictionary.clone(), c.frames.clone())
        );
        assert!(
            Compressed::reuse(&blob, &listing, &names[..4]).is_none(),
            "a part fewer"
        );
        assert!(
            Compressed::reuse(&blob, &listing, &["a", "b", "x", "c[f64]", "d"]).is_none(),
            "another name"
        );
        assert!(
            Compressed::reuse(&blob[..blob.len() - 1], &listing, &names).is_none(),
            "a short file"
        );
        // The stamp changes with any part's bytes or name.
        let named: Vec<(&str, &[u8])> = names.iter().copied().zip(refs.iter().copied()).collect();
        let mut other = named.clone();
        other[2].1 = &parts[0];
        assert_ne!(stamp(&named), stamp(&other));
        other = named.clone();
        other[4].0 = "e";
        assert_ne!(stamp(&named), stamp(&other));
        assert_eq!(stamp(&named), stamp(&named.clone()));
    }

    #[test]
    fn a_unit_of_similar_parts_gets_a_dictionary() {
        // Eight parts sharing most of their bytes, as a file's kernels share their machine code.
        // Each part: a block every part has, then bytes of its own (random, so that only what
        // the parts share compresses).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        };
        let shared = random(6000);
        let parts: Vec<Vec<u8>> = (0..8)
            .map(|_| [shared.clone(), random(500)].concat())
            .collect();
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let Compressed { dictionary, frames } = compress_unit(&refs).unwrap();
        let dict = dictionary.expect("similar parts pay for a dictionary");
        for (p, f) in parts.iter().zip(&frames) {
            assert_eq!(fatbin_of(f, &dict).unwrap().as_ref(), p.as_slice());
            assert!(fatbin_of(f, &[]).is_err(), "a frame needs its dictionary");
        }
        // Too few parts: plain frames.
        let Compressed { dictionary, frames } = compress_unit(&refs[..2]).unwrap();
        assert!(dictionary.is_none());
        assert_eq!(
            fatbin_of(&frames[1], &[]).unwrap().as_ref(),
            parts[1].as_slice()
        );
    }
}
