//! The HNSW graph over the stored vectors: the only file that names hnsw_rs.
//! A graph covers a run of rows and its node ids are the rows. It is built
//! in memory when a search asks for one and none is stored (`--graph` on a
//! small index), or stored beside the vectors by the writer (see
//! [`super::graphs`]) and loaded from there.
//!
//! Vectors are unit length, so the distance is `1 - dot`. hnsw_rs's own
//! `DistDot` asserts `dot >= 0` and panics on real embeddings, where rounding
//! makes `dot(v, v)` exceed 1, so [`ClampedDot`] clamps instead.

use std::path::Path;

use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::{HnswIo, ReloadOptions};
use hnsw_rs::prelude::{Distance, Hnsw};

use crate::error::{Error, Result};

/// Links per node per layer.
const MAX_CONNECTIONS: usize = 16;
/// Candidate list size while building.
const EF_CONSTRUCTION: usize = 200;
/// Layers allowed.
const MAX_LAYERS: usize = 16;
/// Rows from which a graph is built by parallel inserts.
const SERIAL_BELOW: usize = 10_000;
/// Smallest candidate list size while searching.
const MIN_EF_SEARCH: usize = 64;

/// `1 - dot(a, b)`, clamped at 0, for unit vectors.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClampedDot;

impl Distance<f32> for ClampedDot {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        (1.0 - dot).max(0.0)
    }
}

thread_local! {
    /// Set while this thread loads a graph: a panic of hnsw_rs's reader is
    /// an unreadable file, handled, not a message for the user.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent on a thread loading a
/// graph and otherwise does what the previous hook did.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
}

/// An HNSW graph whose node ids are record positions.
pub struct Graph {
    hnsw: Hnsw<'static, f32, ClampedDot>,
}

impl Graph {
    /// Builds a graph over `vectors` (row-major, `dimension` wide). Up to
    /// [`SERIAL_BELOW`] rows are inserted serially in row order, so the
    /// same rows always give the same graph; larger sets in parallel.
    pub fn build(vectors: &[f32], dimension: usize) -> Graph {
        Graph::build_from(vectors, dimension, 0)
    }

    /// [`Graph::build`] for rows `first_row..`: `vectors` are those rows'.
    pub fn build_from(vectors: &[f32], dimension: usize, first_row: usize) -> Graph {
        let rows = vectors.len() / dimension.max(1);
        let hnsw = Hnsw::new(
            MAX_CONNECTIONS,
            rows.max(1),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            ClampedDot,
        );
        if rows < SERIAL_BELOW {
            for (i, row) in vectors.chunks_exact(dimension).enumerate() {
                hnsw.insert_slice((row, first_row + i));
            }
        } else {
            let all: Vec<(&[f32], usize)> = vectors
                .chunks_exact(dimension)
                .enumerate()
                .map(|(i, row)| (row, first_row + i))
                .collect();
            hnsw.parallel_insert_slice(&all);
        }
        Graph { hnsw }
    }

    /// The `k` nearest rows to `query` as (row, distance), nearest first.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        let ef = (2 * k).max(MIN_EF_SEARCH);
        self.hnsw
            .search(query, k, ef)
            .into_iter()
            .map(|n| (n.d_id, n.distance))
            .collect()
    }

    /// Writes the graph as `dir/basename.hnsw.graph` and
    /// `dir/basename.hnsw.data` (hnsw_rs's format).
    pub fn save(&self, dir: &Path, basename: &str) -> Result<()> {
        self.hnsw
            .file_dump(dir, basename)
            .map(|_| ())
            .map_err(|e| Error::io(dir.join(basename), std::io::Error::other(e.to_string())))
    }

    /// Loads a graph [`Graph::save`] wrote, or `None` if it is missing or
    /// damaged (hnsw_rs panics on some damage: that is caught, and the
    /// caller scans those rows instead).
    pub fn load(dir: &Path, basename: &str) -> Option<Graph> {
        let dir = dir.to_path_buf();
        let basename = basename.to_string();
        quiet_panics();
        QUIET.with(|q| q.set(true));
        let loaded = std::panic::catch_unwind(move || {
            // hnsw_rs's loaded graph borrows its loader; the loader is a
            // few paths and counters, kept for the process's life.
            // The vectors stay in the mapped data file (pages the OS can
            // drop), not a second copy on the heap.
            let options = ReloadOptions::new(true);
            let io: &'static mut HnswIo =
                Box::leak(Box::new(HnswIo::new_with_options(&dir, &basename, options)));
            io.load_hnsw::<f32, ClampedDot>().ok()
        });
        QUIET.with(|q| q.set(false));
        loaded.ok().flatten().map(|hnsw| Graph { hnsw })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.hnsw.get_nb_point()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded random unit vectors (xorshift), so failures can be replayed.
    pub(crate) fn random_unit_vectors(seed: u64, rows: usize, dimension: usize) -> Vec<f32> {
        let mut state = seed.max(1);
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let mut out = Vec::with_capacity(rows * dimension);
        for _ in 0..rows {
            let row: Vec<f32> = (0..dimension).map(|_| next()).collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            out.extend(row.iter().map(|x| x / norm));
        }
        out
    }

    fn brute_force(vectors: &[f32], dimension: usize, query: &[f32], k: usize) -> Vec<usize> {
        let mut scored: Vec<(usize, f32)> = vectors
            .chunks_exact(dimension)
            .enumerate()
            .map(|(i, v)| (i, v.iter().zip(query).map(|(a, b)| a * b).sum()))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().take(k).map(|(i, _)| i).collect()
    }

    #[test]
    fn recall_at_10_against_brute_force_on_synthetic_vectors() {
        let seed = std::env::var("PAPERS_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_u64);
        println!("seed {seed}");
        // Queries are perturbed copies of stored rows, as real queries land
        // near real abstracts; 64 dimensions keep the test quick.
        let (rows, dimension, queries, k) = (5000, 64, 100, 10);
        let vectors = random_unit_vectors(seed, rows, dimension);
        let noise = random_unit_vectors(seed ^ 0xabcdef, queries, dimension);
        let graph = Graph::build(&vectors, dimension);
        let mut found = 0;
        for q in 0..queries {
            let base = &vectors[q * 37 % rows * dimension..][..dimension];
            let mut query: Vec<f32> = base
                .iter()
                .zip(&noise[q * dimension..])
                .map(|(a, b)| a + 0.5 * b)
                .collect();
            let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
            query.iter_mut().for_each(|x| *x /= norm);
            let truth = brute_force(&vectors, dimension, &query, k);
            let got: Vec<usize> = graph
                .search(&query, k)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            found += truth.iter().filter(|i| got.contains(i)).count();
        }
        let recall = found as f64 / (queries * k) as f64;
        println!("recall@10 {recall:.3} (seed {seed})");
        assert!(recall >= 0.95, "recall@10 {recall:.3} with seed {seed}");
    }

    #[test]
    fn parallel_builds_find_the_nearest_too() {
        let vectors = random_unit_vectors(7, SERIAL_BELOW + 500, 16);
        let graph = Graph::build(&vectors, 16);
        assert_eq!(graph.len(), SERIAL_BELOW + 500);
        for row in [5, 4321, SERIAL_BELOW + 17] {
            let query = &vectors[16 * row..16 * (row + 1)];
            assert_eq!(graph.search(query, 1)[0].0, row);
        }
    }
}
