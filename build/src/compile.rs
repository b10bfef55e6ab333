//! Compiling the parts of the plan with nvcc (or taking them from an earlier build or the shared
//! cache), and assembling each unit's fat binary from its parts.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use cuprum_abi::{mangle, parts};

use crate::env;
use crate::nvcc::{self, Nvcc};
use crate::plan::{PartJob, Translated};
use crate::report::{instances, Status};
use crate::targets::Gencode;
use crate::{cache, compress, outputs, Error};

/// What every nvcc run of one build shares.
pub(crate) struct PartCompiler<'a> {
    pub(crate) nvcc: &'a Nvcc,
    pub(crate) include: &'a Path,
    pub(crate) out_dir: &'a Path,
    pub(crate) threads: usize,
    /// The shared fat binary cache, if any.
    pub(crate) cache: Option<&'a Path>,
    /// [`outputs::headers_hash`], computed once.
    pub(crate) headers_hash: &'a str,
    /// nvcc's `-compress-mode` (`CUPRUM_NVCC_COMPRESS`).
    pub(crate) compress: &'static str,
    /// What to say on stderr when the first nvcc run starts (`None`: nothing, for
    /// `Kernels::try_compile`).
    pub(crate) announce: Option<&'a str>,
    /// Whether an nvcc run has started.
    pub(crate) announced: AtomicBool,
}

/// A fat binary that is there after [`PartCompiler::build_part`] or [`PartCompiler::assemble`].
pub(crate) struct Built {
    pub(crate) status: Status,
    pub(crate) targets: Vec<String>,
    pub(crate) fatbin: PathBuf,
    /// The fat binary's bytes, as read back (a part's, for [`PartCompiler::assemble`]).
    pub(crate) bytes: Vec<u8>,
    pub(crate) fatbin_bytes: u64,
    /// `OUT_DIR/cuprum/<id>.build`.
    pub(crate) record: PathBuf,
    pub(crate) nvcc_time: Duration,
    pub(crate) time: Duration,
    /// A problem that does not fail the build (the shared cache could not be written).
    pub(crate) warning: Option<String>,
}

impl PartCompiler<'_> {
    /// Every part of the plan, at most `jobs` nvcc runs at a time and, under cargo, at most as
    /// many as cargo's jobserver lends tokens for ([`Slots`]); each unit's built parts, indexed
    /// like `units`, with their names.
    pub(crate) fn build_parts(&self, plan: &[PartJob], units: &[Translated], jobs: usize) -> Result<Vec<Vec<(String, Built)>>, Error> {
        let results: Vec<Mutex<Option<Result<Built, Error>>>> = plan.iter().map(|_| Mutex::new(None)).collect();
        let mut slots = Slots::new(jobs.min(plan.len()).max(1), jobserver());
        std::thread::scope(|s| {
            let (done_tx, done_rx) = mpsc::channel::<Slot>();
            for (j, job) in plan.iter().enumerate() {
                // Waits for an nvcc run to end or a token to come.
                let slot = slots.take(&done_rx);
                let (done_tx, results) = (done_tx.clone(), &results);
                s.spawn(move || {
                    let (path, unit, _) = &units[job.unit];
                    let built = self.build_part(path, unit, &job.name, &job.symbols, &job.gencodes);
                    *results[j].lock().unwrap_or_else(|e| e.into_inner()) = Some(built);
                    // Unsent once every run has started: the slot is dropped here (a token
                    // given back).
                    let _ = done_tx.send(slot);
                });
            }
            // Every run has started: no more tokens are asked for, and the last runs give theirs
            // back as they end.
            slots.jobserver = None;
        });

        let mut errors = Vec::new();
        let mut parts: Vec<Vec<(String, Built)>> = (0..units.len()).map(|_| Vec::new()).collect();
        for (job, slot) in plan.iter().zip(results) {
            match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(Ok(built)) => parts[job.unit].push((job.name.clone(), built)),
                Some(Err(e)) => errors.push(e),
                None => unreachable!("every job is run by a worker"),
            }
        }
        match Error::from_list(errors) {
            Some(e) => Err(e),
            None => Ok(parts),
        }
    }

    /// Makes `OUT_DIR`'s fat binary of part `name` of `unit` (`cuprum/<id>.<name>.fatbin`: a kernel,
    /// or one instance of it, `cuprum_abi::parts`), from the unit's definitions and the
    /// instantiation lines of `symbols`: kept when its stamp says it is
    /// current, else copied from the shared cache on a hit, else built by nvcc (and stored in the
    /// cache).
    pub(crate) fn build_part(
        &self,
        kernel_file: &Path,
        unit: &cuprum_compiler::back::cuda::Unit,
        name: &str,
        symbols: &[String],
        gencodes: &[Gencode],
    ) -> Result<Built, Error> {
        let start = Instant::now();
        let source = parts::part_source(&unit.source, symbols);
        // `sum[f32]` is the part's name; its files are `<unit id>.sum_f32_...`.
        let file_name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let id = format!("{}.{file_name}", mangle::unit_id(&unit.source));
        let aot_dir = self.out_dir.join(mangle::AOT_DIR);
        let cu = aot_dir.join(format!("{id}.cu"));
        outputs::write_if_changed(&cu, source.as_bytes())?;
        let part = aot_dir.join(format!("{id}.fatbin.part"));
        let stamp_path = aot_dir.join(format!("{id}.stamp"));
        let fatbin = self.out_dir.join(mangle::fatbin_file(&id));
        let job = nvcc::Job {
            cu: &cu,
            output: &part,
            include: self.include,
            gencodes,
            threads: self.threads,
            fast_math: unit.fast_math,
            line_info: cuprum_abi::unit::has_line_directives(&unit.source),
            compress: self.compress,
        };
        // `zstd` runs nvcc as `none` does, then compresses: the mode is part of what was built.
        let tagged = format!("{id} (compress {})", self.compress);
        let stamp = outputs::stamp(
            &tagged,
            &self.nvcc.version,
            &nvcc::show(&self.nvcc.command_line(&job)),
        );
        // The cache key: the same command line with this build's paths replaced by placeholders.
        let key_text = cache::key_text(
            &tagged,
            self.headers_hash,
            &gencodes.iter().map(Gencode::to_string).collect::<Vec<_>>(),
            &self.nvcc.version,
            &nvcc::show(&self.nvcc.command_line(&nvcc::Job {
                cu: Path::new("unit.cu"),
                output: Path::new("unit.fatbin"),
                include: Path::new("include"),
                ..job
            })),
        );
        let key = cache::key(&key_text);
        let mut nvcc_time = Duration::ZERO;
        let mut warning = None;
        let status = if outputs::up_to_date(&fatbin, &stamp_path, &stamp) {
            Status::UpToDate
        } else if let Some(bytes) = self
            .cache
            .and_then(|dir| cache::lookup(dir, &key, &key_text))
        {
            outputs::remove(&stamp_path)?;
            cache::install(&bytes, &fatbin)?;
            outputs::write_if_changed(&stamp_path, stamp.as_bytes())?;
            Status::Cached
        } else {
            outputs::remove(&stamp_path)?;
            if !self.announced.swap(true, Ordering::Relaxed)
                && let Some(text) = self.announce
            {
                eprintln!("{text}");
            }
            let nvcc_start = Instant::now();
            self.nvcc.run(&job, kernel_file)?;
            nvcc_time = nvcc_start.elapsed();
            let bytes =
                std::fs::read(&part).map_err(|e| Error::io(&part, "read nvcc's output", e))?;
            outputs::write_if_changed(&fatbin, &bytes)?;
            outputs::remove(&part)?;
            outputs::write_if_changed(&stamp_path, stamp.as_bytes())?;
            if let Some(dir) = self.cache {
                if let Err(e) = cache::store(dir, &key, &key_text, &bytes) {
                    warning = Some(format!(
                        "cuprum-build: the fat binary cache cannot be written ({e}); other profiles will run nvcc again. \
                         Set CUPRUM_FATBIN_CACHE to a writable folder, or to `off`"
                    ));
                }
            }
            Status::Compiled
        };
        let bytes = std::fs::read(&fatbin).map_err(|e| Error::io(&fatbin, "read", e))?;
        // A fat binary built before the cache existed (or with it off) joins it, so that the other
        // profiles find it.
        if status == Status::UpToDate {
            if let Some(dir) = self.cache {
                if !dir.join(format!("{key}.stamp")).is_file() {
                    let _ = cache::store(dir, &key, &key_text, &bytes);
                }
            }
        }
        let targets = compress::targets(&bytes).map_err(|e| Error::Nvcc {
            message: format!(
                "nvcc wrote {}, which cuprum-build cannot read: {e}",
                fatbin.display()
            ),
        })?;
        Ok(Built {
            status,
            targets,
            fatbin_bytes: bytes.len() as u64,
            bytes,
            fatbin,
            record: PathBuf::new(),
            nvcc_time,
            time: start.elapsed(),
            warning,
        })
    }

    /// The unit's fat binary: its kernels' parts back to back (`cuprum/<id>.fatbin`), their
    /// listing (`<id>.parts`), its targets (`<id>.targets`) and its build record (`<id>.build`).
    pub(crate) fn assemble(
        &self,
        unit: &cuprum_compiler::back::cuda::Unit,
        parts: Vec<(String, Built)>,
    ) -> Result<Built, Error> {
        let id = mangle::unit_id(&unit.source);
        let mut bytes = Vec::new();
        let mut listing = Vec::new();
        let mut targets: Vec<String> = Vec::new();
        let (mut nvcc_time, mut time) = (Duration::ZERO, Duration::ZERO);
        let mut warning = None;
        // `zstd`: each part becomes a zstd frame, with a dictionary of the unit first when one
        // helps (crate::compress).
        // The parts of an earlier build are taken again when they were made from the same bytes
        // (`<id>.zstd` records from what), so an unchanged unit is not compressed again.
        let fatbin = self.out_dir.join(mangle::fatbin_file(&id));
        let listing_path = self.out_dir.join(parts::parts_file(&id));
        let zstd_stamp_path = self.out_dir.join(mangle::AOT_DIR).join(format!("{id}.zstd"));
        let mut zstd_stamp = None;
        // `zstd`: a part with several targets is listed as one piece per family of targets
        // (`add@sm_80+sm_86+sm_89`, `add@sm_90`, `add@compute_90`), so that a program decompresses
        // and loads only its GPU's (cuprum_abi::parts, "Targets"); nvcc's own compression keeps
        // parts whole.
        let pieces: Vec<(String, Cow<'_, [u8]>)> = if self.compress == env::ZSTD {
            let mut pieces = Vec::new();
            for (kernel, built) in &parts {
                match cuprum_abi::fatbin::split_by_family(&built.bytes) {
                    Ok(Some(split)) => pieces.extend(
                        split.into_iter().map(|(t, b)| (parts::piece_name(kernel, &t), Cow::Owned(b))),
                    ),
                    _ => pieces.push((kernel.clone(), Cow::Borrowed(built.bytes.as_slice()))),
                }
            }
            pieces
        } else {
            parts.iter().map(|(k, b)| (k.clone(), Cow::Borrowed(b.bytes.as_slice()))).collect()
        };
        let compressed = if self.compress == env::ZSTD {
            let named: Vec<(&str, &[u8])> = pieces.iter().map(|(n, b)| (n.as_str(), b.as_ref())).collect();
            let stamp = compress::stamp(&named);
            let names: Vec<&str> = named.iter().map(|p| p.0).collect();
            let earlier = (std::fs::read_to_string(&zstd_stamp_path).ok().as_deref() == Some(stamp.as_str()))
                .then(|| {
                    let listing = parts::read_parts(&std::fs::read_to_string(&listing_path).ok()?)?;
                    compress::Compressed::reuse(&std::fs::read(&fatbin).ok()?, &listing, &names)
                })
                .flatten();
            zstd_stamp = Some(stamp);
            Some(match earlier {
                Some(c) => c,
                None => {
                    outputs::remove(&zstd_stamp_path)?;
                    let raw: Vec<&[u8]> = named.iter().map(|p| p.1).collect();
                    compress::compress_unit(&raw).map_err(|e| Error::io(&fatbin, "compress (zstd)", e))?
                }
            })
        } else {
            None
        };
        if let Some(compress::Compressed {
            dictionary: Some(dict),
            ..
        }) = &compressed
        {
            listing.push(parts::Part {
                kernel: parts::DICTIONARY.to_string(),
                offset: 0,
                len: dict.len(),
            });
            bytes.extend_from_slice(dict);
        }
        for (k, (name, piece)) in pieces.iter().enumerate() {
            let piece = compressed.as_ref().map_or(piece.as_ref(), |c| &c.frames[k]);
            listing.push(parts::Part {
                kernel: name.clone(),
                offset: bytes.len(),
                len: piece.len(),
            });
            bytes.extend_from_slice(piece);
        }
        for (_, built) in &parts {
            for t in &built.targets {
                if !targets.contains(t) {
                    targets.push(t.clone());
                }
            }
            nvcc_time += built.nvcc_time;
            time += built.time;
            warning = warning.or_else(|| built.warning.clone());
        }
        // The unit's status: compiled if nvcc ran for any part, else cached if any part came from
        // the shared cache, else up to date.
        let status = [Status::Compiled, Status::Cached]
            .into_iter()
            .find(|s| parts.iter().any(|(_, b)| b.status == *s))
            .unwrap_or(Status::UpToDate);
        outputs::write_if_changed(&fatbin, &bytes)?;
        outputs::write_if_changed(&listing_path, parts::write_parts(&listing).as_bytes())?;
        // Last: a stamp never names outputs that are not written yet.
        if let Some(stamp) = zstd_stamp {
            outputs::write_if_changed(&zstd_stamp_path, stamp.as_bytes())?;
        }
        let mut text = targets.join("\n");
        text.push('\n');
        outputs::write_if_changed(
            &self.out_dir.join(mangle::targets_file(&id)),
            text.as_bytes(),
        )?;
        let record = self.out_dir.join(mangle::build_file(&id));
        let info = outputs::build_info(
            status,
            &targets,
            instances(unit),
            bytes.len() as u64,
            nvcc_time.as_secs_f64(),
            Some(&self.nvcc.version),
        );
        outputs::write_if_changed(&record, info.as_bytes())?;
        Ok(Built {
            status,
            targets,
            fatbin,
            fatbin_bytes: bytes.len() as u64,
            bytes: Vec::new(),
            record,
            nvcc_time,
            time,
            warning,
        })
    }
}

/// cargo's jobserver, when the build runs under cargo (or make) with one: `CARGO_MAKEFLAGS`.
/// Read once per process.
fn jobserver() -> Option<&'static jobserver::Client> {
    static CLIENT: OnceLock<Option<jobserver::Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // SAFETY: `from_env` takes ownership of the file descriptors `CARGO_MAKEFLAGS` names,
            // which cargo passes to the build script for this purpose and nothing else in it
            // uses; the `OnceLock` makes it one client per process.
            unsafe { jobserver::Client::from_env() }
        })
        .as_ref()
}

/// The right to run one nvcc process: the token the build script holds for itself (cargo
/// started it with one), a token borrowed from cargo's jobserver (given back when dropped), or,
/// without a jobserver, a place among `CUPY_NUM_BUILD_JOBS`.
enum Slot {
    Implicit,
    Token(jobserver::Acquired),
    Free,
}

/// Hands out [`Slot`]s: at most `limit` runs at a time (`CUPY_NUM_BUILD_JOBS`), and under a
/// jobserver one run on the build script's own token plus one per token borrowed, so that
/// `cargo build -jN` bounds nvcc processes as it bounds rustc's (as the `cc` crate does). Tokens
/// are asked for through the jobserver's helper thread, one per run that could start, and given
/// back as each run ends.
struct Slots {
    limit: usize,
    running: usize,
    implicit_free: bool,
    jobserver: Option<Jobserver>,
}

struct Jobserver {
    helper: jobserver::HelperThread,
    tokens: mpsc::Receiver<std::io::Result<jobserver::Acquired>>,
    /// Tokens asked for and not yet received.
    requested: usize,
    /// A token could not be read: run on the build script's own token alone from then on.
    failed: bool,
}

impl Slots {
    fn new(limit: usize, client: Option<&jobserver::Client>) -> Slots {
        let jobserver = client.and_then(|c| {
            let (tx, tokens) = mpsc::channel();
            let helper = c
                .clone()
                .into_helper_thread(move |token| {
                    // After the build, a late token is dropped here: given back.
                    let _ = tx.send(token);
                })
                .ok()?;
            Some(Jobserver { helper, tokens, requested: 0, failed: false })
        });
        Slots { limit, running: 0, implicit_free: true, jobserver }
    }

    /// The slot for the next run, waiting on `done` (the slots of ended runs) or for a token.
    fn take(&mut self, done: &mpsc::Receiver<Slot>) -> Slot {
        loop {
            while let Ok(slot) = done.try_recv() {
                self.give_back(slot);
            }
            if self.running < self.limit {
                if self.implicit_free {
                    self.implicit_free = false;
                    self.running += 1;
                    return Slot::Implicit;
                }
                match &mut self.jobserver {
                    None => {
                        self.running += 1;
                        return Slot::Free;
                    }
                    Some(js) => {
                        while let Ok(token) = js.tokens.try_recv() {
                            js.requested -= 1;
                            match token {
                                Ok(t) => {
                                    self.running += 1;
                                    return Slot::Token(t);
                                }
                                Err(_) => js.failed = true,
                            }
                        }
                        // One request outstanding for the next run (more would hold tokens
                        // other crates' rustc could use).
                        if js.requested == 0 && !js.failed {
                            js.helper.request_token();
                            js.requested += 1;
                        }
                    }
                }
            }
            // Wait briefly for a run to end, then look for a token again.
            match done.recv_timeout(Duration::from_millis(20)) {
                Ok(slot) => self.give_back(slot),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => unreachable!("the builder holds a sender"),
            }
        }
    }

    /// A run ended: its slot is free again (a token goes back to the jobserver).
    fn give_back(&mut self, slot: Slot) {
        self.running -= 1;
        match slot {
            Slot::Implicit => self.implicit_free = true,
            Slot::Token(token) => drop(token),
            Slot::Free => {}
        }
    }
}
