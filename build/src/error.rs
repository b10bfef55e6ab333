//! Why a build failed, and how it is shown.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why the build failed. [`Error::rendered`] is the text printed to stderr.
#[derive(Debug)]
pub enum Error {
    /// A kernel file cannot be built for the targets asked (a kernel needs an architecture the
    /// request lacks): `message` names each such kernel and what to ask for. (Mistakes in a
    /// kernel file are not errors of the build: the file is skipped and rustc reports them.)
    Kernel {
        /// The kernel file.
        file: PathBuf,
        /// Every problem of the file, one per line.
        message: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE` is malformed or asks for targets this nvcc does not support.
    Targets {
        /// What is wrong with the value.
        message: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE` is set (precompiling was asked for) but there is no nvcc.
    NvccMissing {
        /// Where nvcc was looked for and how to get one.
        message: String,
    },
    /// An nvcc was found but does not work.
    Nvcc {
        /// Which nvcc and how it failed.
        message: String,
    },
    /// nvcc rejected generated code (a bug in cuprum: the message says so).
    NvccFailed {
        /// The kernel file.
        file: PathBuf,
        /// The generated translation unit nvcc rejected.
        cu: PathBuf,
        /// The nvcc command line, as a shell would run it.
        command: String,
        /// nvcc's output.
        output: String,
    },
    /// `CUPY_NVCC_GENERATE_CODE=current` on a machine without a usable GPU.
    NoGpu {
        /// Why the GPUs could not be asked, and what to do instead.
        message: String,
    },
    /// A bad setting: `OUT_DIR` unset, a count that is not a number.
    Config {
        /// Which setting and what is wrong with it.
        message: String,
    },
    /// A tuning file (`tuning/sm_XY.toml`) is malformed or misnamed (`Tuning`, docs/tuning.md).
    Tuning {
        /// The tuning file.
        file: PathBuf,
        /// What is wrong (with its line) and what to do.
        message: String,
    },
    /// A file operation failed.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What was being done, as a verb (`cannot {action} {path}`).
        action: &'static str,
        /// The operating system's error.
        error: io::Error,
    },
    /// Several of the above (every kernel file with mistakes, every failed nvcc run).
    Several(Vec<Error>),
}

impl Error {
    pub(crate) fn io(path: &Path, action: &'static str, error: io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            action,
            error,
        }
    }

    /// The text for stderr: every message starting with `error:`.
    pub fn rendered(&self) -> String {
        match self {
            Error::Kernel { message, .. } => message.trim_end().to_owned(),
            Error::Several(all) => all
                .iter()
                .map(Error::rendered)
                .collect::<Vec<_>>()
                .join("\n\n"),
            other => format!("error: {other}"),
        }
    }

    /// Every single error (a `Several` flattened).
    pub fn all(&self) -> Vec<&Error> {
        match self {
            Error::Several(all) => all.iter().flat_map(Error::all).collect(),
            one => vec![one],
        }
    }

    pub(crate) fn from_list(mut errors: Vec<Error>) -> Option<Error> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(Error::Several(errors)),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernel { message, .. } => f.write_str(message.trim_end()),
            Error::Targets { message }
            | Error::NvccMissing { message }
            | Error::Nvcc { message }
            | Error::NoGpu { message }
            | Error::Config { message } => f.write_str(message),
            Error::NvccFailed {
                file,
                cu,
                command,
                output,
            } => write!(
                f,
                "nvcc failed on the CUDA C generated from {} (this is a bug in cuprum; please report it with the kernel file)\n  \
                 generated source: {}\n  command: {command}\n{}",
                file.display(),
                cu.display(),
                output.trim_end()
            ),
            Error::Tuning { file, message } => write!(
                f,
                "tuning file {}: {message}\n  (fix or delete the file, or rerun the tuner to rewrite it: docs/tuning.md)",
                file.display()
            ),
            Error::Io {
                path,
                action,
                error,
            } => write!(f, "cannot {action} {}: {error}", path.display()),
            Error::Several(all) => {
                let shown: Vec<String> = all.iter().map(Error::to_string).collect();
                f.write_str(&shown.join("\n\n"))
            }
        }
    }
}

impl std::error::Error for Error {}
