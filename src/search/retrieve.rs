//! Retrieval: the hits of a text query (the semantic candidates of
//! [`super::candidates`], the lexical ranking, and their fusion), and those
//! `similar` to a record or a set of them; within the filters
//! ([`super::filters`]) and never a dead row.

use std::collections::HashMap;

use super::candidates::{apply_windows, candidates, resolve_strategy, sane, strategy_for};
use super::filters;
use super::options::{Mode, SearchOptions, Strategy};
use super::rank::{combine, rank, Decision, Hit, Measures, Ranking};
use super::syntax::Parsed;
use super::verdict::Verdict;
use crate::error::{Error, Result};
use crate::index::Index;
use crate::vector::dot;

/// In hybrid mode, how deep each ranking goes: a record further down adds
/// under 1/1000 to its fused score.
const HYBRID_SEMANTIC_DEPTH: usize = 1000;

/// The same when the semantic side walks an HNSW graph, whose cost grows
/// with the depth asked: at a million records the walk for 1,000 took
/// about 40 ms, for 200 a few.
const HYBRID_GRAPH_DEPTH: usize = 200;

/// Answers a text query in `options.mode`: `vector` is the query's
/// embedding (needed unless the mode is lexical). A record's semantic
/// score is the best of its vector's and its windows'. In lexical mode a
/// `vector`, when given, only decides the query's verdict (as hybrid
/// mode's rule does); the ranking stays by words.
pub fn search_text(
    index: &Index,
    text: &str,
    vector: Option<&[f32]>,
    options: &SearchOptions,
) -> Result<Vec<Hit>> {
    Ok(search_parsed(index, &Parsed::new(text), vector, options)?.hits)
}

/// [`search_text`] of a query parsed and analysed already, with its
/// verdict: quoted phrases and -words filter; the rest is scored (the
/// caller embeds `query.syntax.text`).
pub fn search_parsed(
    index: &Index,
    query: &Parsed,
    vector: Option<&[f32]>,
    options: &SearchOptions,
) -> Result<Ranking> {
    // Words alone cannot tell a query of another field that shares common
    // words with the collection: with the query's meaning at hand, lexical
    // mode gathers hybrid's lists and asks hybrid's rule for the verdict,
    // then ranks its own list.
    let by_hybrid = options.mode == Mode::Lexical && vector.is_some();
    let gather = if by_hybrid {
        Mode::Hybrid
    } else {
        options.mode
    };
    let allowed = super::syntax::allowed(index, &query.syntax)?;
    let filtered = filters::allowed(index, &[], options)?;
    let keep = |row: usize| filtered(row) && allowed.as_ref().is_none_or(|a| a.contains(&row));
    let semantic = match (gather, vector) {
        (Mode::Lexical, _) => Vec::new(),
        (_, Some(vector)) => {
            // Hybrid scores more than the final count.
            let depth = match (gather, resolve_strategy(index, options.strategy)) {
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
    // The BM25 scores of semantic candidates the lexical top did not
    // reach, so each hybrid hit is scored by its own words.
    let mut words: HashMap<usize, f32> = HashMap::new();
    let (lexical, bound) = match gather {
        Mode::Semantic => (Vec::new(), 0.0),
        mode => {
            let segments = index.lexical()?;
            // Only the top of the ranking is used: the final hits in
            // lexical mode, as deep as the semantic side in hybrid.
            let depth = match mode {
                Mode::Hybrid => options.limit.max(HYBRID_SEMANTIC_DEPTH),
                _ => options.limit,
            };
            let rows: Vec<usize> = semantic.iter().map(|h| h.row).collect();
            let (top, scores) = segments.score_top_and(&query.terms, depth, &keep, &rows)?;
            words.extend(rows.into_iter().zip(scores));
            let hits: Vec<Hit> = top
                .into_iter()
                .map(|(row, score)| Hit::new(row, score))
                .collect();
            (hits, segments.bound(&query.terms))
        }
    };
    let cosine = |row: usize| vector.map_or(0.0, |v| dot(&index.vector(row), v));
    let bm25 = |row: usize| words.get(&row).copied().unwrap_or(0.0);
    let measures = Measures {
        bound,
        terms: query.terms.len(),
        centre: match (gather, vector) {
            (Mode::Hybrid, Some(v)) => dot(index.centre(), v),
            _ => 0.0,
        },
        cosine: &cosine,
        bm25: &bm25,
    };
    if !by_hybrid {
        return Ok(combine(
            semantic,
            lexical,
            &measures,
            options,
            Decision::ByRule,
        ));
    }
    let hybrid = SearchOptions {
        mode: Mode::Hybrid,
        strict: false,
        min_score: None,
        ..options.clone()
    };
    // The lexical list is best first: its top `limit` is lexical mode's.
    let own = lexical[..lexical.len().min(options.limit)].to_vec();
    let decided = match combine(semantic, lexical, &measures, &hybrid, Decision::ByRule).verdict {
        Verdict::None => Decision::Given(Verdict::None),
        _ => Decision::Matched,
    };
    Ok(combine(Vec::new(), own, &measures, options, decided))
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
    let keep = filters::allowed(index, exclude, options)?;
    let hits = candidates(index, query, &keep, options.limit, options.strategy)?;
    let mut hits = rank(hits, options);
    sane(index, &hits)?;
    // Shown on the search's scale: 0 for anything pointing away.
    for hit in &mut hits {
        hit.score = hit.score.max(0.0);
    }
    Ok(hits)
}
