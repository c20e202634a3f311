//! A navigable small-world graph in one flat file, read through a mapping.
//!
//! [`super::hnsw`] builds the graph with hnsw_rs; this module keeps only what
//! a search walks: each node's neighbours per layer, as row numbers. The
//! file is a run of little-endian `u32` words:
//!
//! ```text
//! MAGIC VERSION rows top entry m0 m   count(1) .. count(top)
//! layer 0:  rows x m0 neighbours       (u32::MAX pads a short list)
//! layer l:  count(l) node ids, sorted; count(l) x m neighbours
//! ```
//!
//! Nothing is parsed at load: opening a graph of a million rows maps its
//! file (about 128 bytes a row) and checks the header against the length, so a
//! server starts in milliseconds and the pages it walks are the kernel's
//! to keep or drop. A damaged file is refused at load when its length is wrong,
//! and a neighbour out of range is skipped, so damage costs recall, never a
//! panic. The vectors are not in the file: a search asks its caller for the
//! score of each row it visits.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;

use memmap2::Mmap;

use crate::error::{Error, Result};

/// The file's first word, "PGR1" read as little-endian.
const MAGIC: u32 = u32::from_le_bytes(*b"PGR1");
/// The layout version.
const VERSION: u32 = 1;
/// Words before the layer counts.
const HEAD: usize = 7;
/// An empty neighbour slot.
const NONE: u32 = u32::MAX;

/// The words: built in memory, or mapped from a stored file.
enum Words {
    Owned(Vec<u32>),
    Mapped(Mmap),
}

/// Where an upper layer's ids and neighbour slots start, in words.
#[derive(Clone, Copy)]
struct Layer {
    ids: usize,
    count: usize,
    slots: usize,
}

/// An HNSW graph whose nodes are rows `first_row..first_row + rows`.
pub struct Graph {
    words: Words,
    first_row: usize,
    rows: usize,
    entry: u32,
    m0: usize,
    m: usize,
    layers: Vec<Layer>,
}

/// A row and its score, ordered by score (then row, for a stable order).
#[derive(Clone, Copy, PartialEq)]
struct Scored(f32, u32);

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl Graph {
    /// A graph from its layers: `layer0[node]` are the node's neighbours at
    /// layer 0 and `upper[l - 1]` the (node, neighbours) of layer `l`.
    pub fn from_layers(
        first_row: usize,
        layer0: &[Vec<u32>],
        upper: &[Vec<(u32, Vec<u32>)>],
        entry: u32,
    ) -> Graph {
        let width = |lists: &mut dyn Iterator<Item = usize>| lists.max().unwrap_or(0).max(1);
        let m0 = width(&mut layer0.iter().map(Vec::len));
        let m = width(&mut upper.iter().flatten().map(|(_, n)| n.len()));
        let mut words = vec![
            MAGIC,
            VERSION,
            layer0.len() as u32,
            upper.len() as u32,
            entry,
            m0 as u32,
            m as u32,
        ];
        words.extend(upper.iter().map(|layer| layer.len() as u32));
        let padded = |out: &mut Vec<u32>, list: &[u32], width: usize| {
            out.extend_from_slice(list);
            out.extend(std::iter::repeat_n(NONE, width - list.len()));
        };
        for list in layer0 {
            padded(&mut words, list, m0);
        }
        for layer in upper {
            let mut layer = layer.iter().collect::<Vec<_>>();
            layer.sort_by_key(|(node, _)| *node);
            words.extend(layer.iter().map(|(node, _)| *node));
            for (_, list) in layer {
                padded(&mut words, list, m);
            }
        }
        Graph::parse(Words::Owned(words), first_row).expect("a graph built here is well formed")
    }

    /// Maps the graph stored at `path` for rows `first_row..`; `None` if
    /// it is missing or its header does not match its length.
    pub fn open(path: &Path, first_row: usize) -> Option<Graph> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: a stored graph is written whole in a scratch folder and
        // renamed in; no one writes it again, and a newer one gets a new name.
        let map = unsafe { Mmap::map(&file) }.ok()?;
        Graph::parse(Words::Mapped(map), first_row)
    }

    fn parse(words: Words, first_row: usize) -> Option<Graph> {
        let w = words.as_slice()?;
        if w.len() < HEAD || w[0] != MAGIC || w[1] != VERSION {
            return None;
        }
        let (rows, top, entry) = (w[2] as usize, w[3] as usize, w[4]);
        let (m0, m) = (w[5] as usize, w[6] as usize);
        if top > 64 || m0 > 4096 || m > 4096 || (rows > 0 && entry as usize >= rows) {
            return None;
        }
        let mut at = HEAD.checked_add(top)?.checked_add(rows.checked_mul(m0)?)?;
        let mut layers = Vec::with_capacity(top);
        for l in 0..top {
            let count = *w.get(HEAD + l)? as usize;
            let slots = at.checked_add(count)?;
            layers.push(Layer {
                ids: at,
                count,
                slots,
            });
            at = slots.checked_add(count.checked_mul(m)?)?;
        }
        (at == w.len()).then_some(Graph {
            words,
            first_row,
            rows,
            entry,
            m0,
            m,
            layers,
        })
    }

    /// Writes the graph to `path` (the caller syncs and renames it).
    pub fn save(&self, path: &Path) -> Result<()> {
        let words = self.words.as_slice().unwrap_or_default();
        std::fs::write(path, bytemuck::cast_slice::<u32, u8>(words)).map_err(|e| Error::io(path, e))
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The neighbours of `node` at `layer` (none if it is not in that layer).
    fn neighbours(&self, layer: usize, node: u32) -> &[u32] {
        let w = self.words.as_slice().unwrap_or_default();
        let list = if layer == 0 {
            let start = HEAD + self.layers.len() + node as usize * self.m0;
            &w[start..start + self.m0]
        } else {
            let l = self.layers[layer - 1];
            match w[l.ids..l.ids + l.count].binary_search(&node) {
                Ok(i) => &w[l.slots + i * self.m..][..self.m],
                Err(_) => &[],
            }
        };
        let end = list.iter().position(|&n| n == NONE).unwrap_or(list.len());
        &list[..end]
    }

    /// The `k` rows of highest `score(row)` that a search with a candidate
    /// list of `ef` finds, best first. `score` is a similarity (the dot
    /// product of unit vectors): higher is nearer.
    pub fn search(&self, k: usize, ef: usize, score: impl Fn(usize) -> f32) -> Vec<(usize, f32)> {
        if self.rows == 0 || k == 0 {
            return Vec::new();
        }
        let score_of = |node: u32| score(self.first_row + node as usize);
        let valid = |node: u32| (node as usize) < self.rows;
        // Greedy descent through the upper layers.
        let mut best = Scored(score_of(self.entry), self.entry);
        for layer in (1..=self.layers.len()).rev() {
            loop {
                let mut moved = false;
                for &n in self.neighbours(layer, best.1) {
                    if valid(n) {
                        let s = Scored(score_of(n), n);
                        if s > best {
                            best = s;
                            moved = true;
                        }
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        // Beam search at layer 0.
        let ef = ef.max(k);
        let mut visited: HashSet<u32, foldhash::fast::FixedState> = HashSet::default();
        visited.insert(best.1);
        let mut candidates = BinaryHeap::from([best]);
        let mut found = BinaryHeap::from([Reverse(best)]);
        while let Some(next) = candidates.pop() {
            let worst = found.peek().map_or(next, |r| r.0);
            if found.len() >= ef && next < worst {
                break;
            }
            for &n in self.neighbours(0, next.1) {
                if !valid(n) || !visited.insert(n) {
                    continue;
                }
                let s = Scored(score_of(n), n);
                if found.len() < ef || s > found.peek().map_or(s, |r| r.0) {
                    candidates.push(s);
                    found.push(Reverse(s));
                    if found.len() > ef {
                        found.pop();
                    }
                }
            }
        }
        let mut found: Vec<Scored> = found.into_iter().map(|r| r.0).collect();
        found.sort_by(|a, b| b.cmp(a));
        found
            .into_iter()
            .take(k)
            .map(|s| (self.first_row + s.1 as usize, s.0))
            .collect()
    }
}

impl Words {
    /// The words; `None` if a mapped file's length is not whole words.
    fn as_slice(&self) -> Option<&[u32]> {
        match self {
            Words::Owned(words) => Some(words),
            Words::Mapped(map) if cfg!(target_endian = "little") => {
                bytemuck::try_cast_slice(&map[..]).ok()
            }
            Words::Mapped(_) => None,
        }
    }
}
