//! Building an HNSW graph with hnsw_rs: the only file that names it.
//!
//! hnsw_rs inserts the rows (in parallel from `SERIAL_BELOW` rows), then
//! its layers are copied into a [`Graph`], the flat form that is stored and
//! searched (see `super::graph`); hnsw_rs's own structure, a few
//! kilobytes a row, is dropped once the graph is built.
//!
//! Vectors are unit length, so the distance is `1 - dot`. hnsw_rs's own
//! `DistDot` asserts `dot >= 0` and panics on real embeddings, where rounding
//! makes `dot(v, v)` exceed 1, so [`ClampedDot`] clamps instead.

use std::borrow::Cow;

use hnsw_rs::prelude::{Distance, Hnsw};

pub use super::graph::Graph;
use crate::vector::dot;

/// Links per node per layer (twice as many at layer 0).
const MAX_CONNECTIONS: usize = 16;
/// Candidate list size while building: 100 built the 100,000-record
/// collection of `bench/scale.sh` in 53 s at recall@10 1.000 (`cargo bench
/// --bench scale -- graph INDEX`; 200, with a dot product without AVX,
/// took 234 s for 100,000 rows of the million-record one).
const EF_CONSTRUCTION: usize = 100;
/// Layers allowed.
const MAX_LAYERS: usize = 16;
/// Rows from which a graph is built by parallel inserts.
const SERIAL_BELOW: usize = 10_000;
/// Rows read and inserted at a time.
const INSERT_CHUNK: usize = 16_384;
/// Smallest candidate list size while searching: recall@10 against the f32
/// scan on the million-record collection of `bench/scale.sh` was 0.962 at
/// 64, 0.977 at 100, 0.987 at 160, 0.997 at 200 and at 250
/// (`cargo bench --bench scale -- stored INDEX`).
pub const MIN_EF_SEARCH: usize = 200;

/// `1 - dot(a, b)`, clamped at 0, for unit vectors.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClampedDot;

impl Distance<f32> for ClampedDot {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - dot(a, b)).max(0.0)
    }
}

impl Graph {
    /// Builds a graph over `vectors` (row-major, `dimension` wide). Up to
    /// `SERIAL_BELOW` rows are inserted serially in row order, so the
    /// same rows always give the same graph; larger sets in parallel.
    pub fn build(vectors: &[f32], dimension: usize) -> Graph {
        Graph::build_from(vectors, dimension, 0)
    }

    /// [`Graph::build`] for rows `first_row..`: `vectors` are those rows'.
    pub fn build_from(vectors: &[f32], dimension: usize, first_row: usize) -> Graph {
        let rows = vectors.len() / dimension.max(1);
        let d = dimension.max(1);
        Graph::build_rows(first_row..first_row + rows, dimension, &|r| {
            Some(Cow::Borrowed(
                &vectors[(r.start - first_row) * d..(r.end - first_row) * d],
            ))
        })
        .expect("every row is at hand")
    }

    /// [`Graph::build`] for `rows`, fetched `INSERT_CHUNK` rows at a time
    /// by `vectors(range)`, in order: hnsw_rs keeps its own copy of each
    /// row, so a caller that reads them for the build holds one chunk, not
    /// the graph's rows (at 100,000 rows, 154 MB less at the build's peak).
    /// A fetch may wait for its rows to be made; `None` from it abandons the
    /// build.
    pub fn build_rows<'a>(
        rows: std::ops::Range<usize>,
        dimension: usize,
        vectors: &dyn Fn(std::ops::Range<usize>) -> Option<Cow<'a, [f32]>>,
    ) -> Option<Graph> {
        let (first_row, count) = (rows.start, rows.len());
        if count == 0 || dimension == 0 {
            return Some(Graph::from_layers(first_row, &[], &[], 0));
        }
        let hnsw = Hnsw::new(
            MAX_CONNECTIONS,
            count,
            MAX_LAYERS,
            EF_CONSTRUCTION,
            ClampedDot,
        );
        for start in (0..count).step_by(INSERT_CHUNK) {
            let end = (start + INSERT_CHUNK).min(count);
            let chunk = vectors(first_row + start..first_row + end)?;
            let all: Vec<(&[f32], usize)> = chunk.chunks_exact(dimension).zip(start..).collect();
            if count < SERIAL_BELOW {
                all.iter().for_each(|&row| hnsw.insert_slice(row));
            } else {
                hnsw.parallel_insert_slice(&all);
            }
        }
        let rows = count;
        let indexation = hnsw.get_point_indexation();
        let top = indexation.get_max_level_observed() as usize;
        let mut layer0 = vec![Vec::new(); rows];
        let mut upper: Vec<Vec<(u32, Vec<u32>)>> = vec![Vec::new(); top];
        let mut entry = None;
        for point in indexation {
            let node = point.get_origin_id() as u32;
            let level = point.get_point_id().0 as usize;
            let ids = |list: &[hnsw_rs::hnsw::Neighbour]| -> Vec<u32> {
                list.iter().map(|n| n.d_id as u32).collect()
            };
            for (layer, list) in point
                .get_neighborhood_id()
                .iter()
                .enumerate()
                .take(level + 1)
            {
                match layer {
                    0 => layer0[node as usize] = ids(list),
                    l => upper[l - 1].push((node, ids(list))),
                }
            }
            if level == top {
                entry = Some(entry.map_or(node, |e: u32| e.min(node)));
            }
        }
        Some(Graph::from_layers(
            first_row,
            &layer0,
            &upper,
            entry.unwrap_or(0),
        ))
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

    /// The graph's `k` best for `query` over `vectors`.
    fn walk(
        graph: &Graph,
        vectors: &[f32],
        dimension: usize,
        query: &[f32],
        k: usize,
    ) -> Vec<usize> {
        let score = |row: usize| dot(&vectors[row * dimension..][..dimension], query);
        graph
            .search(k, MIN_EF_SEARCH, score)
            .into_iter()
            .map(|(row, _)| row)
            .collect()
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
            let got = walk(&graph, &vectors, dimension, &query, k);
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
            assert_eq!(walk(&graph, &vectors, 16, query, 1), [row]);
        }
    }

    #[test]
    fn a_stored_graph_answers_as_the_built_one_and_damage_is_refused() {
        let (rows, dimension, first) = (3000, 32, 500);
        let vectors = random_unit_vectors(11, rows, dimension);
        let graph = Graph::build_from(&vectors, dimension, first);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.hnsw");
        graph.save(&path).unwrap();
        let stored = Graph::open(&path, first).unwrap();
        assert_eq!(stored.len(), rows);
        let score = |row: usize| {
            dot(
                &vectors[(row - first) * dimension..][..dimension],
                &vectors[..dimension],
            )
        };
        let built = graph.search(10, 64, score);
        assert_eq!(stored.search(10, 64, score), built);
        assert_eq!(built[0].0, first, "a stored row finds itself first");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        assert!(Graph::open(&path, first).is_none(), "a cut file is refused");
        let mut wrong = bytes.clone();
        wrong[0] ^= 1;
        std::fs::write(&path, &wrong).unwrap();
        assert!(
            Graph::open(&path, first).is_none(),
            "a wrong magic is refused"
        );
        // Garbled neighbours past the header cost recall, never a panic.
        let mut garbled = bytes;
        for b in garbled.iter_mut().skip(64).step_by(7) {
            *b = 0xff;
        }
        std::fs::write(&path, &garbled).unwrap();
        if let Some(g) = Graph::open(&path, first) {
            g.search(10, 64, score);
        }
    }
}
