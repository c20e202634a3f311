//! The library's error type: one variant per thing that can go wrong, each
//! carrying the file, id or argument it is about, so that a single line is
//! enough to tell the user what failed and where.

use std::path::PathBuf;

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Hint appended to every error about a damaged or incompatible index.
const REBUILD: &str = "run `papers index --rebuild PATH...` to rebuild it";

/// Everything the library can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An input path given on the command line does not exist.
    #[error("{}: no such file or directory", path.display())]
    MissingInput {
        /// The path as given.
        path: PathBuf,
    },
    /// None of the input paths held a Daily Papers dump.
    #[error("no Daily Papers dumps found in {paths}")]
    NoDumps {
        /// The input paths, joined for display.
        paths: String,
    },
    /// A file is not a Daily Papers dump.
    #[error("{}: {reason}", path.display())]
    ParseDump {
        /// The file.
        path: PathBuf,
        /// Why it was rejected, with a line number where there is one.
        reason: String,
    },
    /// The model could not be found, fetched or loaded.
    #[error("model {model}: {reason}")]
    ModelLoad {
        /// The model id or directory.
        model: String,
        /// What went wrong.
        reason: String,
    },
    /// The requested compute device is not available.
    #[error("device {device}: {reason}")]
    Device {
        /// The device as asked for.
        device: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Running the model failed.
    #[error("embedding failed: {0}")]
    Embed(String),
    /// There is no index at the given location.
    #[error("{}: no index here; run `papers index PATH...` first", path.display())]
    IndexMissing {
        /// The index directory.
        path: PathBuf,
    },
    /// The index was written by another format version.
    #[error("{}: index format version {found}, this papers reads version {expected}; {REBUILD}", path.display())]
    IndexVersion {
        /// The manifest.
        path: PathBuf,
        /// The version on disk.
        found: u32,
        /// The version this build reads and writes.
        expected: u32,
    },
    /// A file of the index is damaged or inconsistent.
    #[error("{}: damaged index file ({reason}); {REBUILD}", path.display())]
    IndexCorrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The index was built with another model than the one asked for.
    #[error("{}: index was built with {index_model}, not {model}; {REBUILD}, or pass --model {index_model}", path.display())]
    IndexModelMismatch {
        /// The index directory.
        path: PathBuf,
        /// The model (and weights digest) recorded in the index.
        index_model: String,
        /// The model asked for now.
        model: String,
    },
    /// Another process holds the index's write lock.
    #[error("{}: another `papers index` is writing this index", path.display())]
    IndexLocked {
        /// The lock file.
        path: PathBuf,
    },
    /// The run was interrupted (Ctrl-C) before anything was written.
    #[error("interrupted")]
    Interrupted,
    /// No record has an id starting with this prefix.
    #[error("unknown id `{id}`")]
    UnknownId {
        /// The id or prefix as given.
        id: String,
    },
    /// Several records share this id prefix.
    #[error("ambiguous id `{prefix}`: matches {}", candidates.join(", "))]
    AmbiguousId {
        /// The prefix as given.
        prefix: String,
        /// The full ids it matches.
        candidates: Vec<String>,
    },
    /// The text is not a usable id or prefix.
    #[error("invalid id `{id}`: {reason}")]
    InvalidId {
        /// The id as given.
        id: String,
        /// Why it is not an id.
        reason: String,
    },
    /// The query has no text in it.
    #[error("the query is empty")]
    EmptyQuery,
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A damaged-index error for `path`.
    pub fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::IndexCorrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
