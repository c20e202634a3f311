//! The seeds and their labelled queries (`eval/queries.jsonl`), for the
//! calibration: an index of `../shared/seeds` (or `PAPERS_SEEDS`) built
//! through `write::index` into `target/bench-beir/seeds-index` and kept
//! between runs, and each query with the rows of its relevant abstracts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use papers::embed::{DeviceChoice, ModelChoice};
use papers::index::Index;
use papers::write::{self, IndexRequest, Quiet};

use super::BoxResult;

/// Queries with the rows of their relevant abstracts.
pub type Labelled = Vec<(String, HashSet<usize>)>;

pub fn labelled(root: &Path) -> BoxResult<(Index, Labelled)> {
    let seeds = std::env::var_os("PAPERS_SEEDS")
        .map_or_else(|| root.join("../shared/seeds"), PathBuf::from);
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("bench-beir/seeds-index");
    let request = IndexRequest {
        paths: vec![seeds],
        model: ModelChoice {
            device: DeviceChoice::Cpu,
            ..Default::default()
        },
        ..Default::default()
    };
    write::index(&dir, &request, &Quiet)?;
    let index = Index::open(&dir)?;
    let text = std::fs::read_to_string(root.join("eval/queries.jsonl"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line)?;
        let query = value["query"].as_str().unwrap_or_default().to_string();
        let relevant = value["relevant"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str())
            .map(|prefix| index.resolve(&papers::id::Wanted::parse(prefix)))
            .collect::<papers::Result<HashSet<usize>>>()?;
        out.push((query, relevant));
    }
    Ok((index, out))
}
