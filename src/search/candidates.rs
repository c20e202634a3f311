//! The candidates of a query vector, by strategy: the exact scan of the
//! f32 vectors, the int8 and binary scans rescored with the f32 ones, the
//! stored HNSW graphs or one built in memory; and the window vectors of
//! long records, which raise a record to its best passage. Every
//! candidate is a live row the caller's `keep` accepts.

use std::collections::HashMap;

use rayon::prelude::*;

use super::options::{SearchOptions, Strategy};
use super::rank::{top_k, top_k_chunks, Hit};
use crate::error::{Error, Result};
use crate::index::{rows, Index};
use crate::vector::dot;

/// Smallest candidate list of a walk through one stored graph (at most
/// 131,072 rows): on the million-record collection of `bench/scale.sh`, in 8
/// graphs, 100 found the f32 scan's 10 nearest (recall@10 1.0000 over 200
/// queries, 5.55 ms a query; 50: 0.9875), where one graph over the million
/// rows needed 200 for 0.997 (`cargo bench --bench scale -- stored INDEX`).
const STORED_EF: usize = 100;
/// The fewest rows asked of each stored graph when a search asks several.
const STORED_SHARE: usize = 100;

/// From this many records on, `auto` search scans the int8 vectors and
/// rescores the best candidates with the f32 ones; below it, it scans the
/// f32 vectors. The graph is never `auto`'s choice: a cold process pays
/// more to load or build it than the scan costs (`bench/scale.sh`).
pub const QUANTIZED_FROM: usize = 50_000;

/// Candidates the int8 scan passes to the f32 rescoring per hit wanted,
/// and at least.
const RESCORE_FACTOR: usize = 4;
const RESCORE_MIN: usize = 100;

/// The same for the binary scan, whose ranking is coarser.
const BINARY_FACTOR: usize = 40;
const BINARY_MIN: usize = 2000;

/// Subtracted from a window's cosine before it stands for its record: a
/// window is a fragment, and unpenalised fragments outrank whole abstracts
/// too often. `cargo bench --bench quality` on the seeds: 0.1 keeps every
/// tail query at rank 1 and costs nothing elsewhere; 0 costs 0.03 MRR on
/// known-item queries.
const WINDOW_PENALTY: f32 = 0.1;

/// Raises each hit's score to its best window's, and adds records whose
/// windows score where the candidates did not reach.
pub(super) fn apply_windows(
    index: &Index,
    hits: &mut Vec<Hit>,
    query: &[f32],
    keep: &dyn Fn(usize) -> bool,
) {
    if index.windows_file().rows() == 0 {
        return;
    }
    let mut best: HashMap<usize, f32> = HashMap::new();
    for (row, vector) in index.all_windows() {
        if !keep(row) {
            continue;
        }
        let score = dot(&vector, query) - WINDOW_PENALTY;
        let slot = best.entry(row).or_insert(f32::MIN);
        *slot = slot.max(score);
    }
    for hit in hits.iter_mut() {
        if let Some(score) = best.remove(&hit.row) {
            hit.score = hit.score.max(score);
        }
    }
    hits.extend(
        best.into_iter()
            .map(|(row, score)| Hit::new(row, score.max(dot(&index.vector(row), query)))),
    );
}

/// The strategy `auto` resolves to for this index.
pub fn resolve_strategy(index: &Index, strategy: Strategy) -> Strategy {
    match strategy {
        Strategy::Auto if index.len() >= QUANTIZED_FROM => Strategy::Quantized,
        Strategy::Auto => Strategy::Exact,
        other => other,
    }
}

/// The strategy `options` use on `index`: `auto` walks the stored graphs
/// where the index has them (mapping one costs less than one scan: at a
/// million records a cold `similar` took 20 ms through them against 45 ms
/// for the int8 scan), unless dates or a scope leave only some rows (a walk
/// could then find fewer than asked; the scan finds them all); otherwise
/// as [`resolve_strategy`].
pub fn strategy_for(index: &Index, options: &SearchOptions) -> Strategy {
    let walk = options.strategy == Strategy::Auto
        && !options.dates.is_set()
        && !options.scope.is_set()
        && !index.stored_graphs().graphs.is_empty();
    if walk {
        Strategy::Graph
    } else {
        resolve_strategy(index, options.strategy)
    }
}

/// Checks cosine scores before they are shown: a unit vector scores
/// from -1 to 1 (a window down to -1 minus its penalty), so anything
/// else, or no number at all, is a damaged vector file. O(hits).
pub fn sane(index: &Index, hits: &[Hit]) -> Result<()> {
    let bad = hits.iter().find(|h| {
        !(h.score.is_finite() && (-1.0 - WINDOW_PENALTY - 1e-3..=1.0 + 1e-3).contains(&h.score))
    });
    match bad {
        None => Ok(()),
        Some(hit) => Err(Error::corrupt(
            index.vectors_file().path(),
            format!(
                "record at row {} scores {}, which no unit vector can",
                hit.row, hit.score
            ),
        )),
    }
}

/// Unranked candidates for a query vector, at least the best `wanted`
/// of the rows `keep` accepts, scored with the f32 vectors.
pub(super) fn candidates(
    index: &Index,
    query: &[f32],
    keep: &(dyn Fn(usize) -> bool + Sync),
    wanted: usize,
    strategy: Strategy,
) -> Result<Vec<Hit>> {
    if query.len() != index.manifest().dimension {
        return Err(Error::Dimension {
            what: "the query vector".into(),
            found: query.len(),
            expected: index.manifest().dimension,
        });
    }
    let rows = index.rows();
    let wanted = wanted.min(rows);
    let exact = |row: usize| dot(&index.vector(row), query);
    let hits = candidates_by(index, query, keep, wanted, rows, strategy, exact)?;
    // A scan cut short by the request's deadline is not an answer.
    crate::deadline::current().check()?;
    Ok(hits)
}

/// [`candidates`] by the strategy that fits.
fn candidates_by(
    index: &Index,
    query: &[f32],
    keep: &(dyn Fn(usize) -> bool + Sync),
    wanted: usize,
    rows: usize,
    strategy: Strategy,
    exact: impl Fn(usize) -> f32 + Sync,
) -> Result<Vec<Hit>> {
    Ok(match resolve_strategy(index, strategy) {
        Strategy::Graph if rows > 0 => {
            // Ask for more than wanted: dead or filtered rows are dropped.
            let ask = wanted
                .saturating_add(rows - index.len())
                .saturating_mul(2)
                .min(rows);
            let stored = index.stored_graphs();
            // The walk scores rows by their int8 copy (a quarter of the
            // bytes), and its finds are rescored with f32 read row by row:
            // on a kernel that maps a whole page-cache folio per touch, a
            // walk through the f32 mapping of a million rows made `similar`
            // peak at 1.4 GB (int8: under the int8 file's 388 MB).
            let (q, scale) = rows::quantize_query(query);
            let quantized = index.quantized_file();
            let walk = |row: usize| rows::quantized_score(quantized.row(row), &q, scale);
            // One graph (built in memory) is walked for all `ask`. Several
            // stored graphs are each asked for their share, twice over and
            // at least STORED_SHARE, with a shorter candidate list: each
            // holds at most 131,072 rows.
            let graphs = index.stored_graphs().graphs.len();
            let (each, min_ef) = if graphs == 0 {
                (ask, crate::index::hnsw::MIN_EF_SEARCH)
            } else {
                let share = (2 * ask).div_ceil(graphs).max(STORED_SHARE);
                (ask.min(share), STORED_EF)
            };
            let ef = each.max(min_ef);
            let walked = |graph: &crate::index::hnsw::Graph| -> Vec<(usize, f32)> {
                graph
                    .search(each.min(graph.len()), ef, walk)
                    .into_iter()
                    .filter(|&(row, _)| row < rows && keep(row))
                    .collect()
            };
            let rescore = |found: Vec<(usize, f32)>| -> Vec<Hit> {
                found
                    .into_iter()
                    .map(|(row, _)| Hit::new(row, exact(row)))
                    .collect()
            };
            if stored.graphs.is_empty() {
                rescore(walked(index.graph()))
            } else {
                // Each stored graph's best (the graphs walked side by side);
                // of all they found, the best `ask` by the walk's int8 score
                // are rescored (one read each), then the rows past the graphs
                // are scanned.
                let mut found: Vec<(usize, f32)> = stored
                    .graphs
                    .par_iter()
                    .flat_map_iter(|g| walked(g))
                    .collect();
                found.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
                found.truncate(ask);
                let mut hits = rescore(found);
                let covered = stored.covered;
                let tail = top_k(
                    rows - covered,
                    wanted,
                    |i| dot(&index.mapped_vector(covered + i), query),
                    |i| keep(covered + i),
                );
                hits.extend(tail.into_iter().map(|h| Hit::new(covered + h.row, h.score)));
                hits
            }
        }
        Strategy::Binary => {
            let bits = rows::binarize(query);
            let pool = (wanted * BINARY_FACTOR).max(BINARY_MIN);
            let approx = top_k(
                rows,
                pool,
                |row| -(rows::hamming(index.binary_file().row(row), &bits) as f32),
                keep,
            );
            approx
                .into_iter()
                .map(|h| Hit::new(h.row, exact(h.row)))
                .collect()
        }
        Strategy::Quantized => {
            let pool = (wanted * RESCORE_FACTOR).max(RESCORE_MIN);
            let (q, scale) = rows::quantize_query(query);
            let width = 4 + index.manifest().dimension;
            // Read a chunk at a time rather than through the mapping: a scan
            // through it leaves the whole file resident (see `walk` above).
            let quantized = index.quantized_file();
            let approx = top_k_chunks(
                rows,
                pool,
                |range, out| {
                    let chunk = quantized.read_rows(range);
                    rows::quantized_scores(&chunk, width, &q, scale, out);
                },
                keep,
            );
            approx
                .into_iter()
                .map(|h| Hit::new(h.row, exact(h.row)))
                .collect()
        }
        _ => {
            let vectors = index.vectors_file();
            let dimension = index.manifest().dimension;
            top_k_chunks(
                rows,
                wanted,
                |range, out| {
                    let chunk = vectors.read_f32_rows(range);
                    out.extend(chunk.chunks_exact(dimension).map(|v| dot(v, query)));
                },
                keep,
            )
        }
    })
}
