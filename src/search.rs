//! Ranking: hits, the exact scan over stored vectors, and the order every
//! result list is given in (score descending, then id ascending, so ties are
//! broken the same way on every run).

/// Which way a query is answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// The graph for large indexes, the exact scan for small ones.
    #[default]
    Auto,
    /// Score every stored vector.
    Exact,
    /// Walk the HNSW graph, then rescore its candidates exactly.
    Graph,
}

impl Strategy {
    /// The name used in `info` and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Auto => "auto",
            Strategy::Exact => "exact",
            Strategy::Graph => "graph",
        }
    }
}

/// What to return.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchOptions {
    /// At most this many hits.
    pub limit: usize,
    /// Drop hits scoring below this cosine similarity.
    pub min_score: Option<f32>,
    /// How to find candidates.
    pub strategy: Strategy,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            min_score: None,
            strategy: Strategy::Auto,
        }
    }
}

/// One result: a record's position in the index and its cosine similarity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Position of the record (records are stored in id order).
    pub row: usize,
    /// Cosine similarity to the query.
    pub score: f32,
}

/// Dot product; vectors are unit length, so this is the cosine.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scores every row of `vectors` against `query`, skipping `exclude`.
pub fn exact_scan(
    vectors: &[f32],
    dimension: usize,
    query: &[f32],
    exclude: Option<usize>,
) -> Vec<Hit> {
    vectors
        .chunks_exact(dimension)
        .enumerate()
        .filter(|(row, _)| Some(*row) != exclude)
        .map(|(row, v)| Hit {
            row,
            score: dot(v, query),
        })
        .collect()
}

/// Orders hits best first (ties by row, which is id order), applies the
/// score floor and keeps at most `limit`.
pub fn rank(mut hits: Vec<Hit>, options: &SearchOptions) -> Vec<Hit> {
    if let Some(floor) = options.min_score {
        hits.retain(|h| h.score >= floor);
    }
    let order = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row));
    if hits.len() > options.limit && options.limit > 0 {
        hits.select_nth_unstable_by(options.limit - 1, order);
        hits.truncate(options.limit);
    }
    hits.sort_by(order);
    hits.truncate(options.limit);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_orders_by_score_then_row_and_applies_floor() {
        let hits = vec![
            Hit { row: 3, score: 0.5 },
            Hit { row: 1, score: 0.9 },
            Hit { row: 0, score: 0.5 },
            Hit { row: 2, score: 0.1 },
        ];
        let options = SearchOptions {
            limit: 3,
            min_score: Some(0.2),
            ..Default::default()
        };
        let rows: Vec<usize> = rank(hits, &options).iter().map(|h| h.row).collect();
        assert_eq!(rows, [1, 0, 3]);
    }

    #[test]
    fn exact_scan_skips_the_excluded_row() {
        let vectors = [1.0, 0.0, 0.0, 1.0];
        let hits = exact_scan(&vectors, 2, &[1.0, 0.0], Some(0));
        assert_eq!(hits, vec![Hit { row: 1, score: 0.0 }]);
    }
}
