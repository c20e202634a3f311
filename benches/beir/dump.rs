//! `cargo bench --bench beir -- dump DIR`: writes every query set's
//! candidate pools as TSV for exploring the score (one line a candidate:
//! set, query, terms, row, cosine, share, semantic rank, lexical rank,
//! relevant, relevant records of the query, the query's cosine with the
//! collection's centre).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use papers::embed::Embedder;
use papers::index::Index;

use super::calibrate::{pools, Candidate};
use super::BoxResult;

pub type Set = Vec<(String, HashSet<usize>)>;

pub fn write(
    out: &Path,
    name: &str,
    index: &Index,
    model: &dyn Embedder,
    set: &Set,
) -> BoxResult<()> {
    let claims: Vec<(&str, HashSet<usize>)> =
        set.iter().map(|(q, r)| (q.as_str(), r.clone())).collect();
    let pools = pools(index, model, &claims)?;
    // Each query's cosine with the collection's centre, as hybrid mode's
    // no-match rule reads it (the last column).
    let centre = index.centre();
    let texts: Vec<&str> = claims.iter().map(|(t, _)| *t).collect();
    let vectors = model.embed(&texts, &mut |_| std::ops::ControlFlow::Continue(()))?;
    let near: Vec<f32> = vectors
        .iter()
        .map(|v| papers::vector::dot(v, centre))
        .collect();
    let mut file = std::io::BufWriter::new(std::fs::File::create(out.join(format!("{name}.tsv")))?);
    for (q, pool) in pools.iter().enumerate() {
        for c in pool {
            let Candidate {
                row,
                cosine,
                share,
                semantic,
                lexical,
                terms,
                relevant,
            } = *c;
            writeln!(
                file,
                "{name}\t{q}\t{terms}\t{row}\t{cosine}\t{share}\t{}\t{}\t{}\t{}\t{}",
                semantic.unwrap_or(0),
                lexical.unwrap_or(0),
                relevant as u8,
                set[q].1.len(),
                near[q],
            )?;
        }
    }
    eprintln!("{name}: {} queries", set.len());
    Ok(())
}

/// Random letter strings of one to three words.
pub fn nonsense(n: usize, mut seed: u64) -> Set {
    let mut letters = |n: usize| -> String {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (b'a' + (seed % 26) as u8) as char
            })
            .collect()
    };
    (0..n)
        .map(|i| {
            let text = (0..1 + i % 3)
                .map(|_| letters(5 + i % 6))
                .collect::<Vec<_>>()
                .join(" ");
            (text, HashSet::new())
        })
        .collect()
}

/// Known-item queries over an arXiv index: each sampled paper's title, and
/// its first four title words that are not stop words (a typed query).
pub fn arxiv(index: &Index, every: usize) -> BoxResult<(Set, Set)> {
    let mut titles = Vec::new();
    let mut typed = Vec::new();
    for (row, paper) in index.papers()?.into_iter() {
        if row % every != 0 {
            continue;
        }
        let Some(meta) = paper.meta else { continue };
        if meta.title.is_empty() {
            continue;
        }
        let one: HashSet<usize> = [row].into();
        titles.push((meta.title.clone(), one.clone()));
        let words: Vec<&str> = meta
            .title
            .split(|c: char| !c.is_alphanumeric() && c != '-')
            .filter(|w| w.len() > 3)
            .take(4)
            .collect();
        if words.len() >= 2 {
            typed.push((words.join(" "), one));
        }
    }
    Ok((titles, typed))
}
