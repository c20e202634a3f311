//! A commit written beside the embedding it waits for. A new index spends
//! its time embedding; the rest of its commit (the database rows of every
//! record, the lexical analysis and segments) needs only the texts, so a
//! writer thread does it while the vectors are made, inside a transaction
//! that commits once they arrive. On a GPU, whose batches leave the cores
//! idle, that takes the commit's text work off the run's length.
//!
//! A new folder's graphs (see [`crate::index::graphs`]) are built on a third
//! thread from the vectors as they come, in row order, and stored once the
//! commit is made: on a GPU, whose batches leave the cores idle, the build
//! that followed the commit runs while the rows are embedded.
//!
//! If the embedding fails or stops, the writer abandons everything (the
//! transaction rolls back, a new folder is removed, appended segments are
//! never named) and the update comes back with the vectors it got, for the
//! caller to commit what was finished the ordinary way.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::commit::{check_vectors, commit_to, Appender};
use super::update::{ModelStamp, Update, UpdateReport};
use crate::error::{Error, Result};
use crate::index::db::{Db, State};
use crate::paper::Paper;

/// One record's vectors: its own and its windows'.
pub type RecordVectors = (Vec<f32>, Vec<Vec<f32>>);

/// Finished groups of records are handed to this: the index of the
/// group's first text and the vectors of each.
pub type Sink<'a> = dyn FnMut(usize, Vec<RecordVectors>) + 'a;

/// An embedding that failed or stopped: nothing was committed, and the
/// update holds the vectors of the groups that were finished.
pub struct Unembedded {
    /// The update, with the finished groups' vectors.
    pub update: Box<Update>,
    /// Why the embedding ended.
    pub error: Error,
}

impl Update {
    /// Embeds the new records with `embed` and commits them, writing
    /// everything but the vectors on another thread meanwhile. `embed` gets
    /// the texts to embed in row order (new records take rows in id order)
    /// and hands finished groups to its sink. The outer error is the
    /// commit's; the inner one says the embedding failed, and nothing was
    /// committed.
    pub fn embed_and_commit(
        mut self,
        dir: &Path,
        stamp: &ModelStamp,
        embed: &mut dyn FnMut(&[&str], &mut Sink<'_>) -> Result<()>,
    ) -> Result<std::result::Result<UpdateReport, Unembedded>> {
        self.sort_new();
        let (send, receive) = mpsc::channel::<Option<Vec<RecordVectors>>>();
        // A new folder's rows are the new records in order, so its graphs
        // can be built from the vectors as they come.
        let (arriving, incoming) = mpsc::channel::<Vec<f32>>();
        let beside = self.base.is_none() && self.new.len() >= crate::index::graphs::graph_from();
        let mut got: Vec<Option<RecordVectors>> = vec![None; self.new.len()];
        let outcome = std::thread::scope(|scope| {
            // Owned here, so that a panic drops them and the threads that
            // wait on them end instead of holding the scope open.
            let (send, arriving) = (send, arriving);
            let this = &self;
            let writer = scope.spawn(move || this.write_beside(dir, stamp, receive));
            let rows = if beside { this.new.len() } else { 0 };
            let graphs = scope.spawn(move || {
                crate::index::graphs::build_arriving(rows, stamp.dimension, &incoming)
            });
            let texts: Vec<std::borrow::Cow<'_, str>> =
                this.new.iter().map(Paper::embed_text).collect();
            let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
            let embedded = embed(&refs, &mut |first, group| {
                if beside {
                    let _ = arriving.send(group.iter().flat_map(|(v, _)| v.clone()).collect());
                }
                for (i, record) in group.into_iter().enumerate() {
                    got[first + i] = Some(record);
                }
            })
            .and_then(|()| check(&this.new, &got, stamp.dimension));
            drop(arriving);
            match embedded {
                Ok(()) => {
                    let vectors = got.iter_mut().map(|v| v.take().expect("checked")).collect();
                    let _ = send.send(Some(vectors));
                    Ok((joined(writer), joined(graphs)))
                }
                Err(e) => {
                    let _ = send.send(None);
                    let _ = joined(writer);
                    let _ = joined(graphs);
                    Err(e)
                }
            }
        });
        match outcome {
            Ok((committed, graphs)) => {
                let (state, data) = committed?;
                // The graphs are a cache of committed rows: stored after
                // the commit, and any a failure left out are built by the
                // session's commit (`super::session`), as every write's are.
                for (tile, graph) in graphs.into_iter().flatten() {
                    let _ = crate::index::graphs::store(&data, &tile, &graph);
                }
                self.report.records = state.live as usize;
                Ok(Ok(self.report))
            }
            Err(error) => {
                for (i, record) in got.into_iter().enumerate() {
                    if let Some((vector, windows)) = record {
                        self.vectors[i] = Some(vector);
                        self.windows[i] = windows;
                    }
                }
                Ok(Err(Unembedded {
                    update: Box::new(self),
                    error,
                }))
            }
        }
    }

    /// New records in id order, the order of their rows.
    fn sort_new(&mut self) {
        let mut new: Vec<_> = std::mem::take(&mut self.new)
            .into_iter()
            .zip(std::mem::take(&mut self.vectors))
            .zip(std::mem::take(&mut self.windows))
            .collect();
        new.sort_by_key(|((paper, _), _)| paper.id);
        for ((paper, vector), windows) in new {
            self.new.push(paper);
            self.vectors.push(vector);
            self.windows.push(windows);
        }
    }

    /// The writer thread: the commit's target, then everything but the
    /// vectors, then (once they come) the vectors and the commit point.
    /// `None` from `vectors` abandons the commit.
    fn write_beside(
        &self,
        dir: &Path,
        stamp: &ModelStamp,
        vectors: mpsc::Receiver<Option<Vec<RecordVectors>>>,
    ) -> Result<(State, PathBuf)> {
        let base = self
            .base
            .as_ref()
            .map(|b| (b.data.clone(), b.state.clone()));
        commit_to(dir, base, stamp, |target| {
            let mut appender = Appender::new(target, stamp.dimension);
            let first = appender.next_row() as usize;
            let papers: Vec<&Paper> = self.new.iter().collect();
            appender.texts(&papers)?;
            let mut db = Db::open(&target.data, true)?;
            let mut tx = db.begin()?;
            let live = self.write_records(&mut tx, target, first, &papers)?;
            let Ok(Some(vectors)) = vectors.recv() else {
                // Abandoned: the caller has the embedding's error.
                return Err(Error::Interrupted);
            };
            let rows: Vec<(&[f32], &[Vec<f32>])> =
                vectors.iter().map(|(v, w)| (&v[..], &w[..])).collect();
            appender.vectors(&rows)?;
            appender.commit(tx, live)
        })
    }
}

/// Every new record has its vector, and every vector the model's length.
fn check(new: &[Paper], got: &[Option<RecordVectors>], dimension: usize) -> Result<()> {
    for (paper, record) in new.iter().zip(got) {
        let (vector, windows) = match record {
            Some((vector, windows)) => (Some(vector), &windows[..]),
            None => (None, &[][..]),
        };
        check_vectors(paper, vector, windows, dimension)?;
    }
    Ok(())
}

/// A scoped thread's answer; its panic goes on.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
