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

/// The queries of `set` with typos: in a third of the words of 5+ letters
/// (every third such word, from a seeded start), one letter swapped with
/// the next, dropped or doubled, in turn.
pub fn typos(set: &Set, mut seed: u64) -> Set {
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    set.iter()
        .map(|(query, relevant)| {
            let mut long = 0usize;
            let start = (next() % 3) as usize;
            let words: Vec<String> = query
                .split(' ')
                .map(|word| {
                    let letters: Vec<char> = word.chars().collect();
                    if letters.len() < 5 || !letters.iter().all(|c| c.is_alphabetic()) {
                        return word.to_string();
                    }
                    long += 1;
                    if (long - 1) % 3 != start % 3 {
                        return word.to_string();
                    }
                    let mut w = letters.clone();
                    // Never the first letter: people rarely get that wrong.
                    let at = 1 + (next() as usize) % (w.len() - 2);
                    match next() % 3 {
                        0 => w.swap(at, at + 1),
                        1 => {
                            w.remove(at);
                        }
                        _ => w.insert(at, w[at]),
                    }
                    w.into_iter().collect()
                })
                .collect();
            (words.join(" "), relevant.clone())
        })
        .collect()
}

/// `set` as search corrects it against `index`'s terms, and how many of
/// its queries the correction changed.
pub fn spelled(set: &Set, index: &Index, model: &dyn Embedder) -> BoxResult<(Set, usize)> {
    let words = papers::search::spelling::Terms::of(index, Some(model))?;
    let mut changed = 0;
    let out = set
        .iter()
        .map(|(query, relevant)| {
            let spelled = papers::search::spelling::correct(query, &words);
            changed += usize::from(!spelled.changes.is_empty());
            (spelled.text, relevant.clone())
        })
        .collect();
    Ok((out, changed))
}

/// Words of `titles` (5+ letters, letters only) that `index` does not
/// know, and how many of them spelling correction would change, as typed
/// and lower-cased: what it does to a new term.
pub fn new_terms(titles: &Set, index: &Index, model: &dyn Embedder) -> BoxResult<String> {
    let lexical = index.lexical()?;
    let mut words: Vec<String> = titles
        .iter()
        .flat_map(|(t, _)| t.split(|c: char| !c.is_alphanumeric()).map(str::to_string))
        .filter(|w| w.len() >= 5 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .filter(|w| {
            papers::analysis::Analysis::CURRENT
                .term(w)
                .is_some_and(|t| lexical.documents(&t) == 0)
        })
        .collect();
    words.sort();
    words.dedup();
    let words_of = papers::search::spelling::Terms::of(index, Some(model))?;
    let changed = |w: &str| {
        !papers::search::spelling::correct(w, &words_of)
            .changes
            .is_empty()
    };
    let named: Vec<&String> = words
        .iter()
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect();
    let typed = words.iter().filter(|w| changed(w)).count();
    let lower = words.iter().filter(|w| changed(&w.to_lowercase())).count();
    let named_typed = named.iter().filter(|w| changed(w)).count();
    let named_lower = named.iter().filter(|w| changed(&w.to_lowercase())).count();
    let examples: Vec<String> = words
        .iter()
        .filter_map(|w| {
            let s = papers::search::spelling::correct(&w.to_lowercase(), &words_of);
            s.changes.first().map(|(a, b)| format!("{a}->{b}"))
        })
        .take(15)
        .collect();
    Ok(format!(
        "{} unknown title words of 5+ letters: {typed} changed as typed, {lower} lower-cased; \
         {} of them capitalised: {named_typed} changed as typed, {named_lower} lower-cased; e.g. {}\n",
        words.len(),
        named.len(),
        examples.join(", ")
    ))
}
