//! The library's error type: one variant per thing that can go wrong, each
//! carrying the file, id or argument it is about, so that a single line is
//! enough to tell the user what failed and where.

use std::path::PathBuf;

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Hint appended to every error about an incompatible index.
const REBUILD: &str = "run `papers index --rebuild PATH...` to rebuild it";

/// Hint appended to every error about a damaged index file.
const DAMAGED: &str =
    "run `papers check` to see what is damaged, then `papers index --rebuild PATH...` to rebuild it";

/// Everything the library can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed. Displayed in words that say
    /// what is true (disk full, permission denied, read-only) and, where
    /// papers was writing an index, that the index is unchanged.
    #[error("{}: {}", path.display(), describe_io(error))]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error (not a `source`: its text is already in
        /// this error's, and printing the chain would say it twice).
        error: std::io::Error,
    },
    /// The index folder was not made by papers: nothing is written into it.
    #[error("{}: not a papers index ({reason}); papers writes only into an empty or new folder, or an index it made; pass another --index", path.display())]
    NotAnIndex {
        /// The folder.
        path: PathBuf,
        /// What papers found there.
        reason: String,
    },
    /// A first build or `--rebuild` read no record: the index is left as
    /// it was rather than replaced by an empty one.
    #[error("no records read from {paths}{}; the index was not changed", if reason.is_empty() { String::new() } else { format!(" ({reason})") })]
    NothingRead {
        /// The input paths, joined for display.
        paths: String,
        /// Why (the first skipped file or line), if known.
        reason: String,
    },
    /// A `--rebuild` read records, but every one of them was removed
    /// earlier (`papers remove`): the index is left as it was rather than
    /// replaced by an empty one.
    #[error("every record in {paths} ({removed}) was removed earlier with `papers remove`, so a rebuild would leave an empty index; the index was not changed")]
    NothingKept {
        /// The input paths, joined for display.
        paths: String,
        /// How many records were read and are removed.
        removed: usize,
    },
    /// An input that cannot be read where reading it all is required
    /// (`index --embeddings`): nothing was written.
    #[error("{}: {reason}; the index was not changed", path.display())]
    Input {
        /// The input file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The index's database could not be used for a reason other than
    /// damage: busy, locked, read-only, full, not permitted.
    #[error("{}: {problem}", path.display())]
    Storage {
        /// The database file.
        path: PathBuf,
        /// What is wrong and what to do, in words.
        problem: String,
    },
    /// An input is larger than a limit papers sets to bound its memory.
    #[error("{what} is over the limit of {limit} bytes{}", if flag.is_empty() { String::new() } else { format!(" (raise it with {flag})") })]
    TooLarge {
        /// The input: a file, stdin, a query.
        what: String,
        /// The limit in bytes.
        limit: u64,
        /// The flag that raises it, if any.
        flag: &'static str,
    },
    /// An input path given on the command line does not exist.
    #[error("{}: no such file or directory", path.display())]
    MissingInput {
        /// The path as given.
        path: PathBuf,
    },
    /// None of the input paths held a Daily Papers dump.
    #[error("nothing to index in {paths}: {}", if reason.is_empty() { "no Daily Papers dump or record" } else { reason })]
    NoDumps {
        /// The input paths, joined for display.
        paths: String,
        /// Why the first file looked at was not read, if any was.
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
    /// A vector does not have the length the index (or model) uses.
    #[error("{what} has {found} dimensions, the index {expected}")]
    Dimension {
        /// Which vector: a query, a record's, a window's.
        what: String,
        /// Its length.
        found: usize,
        /// The index's dimension.
        expected: usize,
    },
    /// A vector of a `papers index --embeddings` input does not fit the
    /// index or the model.
    #[error("{}: line {line}: {reason}", path.display())]
    GivenVector {
        /// The input file.
        path: std::path::PathBuf,
        /// The record's line.
        line: usize,
        /// What is wrong with its vector.
        reason: String,
    },
    /// A record reached a commit without its vector.
    #[error("record {id} has no vector; nothing was written")]
    MissingVector {
        /// The record's id.
        id: String,
    },
    /// A search mode that ranks by embeddings was given no query vector.
    #[error("{mode} search needs the query's embedding")]
    NeedsEmbedding {
        /// The mode's name.
        mode: &'static str,
    },
    /// A write asked for by a request with a deadline (the server's page,
    /// API or MCP) found another run writing the index: it is refused,
    /// never applied later.
    #[error(
        "{}: another papers command is writing this index (an index run?); nothing was \
         changed: try again when it ends",
        path.display()
    )]
    WriterBusy {
        /// The index directory.
        path: PathBuf,
    },
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
    /// The index is of an older format this build can convert.
    #[error("{}: index format version {found}; run `papers upgrade` to convert it (nothing is embedded again)", path.display())]
    IndexUpgrade {
        /// The manifest.
        path: PathBuf,
        /// The version on disk.
        found: u32,
    },
    /// A file of the index is damaged or inconsistent.
    #[error("{}: damaged index file ({reason}); {DAMAGED}", path.display())]
    IndexCorrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The index was built with another model (or other weights) than
    /// the one asked for; `hint` is a command that resolves it.
    #[error("{}: index was built with {index_model}, not {model}; {hint}", path.display())]
    IndexModelMismatch {
        /// The index directory.
        path: PathBuf,
        /// The model (and weights digest) recorded in the index.
        index_model: String,
        /// The model (and weights digest) asked for now.
        model: String,
        /// What to run instead.
        hint: String,
    },
    /// The run was interrupted (Ctrl-C) before anything was written.
    #[error("interrupted")]
    Interrupted,
    /// `papers index` was stopped by Ctrl-C; the batches embedded before
    /// it were committed.
    #[error("{}", stopped(*added, *records))]
    IndexingStopped {
        /// New records kept (embedded before the stop).
        added: usize,
        /// Records the index has now.
        records: usize,
    },
    /// No record has an id starting with this prefix.
    #[error("unknown id `{}`", shown(id))]
    UnknownId {
        /// The id or prefix as given.
        id: String,
    },
    /// The id names a paper the reader removed.
    #[error("paper `{id}` was removed (`papers remove --undo {id}`, then `papers index` of its input, brings it back)")]
    Removed {
        /// The id or prefix as given.
        id: String,
    },
    /// Several records share this id prefix.
    #[error("ambiguous id `{}`: matches {}", shown(prefix), candidates.join(", "))]
    AmbiguousId {
        /// The prefix as given.
        prefix: String,
        /// The full ids it matches.
        candidates: Vec<String>,
    },
    /// The text is not a usable id or prefix.
    #[error("invalid id `{}`: {reason}", shown(id))]
    InvalidId {
        /// The id as given.
        id: String,
        /// Why it is not an id.
        reason: String,
    },
    /// The query has no text in it.
    #[error("the query is empty")]
    EmptyQuery,
    /// An argument of a request (an MCP tool's, say) is out of range.
    #[error("{name}: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No tag has this name.
    #[error("no tag `{tag}` {}", if known.is_empty() {
        "(there are no tags yet: `papers tag NAME ID...` starts one)".to_string()
    } else {
        match known.len() {
            0..=20 => format!("(tags: {})", known.join(", ")),
            n => format!("(tags: {}, and {} more; `papers tags` lists them)", known[..20].join(", "), n - 20),
        }
    })]
    UnknownTag {
        /// The name as given.
        tag: String,
        /// The tags there are.
        known: Vec<String>,
    },
    /// A feed could not be made (nothing new, no usable tag).
    #[error("{0}")]
    Feed(String),
    /// The MCP connection failed (not a tool's error: those are answers).
    #[error("MCP: {0}")]
    Mcp(String),
}

/// What a stopped `papers index` says.
fn stopped(added: usize, records: usize) -> String {
    if added == 0 {
        format!("stopped by Ctrl-C before a batch was finished; nothing was written and the index keeps its {records} records (run the same command again to finish)")
    } else {
        format!("stopped by Ctrl-C; kept the {added} new records embedded so far, {records} records in all (run the same command again to finish)")
    }
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }

    /// Whether this is an I/O error of `kind` (a closed pipe, say).
    pub fn is_io(&self, kind: std::io::ErrorKind) -> bool {
        matches!(self, Error::Io { error, .. } if error.kind() == kind)
    }

    /// Whether this is a run stopped by Ctrl-C (exit code 130).
    pub fn is_interrupt(&self) -> bool {
        matches!(self, Error::Interrupted | Error::IndexingStopped { .. })
    }

    /// The index at `dir` was built with `built_with` (its model id and
    /// weights' SHA-256), other weights than `model`'s (`weights`); the
    /// hint says what to run: `--model` with the index's model when the ids
    /// differ, else `rebuild(model)`.
    pub fn model_mismatch(
        dir: &std::path::Path,
        built_with: (&str, &str),
        model: &str,
        weights: &str,
        rebuild: &dyn Fn(&str) -> String,
    ) -> Self {
        let short = |d: &str| d[..12.min(d.len())].to_string();
        let (index_model, index_weights) = built_with;
        let hint = if index_model != model {
            format!(
                "pass `--model {index_model}` to use the index's model, or run `{}` to re-embed it \
                 with {model}",
                rebuild(model)
            )
        } else {
            format!(
                "the model's files changed since the index was built; point `--model-dir` at the \
                 files it was built with, or run `{}` to re-embed it",
                rebuild(model)
            )
        };
        Error::IndexModelMismatch {
            path: dir.to_path_buf(),
            index_model: format!("{index_model} (weights {})", short(index_weights)),
            model: format!("{model} (weights {})", short(weights)),
            hint,
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

/// A value from the user as a message shows it: at most 80 characters,
/// the rest said as a count, so a 200 MB bad id is not echoed whole.
pub fn shown(text: &str) -> String {
    const MOST: usize = 80;
    match text.char_indices().nth(MOST) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}... ({} more characters)",
            &text[..at],
            text[at..].chars().count()
        ),
    }
}

/// An I/O error in words a user acts on: the common causes are named
/// plainly, the rest keep the system's text.
pub fn describe_io(error: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            "disk full (no space left on the device); free some space and run the command again"
                .into()
        }
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::ReadOnlyFilesystem => "read-only file system".into(),
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::ResourceBusy => "busy (in use by another process)".into(),
        _ => {
            let text = error.to_string();
            // "... (os error N)" adds nothing for a reader.
            match text.rfind(" (os error ") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
    }
}

/// A candle error as one line: candle appends a backtrace to its message
/// when `RUST_BACKTRACE` is set, which papers never prints.
pub(crate) fn candle_message(err: candle_core::Error) -> String {
    let inner = match err {
        candle_core::Error::WithBacktrace { inner, .. } => *inner,
        other => other,
    };
    inner
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}
