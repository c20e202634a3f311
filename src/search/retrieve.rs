//! Retrieval: the candidates of a query vector (the exact scan, the int8
//! and binary scans with exact rescoring, the HNSW graph), the window
//! vectors of long records, the lexical ranking, and their fusion into the
//! hits of a text query, `similar` to a record or a set of them, within the
//! date window and never a dead row.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::options::{Mode, SearchOptions, Strategy};
use super::rank::{combine, rank, top_k, top_k_chunks, Hit};
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

/// In hybrid mode, how deep each ranking goes: a record further down adds
/// under 1/1000 to its fused score.
const HYBRID_SEMANTIC_DEPTH: usize = 1000;

/// The same when the semantic side walks an HNSW graph, whose cost grows
/// with the depth asked: at a million records the walk for 1,000 took
/// about 40 ms, for 200 a few.
const HYBRID_GRAPH_DEPTH: usize = 200;

/// Subtracted from a window's cosine before it stands for its record: a
/// window is a fragment, and unpenalised fragments outrank whole abstracts
/// too often. `cargo bench --bench quality` on the seeds: 0.1 keeps every
/// tail query at rank 1 and costs nothing elsewhere; 0 costs 0.03 MRR on
/// known-item queries.
const WINDOW_PENALTY: f32 = 0.1;

/// Raises each hit's score to its best window's, and adds records whose
/// windows score where the candidates did not reach.
fn apply_windows(index: &Index, hits: &mut Vec<Hit>, query: &[f32], keep: &dyn Fn(usize) -> bool) {
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

/// The rows a search may return: live, not excluded, within the dates.
fn filter<'a>(
    index: &'a Index,
    exclude: &[usize],
    options: &SearchOptions,
) -> Result<impl Fn(usize) -> bool + Sync + 'a> {
    let dated = if options.dates.is_set() {
        Some(super::filters::dated_rows(index, options.dates)?)
    } else {
        None
    };
    let scoped = super::filters::scoped_rows(index, &options.scope)?;
    let exclude: HashSet<usize> = exclude.iter().copied().collect();
    Ok(move |row: usize| {
        !index.dead_rows().contains(&row)
            && !exclude.contains(&row)
            && dated.as_ref().is_none_or(|d| d.contains(&row))
            && scoped.as_ref().is_none_or(|s| s.contains(&row))
    })
}

/// Answers a text query in `options.mode`: `vector` is the query's
/// embedding (needed unless the mode is lexical). A record's semantic
/// score is the best of its vector's and its windows'.
pub fn search_text(
    index: &Index,
    text: &str,
    vector: Option<&[f32]>,
    options: &SearchOptions,
) -> Result<Vec<Hit>> {
    // Quoted phrases and -words filter; the rest is scored (the caller
    // embeds `syntax::parse(text).text`).
    let syntax = super::syntax::parse(text);
    let text = syntax.text.as_str();
    let allowed = super::syntax::allowed(index, &syntax)?;
    let filtered = filter(index, &[], options)?;
    let keep = |row: usize| filtered(row) && allowed.as_ref().is_none_or(|a| a.contains(&row));
    let semantic = match (options.mode, vector) {
        (Mode::Lexical, _) => Vec::new(),
        (_, Some(vector)) => {
            // Hybrid scores more than the final count.
            let depth = match (options.mode, resolve_strategy(index, options.strategy)) {
                (Mode::Hybrid, Strategy::Graph) => options.limit.max(HYBRID_GRAPH_DEPTH),
                (Mode::Hybrid, _) => options.limit.max(HYBRID_SEMANTIC_DEPTH),
                _ => options.limit,
            };
            let mut hits = candidates(index, vector, &keep, depth, options.strategy)?;
            apply_windows(index, &mut hits, vector, &keep);
            sane(index, &hits)?;
            hits
        }
        (mode, None) => return Err(Error::NeedsEmbedding { mode: mode.name() }),
    };
    let (lexical, bound) = match options.mode {
        Mode::Semantic => (Vec::new(), 0.0),
        mode => {
            let segments = index.lexical()?;
            // Only the top of the ranking is used: the final hits in
            // lexical mode, as deep as the semantic side in hybrid.
            let depth = match mode {
                Mode::Hybrid => options.limit.max(HYBRID_SEMANTIC_DEPTH),
                _ => options.limit,
            };
            let hits: Vec<Hit> = segments
                .score_top(text, depth, &keep)?
                .into_iter()
                .map(|(row, score)| Hit::new(row, score))
                .collect();
            (hits, segments.bound(text))
        }
    };
    let cosine = |row: usize| vector.map_or(0.0, |v| dot(&index.vector(row), v));
    let terms = super::relevance::query_terms(text);
    let centre = match (options.mode, vector) {
        (Mode::Hybrid, Some(v)) => dot(&super::relevance::centre(index), v),
        _ => 0.0,
    };
    Ok(combine(
        semantic,
        lexical,
        (bound, terms, centre),
        &cosine,
        options,
    ))
}

/// Loads now what [`search_text`] with `options` will read (the
/// lexical segments, the vectors' pages, the graph), so that a caller
/// can do so while it waits for something else, such as the model.
pub fn prepare(index: &Index, options: &SearchOptions) -> Result<()> {
    if options.mode != Mode::Semantic {
        index.lexical()?;
    }
    if options.mode != Mode::Lexical {
        match strategy_for(index, options) {
            Strategy::Graph => {
                if index.stored_graphs().graphs.is_empty() {
                    index.graph();
                }
            }
            Strategy::Quantized => index.quantized_file().will_need(),
            Strategy::Binary => index.binary_file().will_need(),
            _ => index.vectors_file().will_need(),
        }
    }
    Ok(())
}

/// The records nearest to the record at `row`, never the record itindex.
pub fn similar(index: &Index, row: usize, options: &SearchOptions) -> Result<Vec<Hit>> {
    let query = index.vector(row);
    nearest(index, &query, &[row], options)
}

/// The records nearest to the records at `like` and away from those at
/// `unlike` (the mean of the first set minus half the mean of the
/// second), never any of them.
pub fn similar_to_set(
    index: &Index,
    like: &[usize],
    unlike: &[usize],
    options: &SearchOptions,
) -> Result<Vec<Hit>> {
    let d = index.manifest().dimension;
    let mean = |rows: &[usize]| {
        let mut sum = vec![0f32; d];
        for &row in rows {
            for (s, x) in sum.iter_mut().zip(index.vector(row).iter()) {
                *s += x / rows.len() as f32;
            }
        }
        sum
    };
    let mut query = mean(like);
    if !unlike.is_empty() {
        for (q, x) in query.iter_mut().zip(mean(unlike)) {
            *q -= 0.5 * x;
        }
    }
    let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        query.iter_mut().for_each(|x| *x /= norm);
    }
    let exclude: Vec<usize> = like.iter().chain(unlike).copied().collect();
    nearest(index, &query, &exclude, options)
}

/// The records nearest to a vector, never those in `exclude`, within
/// the date window, ranked.
fn nearest(
    index: &Index,
    query: &[f32],
    exclude: &[usize],
    options: &SearchOptions,
) -> Result<Vec<Hit>> {
    let keep = filter(index, exclude, options)?;
    let hits = candidates(index, query, &keep, options.limit, options.strategy)?;
    let mut hits = rank(hits, options);
    sane(index, &hits)?;
    // Shown on the search's scale: 0 for anything pointing away.
    for hit in &mut hits {
        hit.score = hit.score.max(0.0);
    }
    Ok(hits)
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
fn candidates(
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
