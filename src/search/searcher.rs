//! [`Searcher`]: the read side as one object that a one-shot command, the
//! HTTP server and the MCP server hold alike. It owns an opened index and,
//! once a query needs it, the model the index was built with; it is `Send +
//! Sync`, so one instance answers many threads.
//!
//! A long-lived searcher ([`Searcher::follow`]) follows the writer: before
//! answering it looks (at most every `FOLLOW_EVERY`) at the index's commit
//! point (the manifest and the database and its write-ahead log) and, when
//! any of them changed, opens the new committed state. The old state stays
//! whole for the requests still using it: an [`Index`] holds open every
//! file its state names, so a file a later commit deletes (a merged
//! segment, a replaced data folder) stays readable until the last request
//! holding that `Index` drops it. The model is kept across commits unless a
//! rebuild changed it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::answer::{self, Query};
use super::dupes::near_duplicates;
use super::found::{Annotations, Found, Info, Pair, Results};
use super::options::SearchOptions;
use super::retrieve;
use crate::embed::{BertEmbedder, Embedder, ModelChoice};
use crate::error::{Error, Result};
use crate::id::Wanted;
use crate::index::reading::ReadingState;
use crate::index::{manifest, Index};
use crate::paper::Paper;

/// How often a following searcher looks for a new commit.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(200);

/// The files whose change means a new commit: (length, modified) of each.
type Stamp = Vec<Option<(u64, std::time::SystemTime)>>;

struct Current {
    index: Arc<Index>,
    stamp: Stamp,
    checked: Instant,
}

/// The model of an index, with the weights it was checked against.
struct Model {
    weights_sha256: String,
    embedder: Arc<BertEmbedder>,
}

/// Answers every read command on one index.
pub struct Searcher {
    dir: PathBuf,
    choice: ModelChoice,
    follow: bool,
    current: RwLock<Current>,
    model: Mutex<Option<Model>>,
    /// Set once the model failed to load for a lexical query, which then
    /// searches by words alone rather than trying again on every query
    /// (until another mode's query loads it).
    words_only: AtomicBool,
}

impl Searcher {
    /// Opens the index in `dir`; the model is loaded when a query first
    /// needs it.
    pub fn open(dir: &Path, choice: &ModelChoice) -> Result<Searcher> {
        let index = Index::open(dir)?;
        Ok(Searcher::new(dir, choice, index, None))
    }

    /// Opens the index and its model side by side (each takes milliseconds
    /// that a one-query process waits for); `note` hears which model was
    /// loaded. In lexical mode the model is optional ([`answer::open`]).
    pub fn open_for(
        dir: &Path,
        choice: &ModelChoice,
        options: &SearchOptions,
        note: &(dyn Fn(&str) + Sync),
    ) -> Result<Searcher> {
        let (index, model) = answer::open(dir, choice, options, note)?;
        // Only lexical mode opens without the model: it failed to load.
        let words_only = model.is_none();
        let searcher = Searcher::new(dir, choice, index, model);
        searcher.words_only.store(words_only, Ordering::Relaxed);
        Ok(searcher)
    }

    fn new(dir: &Path, choice: &ModelChoice, index: Index, model: Option<BertEmbedder>) -> Self {
        let model = model.map(|embedder| Model {
            weights_sha256: index.manifest().weights_sha256.clone(),
            embedder: Arc::new(embedder),
        });
        Searcher {
            dir: dir.to_path_buf(),
            choice: choice.clone(),
            follow: false,
            current: RwLock::new(Current {
                stamp: stamp(dir, &index),
                index: Arc::new(index),
                checked: Instant::now(),
            }),
            model: Mutex::new(model),
            words_only: AtomicBool::new(false),
        }
    }

    /// Makes this searcher follow the writer: each answer comes from the
    /// newest committed state (looked for at most every `FOLLOW_EVERY`).
    /// The stored HNSW graphs are mapped here rather than on the first query.
    pub fn follow(mut self) -> Self {
        self.follow = true;
        self.index().stored_graphs();
        self
    }

    /// `options` as this searcher answers them on `index` (see
    /// [`super::candidates::strategy_for`]).
    fn resolve(&self, index: &Index, options: &SearchOptions) -> SearchOptions {
        SearchOptions {
            strategy: super::candidates::strategy_for(index, options),
            ..options.clone()
        }
    }

    /// The index folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The committed state answers come from now: the newest one when
    /// following. A state that cannot be opened (a writer mid-switch, damage)
    /// leaves the previous one in use and is tried again next time.
    pub fn index(&self) -> Arc<Index> {
        if self.follow {
            self.refresh();
        }
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        Arc::clone(&current.index)
    }

    /// Opens the newest committed state if the commit point changed since
    /// the last look; returns whether it did.
    pub fn refresh(&self) -> bool {
        self.look(FOLLOW_EVERY)
    }

    /// Opens the newest committed state now, however recently it looked:
    /// for a caller that has just written the index itself (MCP's `tag`).
    pub fn refresh_now(&self) -> bool {
        self.look(Duration::ZERO)
    }

    /// Opens the newest committed state if the last look is `every` old
    /// and the commit point changed since.
    fn look(&self, every: Duration) -> bool {
        {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if current.checked.elapsed() < every {
                return false;
            }
        }
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.checked.elapsed() < every {
            return false;
        }
        current.checked = Instant::now();
        let now = stamp(&self.dir, &current.index);
        if now == current.stamp {
            return false;
        }
        match Index::open(&self.dir) {
            Ok(index) => {
                // Graphs loaded by the previous state are shared, so this
                // loads only those a new commit wrote.
                index.stored_graphs();
                current.stamp = stamp(&self.dir, &index);
                current.index = Arc::new(index);
                true
            }
            Err(_) => false,
        }
    }

    /// Loads the index's model now rather than on the first query; `note`
    /// hears which model was loaded.
    pub fn load_model(&self, note: &dyn Fn(&str)) -> Result<()> {
        self.model_for(&self.index(), note).map(|_| ())
    }

    /// The model of `index`: the one loaded, unless a rebuild changed it.
    fn model_for(&self, index: &Index, note: &dyn Fn(&str)) -> Result<Arc<BertEmbedder>> {
        let mut model = self.model.lock().unwrap_or_else(|e| e.into_inner());
        let weights = &index.manifest().weights_sha256;
        if let Some(m) = model.as_ref().filter(|m| &m.weights_sha256 == weights) {
            return Ok(Arc::clone(&m.embedder));
        }
        let embedder = Arc::new(answer::load_for(
            &self.dir,
            index.manifest(),
            &self.choice,
            Some(index),
            note,
        )?);
        *model = Some(Model {
            weights_sha256: weights.clone(),
            embedder: Arc::clone(&embedder),
        });
        Ok(embedder)
    }

    /// Answers a text query (`papers search`).
    pub fn search(&self, query: &Query) -> Result<Results> {
        let index = self.index();
        let model = match query.options.mode {
            // Lexical mode reads the model only for its no-match decision.
            super::Mode::Lexical if self.words_only.load(Ordering::Relaxed) => None,
            super::Mode::Lexical => {
                let model = self.model_for(&index, &|_| {}).ok();
                self.words_only.store(model.is_none(), Ordering::Relaxed);
                model
            }
            _ => {
                let model = self.model_for(&index, &|_| {})?;
                // Loaded after all: lexical queries may read it again.
                self.words_only.store(false, Ordering::Relaxed);
                Some(model)
            }
        };
        let query = Query {
            options: self.resolve(&index, &query.options),
            ..query.clone()
        };
        answer::answer(&index, model.as_deref().map(|m| m as &dyn Embedder), &query)
    }

    /// The records like those of `like` and unlike those of `unlike` (ids in
    /// any form [`Index::resolve`] takes), never any of them.
    pub fn similar(
        &self,
        like: &[String],
        unlike: &[String],
        options: &SearchOptions,
    ) -> Result<Results> {
        let index = self.index();
        let resolve = |ids: &[String]| {
            ids.iter()
                .map(|id| index.resolve(&Wanted::parse(id)))
                .collect::<Result<Vec<_>>>()
        };
        let (like, unlike) = (resolve(like)?, resolve(unlike)?);
        if like.is_empty() {
            return Err(Error::EmptyQuery);
        }
        let options = self.resolve(&index, options);
        let hits = retrieve::similar_to_set(&index, &like, &unlike, &options)?;
        let found = hits
            .into_iter()
            .map(|hit| Ok(Found::new(hit, index.paper(hit.row)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Results {
            found,
            notes: Annotations::default(),
        })
    }

    /// The record with this id (`papers show`).
    pub fn show(&self, id: &str) -> Result<Paper> {
        let index = self.index();
        index.paper(index.resolve(&Wanted::parse(id))?)
    }

    /// Calls `f` with every live record, in id order (`papers list`).
    pub fn for_each_paper(&self, mut f: impl FnMut(Paper) -> Result<()>) -> Result<()> {
        // In the order they were added: a dump's papers together, the
        // newest last.
        self.index().db().for_each(false, |_, paper| f(paper))
    }

    /// The reading list: the papers marked `state` (saved or read), the
    /// newest mark first (ties by id); a mark of a paper removed since is
    /// left out (`papers list --saved`).
    pub fn reading_list(&self, state: ReadingState) -> Result<Vec<Paper>> {
        let index = self.index();
        let mut marks: Vec<_> = index
            .marks()?
            .into_iter()
            .filter(|m| m.state == state)
            .collect();
        marks.sort_by(|a, b| b.at.cmp(&a.at).then(a.id.cmp(&b.id)));
        let mut papers = Vec::with_capacity(marks.len());
        for mark in marks {
            match index.resolve(&Wanted::parse(&mark.id)) {
                Ok(row) => papers.push(index.paper(row)?),
                Err(Error::UnknownId { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(papers)
    }

    /// What is in the index (`papers info`).
    pub fn info(&self) -> Result<Info> {
        let index = self.index();
        Ok(Info {
            path: index.dir().to_path_buf(),
            records: index.len(),
            manifest: index.manifest().clone(),
            windows: index.window_counts(),
            generation: index.state().generation,
            strategy: super::candidates::strategy_for(&index, &SearchOptions::default()),
            size_bytes: index.size_on_disk(),
            sources: index.file_counts()?,
            bulk_encoder: crate::embed::batched::cpu_default(),
        })
    }

    /// Near-duplicate pairs with their records (`papers dupes`).
    pub fn dupes(&self, min_score: f32, min_overlap: f32, limit: usize) -> Result<Vec<Pair>> {
        let index = self.index();
        near_duplicates(&index, min_score, min_overlap, limit)?
            .into_iter()
            .map(|dupe| {
                Ok(Pair {
                    dupe,
                    a: index.paper(dupe.a)?,
                    b: index.paper(dupe.b)?,
                })
            })
            .collect()
    }

    /// The new papers ranked by the reader's tags (`papers feed`).
    pub fn feed(&self, request: &crate::feed::FeedRequest) -> Result<crate::feed::Feed> {
        crate::feed::feed(&self.index(), request)
    }

    /// Every tag with its counts (`papers tags`).
    pub fn tags(&self) -> Result<Vec<crate::feed::TagSummary>> {
        crate::feed::summaries(&self.index())
    }

    /// The full check of the state in use (`papers check`).
    pub fn check(&self) -> Result<usize> {
        let index = self.index();
        index.check()?;
        Ok(index.len())
    }
}

/// The commit point's files as they are now: the manifest (a rebuild
/// switches it), the database and its write-ahead log (every commit
/// changes one of them).
fn stamp(dir: &Path, index: &Index) -> Stamp {
    let data = index.data_dir();
    [
        dir.join(manifest::MANIFEST),
        data.join(crate::index::db::DATABASE),
        data.join(format!("{}-wal", crate::index::db::DATABASE)),
    ]
    .iter()
    .map(|p| {
        std::fs::metadata(p)
            .ok()
            .and_then(|m| Some((m.len(), m.modified().ok()?)))
    })
    .collect()
}

/// One searcher serves many threads.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Searcher>();
};
