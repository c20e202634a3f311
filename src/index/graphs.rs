//! Stored HNSW graphs: the fast path of a long-lived searcher at scale.
//!
//! From [`GRAPH_FROM`] rows on ([`graph_from`]), each update builds a graph over the rows it
//! appended (O(new)) and stores it beside the vectors as
//! `graph-START-END.hnsw` (rows `START..END`, see [`super::graph`]), then merges the
//! newest graphs like a binary counter (two graphs of similar size become
//! one), so an index holds O(log n) graphs and each row is rebuilt
//! O(log n) times in all. A graph is a cache of committed vectors, written
//! after the commit: a run killed while writing one leaves rows that the
//! search scans exactly instead, and the next update builds it.
//!
//! A reader tiles its rows with the stored graphs (the longest graph from
//! row 0, then from where it ends, within its committed rows) and scans the
//! rest exactly. Loaded graphs are shared by every [`Index`](super::Index)
//! of the process that uses the same file, so a searcher that follows the
//! writer loads only the new ones.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::hnsw::Graph;
use crate::error::Result;

/// Indexes with this many rows or more get stored graphs.
pub const GRAPH_FROM: usize = 50_000;

/// The most rows one stored graph covers. hnsw_rs holds about 5.9 KB a row
/// while it builds (a copy of the vector and its neighbour lists), so one
/// graph over a million rows peaked at 5.9 GB; graphs of at most 131,072
/// rows keep a build under 1 GB, and a search walks each of them.
pub const GRAPH_MAX: usize = 131_072;

/// [`GRAPH_FROM`], unless the environment's `PAPERS_GRAPH_FROM` sets
/// another row count (for tests and benchmarks).
pub fn graph_from() -> usize {
    std::env::var("PAPERS_GRAPH_FROM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GRAPH_FROM)
}

/// [`GRAPH_MAX`], unless the environment's `PAPERS_GRAPH_MAX` sets another
/// row count (for tests and benchmarks).
pub fn graph_max() -> usize {
    std::env::var("PAPERS_GRAPH_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(GRAPH_MAX)
}

/// A stored graph's place: rows `start..end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    /// First row.
    pub start: usize,
    /// One past the last row.
    pub end: usize,
}

impl Tile {
    /// The file's name.
    pub fn file_name(&self) -> String {
        format!("graph-{:010}-{:010}.hnsw", self.start, self.end)
    }

    fn parse(file: &str) -> Option<Tile> {
        let rest = file.strip_prefix("graph-")?.strip_suffix(".hnsw")?;
        let (start, end) = rest.split_once('-')?;
        let (start, end) = (start.parse().ok()?, end.parse().ok()?);
        (start < end).then_some(Tile { start, end })
    }
}

/// Every stored graph in `data`.
fn stored(data: &Path) -> Vec<Tile> {
    let Ok(entries) = std::fs::read_dir(data) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| Tile::parse(&e.file_name().to_string_lossy()))
        .collect()
}

/// The stored graphs that tile rows `0..` as far as they reach within
/// `rows`: from each start, the longest.
pub fn tiling(data: &Path, rows: usize) -> Vec<Tile> {
    let all = stored(data);
    let mut tiles = Vec::new();
    let mut covered = 0;
    while let Some(next) = all
        .iter()
        .filter(|t| t.start == covered && t.end <= rows)
        .max_by_key(|t| t.end)
    {
        covered = next.end;
        tiles.push(next.clone());
    }
    tiles
}

/// The graph of `tile` in `data`, loaded once per process while in use;
/// `None` when it cannot be read (those rows are scanned instead).
pub fn load(data: &Path, tile: &Tile) -> Option<Arc<Graph>> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Weak<Graph>>>> = OnceLock::new();
    let key = data.join(tile.file_name());
    let cache = LOADED.get_or_init(Default::default);
    if let Some(graph) = lock(cache).get(&key).and_then(Weak::upgrade) {
        return Some(graph);
    }
    let graph = Graph::open(&key, tile.start)?;
    if graph.len() != tile.end - tile.start {
        return None;
    }
    let graph = Arc::new(graph);
    let mut cache = lock(cache);
    cache.retain(|_, g| g.strong_count() > 0);
    cache.insert(key, Arc::downgrade(&graph));
    Some(graph)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`extend`] over the committed vectors of the data folder `data`; a
/// failure is left for the next update (searches scan those rows).
pub fn extend_committed(data: &Path, dimension: usize, rows: usize) {
    let Ok(file) =
        super::rows::RowFile::open(&data.join(super::rows::VECTORS), 4 * dimension, rows)
    else {
        return;
    };
    // A graph's rows are read a chunk at a time into memory of their own,
    // dropped once inserted (hnsw_rs copies them): borrowed from the
    // mapping, every row read stayed resident, and a million rows added
    // 1.5 GB to the build's peak.
    let vectors = |range: std::ops::Range<usize>| Cow::Owned(file.read_f32_rows(range));
    let _ = extend(data, dimension, rows, &vectors);
}

/// The graphs a new data folder of `rows` rows gets, built from rows that
/// arrive in order on `incoming` (a batch of row-major vectors at a time)
/// while they are still being made, for [`store`] once the rows are
/// committed. Empty under [`graph_from`]; `None` if `incoming` closes
/// before every row came.
pub fn build_arriving(
    rows: usize,
    dimension: usize,
    incoming: &std::sync::mpsc::Receiver<Vec<f32>>,
) -> Option<Vec<(Tile, Graph)>> {
    if rows < graph_from() || dimension == 0 {
        return Some(Vec::new());
    }
    // Rows `first..` that came and are not yet inserted.
    let buffer = std::cell::RefCell::new((0usize, Vec::<f32>::new()));
    let fetch = |range: std::ops::Range<usize>| -> Option<Cow<'static, [f32]>> {
        let mut buffer = buffer.borrow_mut();
        while buffer.0 + buffer.1.len() / dimension < range.end {
            let more = incoming.recv().ok()?;
            buffer.1.extend_from_slice(&more);
        }
        let (from, to) = (
            (range.start - buffer.0) * dimension,
            (range.end - buffer.0) * dimension,
        );
        let rows = buffer.1[from..to].to_vec();
        buffer.1.drain(..to);
        buffer.0 = range.end;
        Some(Cow::Owned(rows))
    };
    plan(Vec::new(), rows, graph_max())
        .into_iter()
        .map(|tile| {
            let graph = Graph::build_rows(tile.start..tile.end, dimension, &fetch)?;
            Some((tile, graph))
        })
        .collect()
}

/// The tiling after an update to `rows` rows, from the stored `tiles`: the
/// rows no graph covers in graphs of at most `max` rows, then, like a binary
/// counter, a graph no more than twice the size of the one after it merged
/// with it while the two fit in `max`. Only the final tiles are built.
fn plan(mut tiles: Vec<Tile>, rows: usize, max: usize) -> Vec<Tile> {
    let mut covered = tiles.last().map_or(0, |t| t.end);
    while covered < rows {
        let end = rows.min(covered + max);
        tiles.push(Tile {
            start: covered,
            end,
        });
        covered = end;
        while let [.., a, b] = tiles.as_slice() {
            let (a_len, b_len) = (a.end - a.start, b.end - b.start);
            if a_len > 2 * b_len || a_len + b_len > max {
                break;
            }
            let merged = Tile {
                start: a.start,
                end: b.end,
            };
            tiles.truncate(tiles.len() - 2);
            tiles.push(merged);
        }
    }
    tiles
}

/// After a commit of `rows` rows: builds the graphs of `plan` that are not
/// stored yet and removes the graphs the tiling no longer uses.
/// `vectors(range)` gives the f32 rows.
pub fn extend<'a>(
    data: &Path,
    dimension: usize,
    rows: usize,
    vectors: &dyn Fn(std::ops::Range<usize>) -> Cow<'a, [f32]>,
) -> Result<()> {
    if rows < graph_from() {
        return Ok(());
    }
    let stored = tiling(data, rows);
    let tiles = plan(stored.clone(), rows, graph_max());
    for tile in tiles.iter().filter(|t| !stored.contains(t)) {
        write(data, tile, dimension, vectors)?;
    }
    // Graphs outside the tiling: merged away, or left by a killed run, or
    // hnsw_rs's own files (`.hnsw.graph`, `.hnsw.data`) that builds before
    // the flat form stored. A reader that mapped one keeps its mapping; one
    // that had not yet scans those rows.
    // A scratch folder left by a killed run goes too (the writer lock
    // says no other run is writing one).
    let keep: Vec<String> = tiles.iter().map(Tile::file_name).collect();
    for entry in std::fs::read_dir(data).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with("graph-tmp-") && path.is_dir() {
            let _ = std::fs::remove_dir_all(&path);
        } else if name.starts_with("graph-") && !keep.contains(&name) && path.is_file() {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

/// Builds and stores the graph of `tile`.
fn write<'a>(
    data: &Path,
    tile: &Tile,
    dimension: usize,
    vectors: &dyn Fn(std::ops::Range<usize>) -> Cow<'a, [f32]>,
) -> Result<()> {
    let graph = Graph::build_rows(tile.start..tile.end, dimension, &|r| Some(vectors(r)))
        .expect("committed rows are at hand");
    store(data, tile, &graph)
}

/// Stores the graph of `tile`: written in a folder of its own, synced,
/// then moved in.
pub fn store(data: &Path, tile: &Tile, graph: &Graph) -> Result<()> {
    let scratch = data.join(format!("graph-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).map_err(|e| crate::Error::io(&scratch, e))?;
    let file = tile.file_name();
    let moved = graph.save(&scratch.join(&file)).and_then(|()| {
        super::files::sync_file(&scratch.join(&file))?;
        std::fs::rename(scratch.join(&file), data.join(&file))
            .map_err(|e| crate::Error::io(data.join(&file), e))?;
        super::files::sync_dir(data)
    });
    let _ = std::fs::remove_dir_all(&scratch);
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(tiles: &[Tile]) -> Vec<(usize, usize)> {
        tiles.iter().map(|t| (t.start, t.end)).collect()
    }

    #[test]
    fn plans_count_in_binary_up_to_the_largest_graph() {
        let t = |start, end| Tile { start, end };
        // Uncapped, as before the cap: similar sizes merge.
        assert_eq!(spans(&plan(vec![], 300, 1000)), [(0, 300)]);
        assert_eq!(
            spans(&plan(vec![t(0, 300)], 400, 1000)),
            [(0, 300), (300, 400)]
        );
        assert_eq!(
            spans(&plan(vec![t(0, 300), t(300, 400)], 500, 1000)),
            [(0, 500)]
        );
        // A first commit past the cap is cut into full graphs and a rest.
        assert_eq!(
            spans(&plan(vec![], 1050, 250)),
            [(0, 250), (250, 500), (500, 750), (750, 1000), (1000, 1050)]
        );
        // Merges stop where the merged graph would pass the cap.
        assert_eq!(
            spans(&plan(vec![t(0, 250), t(250, 350)], 500, 250)),
            [(0, 250), (250, 500)]
        );
        assert_eq!(
            spans(&plan(vec![t(0, 250), t(250, 350)], 450, 250)),
            [(0, 250), (250, 450)]
        );
        // A graph stored before the cap stays; rows after it tile anew.
        assert_eq!(
            spans(&plan(vec![t(0, 1000)], 1300, 250)),
            [(0, 1000), (1000, 1250), (1250, 1300)]
        );
        // Nothing new: the tiling as stored.
        assert_eq!(spans(&plan(vec![t(0, 250)], 250, 250)), [(0, 250)]);
    }

    #[test]
    fn tiles_take_the_longest_graph_from_each_start() {
        let dir = tempfile::tempdir().unwrap();
        for (a, b) in [(0, 100), (0, 300), (300, 350), (350, 400), (300, 500)] {
            let t = Tile { start: a, end: b };
            std::fs::write(dir.path().join(t.file_name()), "").unwrap();
        }
        let ends =
            |rows| -> Vec<usize> { tiling(dir.path(), rows).iter().map(|t| t.end).collect() };
        assert_eq!(ends(1000), [300, 500]);
        assert_eq!(
            ends(450),
            [300, 350, 400],
            "a reader's rows bound the tiles"
        );
        assert_eq!(ends(50), Vec::<usize>::new());
        assert_eq!(
            Tile::parse("graph-0000000300-0000000350.hnsw").unwrap().end,
            350
        );
        assert_eq!(Tile::parse("graph-5-5.hnsw"), None);
        assert_eq!(
            Tile::parse("graph-0-9.hnsw.graph"),
            None,
            "hnsw_rs's files are not ours"
        );
    }
}
