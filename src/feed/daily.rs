//! `papers feed`: the new papers ([`select`]) ranked by each tag's
//! profile ([`super::ranker::CHOSEN`]), each hit with why: the tag, the liked
//! paper it is closest to, and the sentence of its abstract that shares
//! most with that paper.
//!
//! A paper's score is the probability that the reader wants it, by its
//! best tag ([`super::calibration`]: each tag's own examples calibrate it),
//! so it does not depend on what else arrived, and tags compare. A tag none
//! of whose new papers scores as high as most of its liked papers did
//! ([`super::calibration::Calibration::quiet`]) has "nothing today": its
//! papers are still listed, each with the verdict `none`.

use std::collections::{HashMap, HashSet};

use super::answer::{Because, Feed, FeedHit, FeedRequest};
use super::authors;
use super::batch::Batch;
use super::calibration::{verdict, CLOSE};
use super::profile::{papers_at, profiles};
use super::ranker::{standardise, CHOSEN};
use super::select::{kept, select, terms_of, Scope};
use super::tags::{gather, Gathered};
use super::words;
use crate::analysis::Analysis;
use crate::error::{Error, Result};
use crate::evidence;
use crate::hit::{Found, Hit};
use crate::index::Index;
use crate::paper::Paper;
use crate::verdict::Verdict;

/// Ranks the new papers of `index` for `request`.
pub fn feed(index: &Index, request: &FeedRequest) -> Result<Feed> {
    let Some(Gathered {
        wanted,
        ids,
        tagged,
        skipped,
    }) = gather(index, &request.tags)?
    else {
        return super::unranked::feed(index, request);
    };
    let selection = select(index, &request.scope)?;
    let analysis = Analysis::CURRENT;
    let must: Vec<HashSet<String>> = terms_of(&request.must, analysis);
    let exclude: Vec<HashSet<String>> = terms_of(&request.exclude, analysis);
    let candidates = kept(
        index,
        &selection.rows,
        &tagged,
        &request.must,
        &request.exclude,
    )?;
    if candidates.is_empty() && request.scope == Scope::Inbox {
        // An empty inbox is a state, not a failure: the reader is done.
        return Ok(Feed {
            hits: Vec::new(),
            described: if must.is_empty() && exclude.is_empty() {
                "the inbox is empty: every paper is marked or tagged \
                 (`papers mark new ID...` puts one back)"
                    .into()
            } else {
                format!(
                    "of {}, none is left after --must and --exclude",
                    selection.described
                )
            },
            ranked: 0,
            tags: wanted.iter().map(|(name, ..)| name.clone()).collect(),
            skipped,
            quiet: Vec::new(),
            unranked: false,
        });
    }
    if candidates.is_empty() {
        return Err(Error::Feed(format!(
            "nothing to rank: of {}, none is left{}",
            selection.described,
            if must.is_empty() && exclude.is_empty() {
                " that is not already tagged"
            } else {
                " after --must and --exclude (and the papers already tagged)"
            }
        )));
    }

    let vector = |row: usize| index.vector(row);
    let new_vectors: Vec<Vec<f32>> = candidates.iter().map(|&r| vector(r)).collect();
    let new_refs: Vec<&[f32]> = new_vectors.iter().map(Vec::as_slice).collect();
    let reads_words = CHOSEN.reads_words();
    let reads_authors = CHOSEN.reads_authors();
    let bm25 = &words::Memo::new(index.lexical()?);
    let new_papers = if reads_words || reads_authors {
        papers_at(index, &candidates)?
    } else {
        Vec::new()
    };
    let new_words = if reads_words {
        Batch::analyse(None, &new_papers, bm25)
    } else {
        Batch::new(&[])
    };
    let new_authors: Vec<Vec<String>> = new_papers.iter().map(authors::of).collect();
    let profiles = profiles(index, bm25, wanted, &ids, &tagged)?;

    // Each paper under its best tag, by the probability that the reader
    // wants it; a tag without calibration (none is trained without one)
    // standardises over the batch.
    let mut best: Vec<(f32, usize)> = vec![(f32::NEG_INFINITY, 0); candidates.len()];
    let mut quiet = Vec::new();
    for (p, profile) in profiles.iter().enumerate() {
        let words = reads_words.then_some(&new_words);
        let authors = reads_authors.then_some(new_authors.as_slice());
        let scores = profile
            .trained
            .probabilities(&new_refs, words, authors)
            .unwrap_or_else(|| {
                standardise(profile.trained.score(&new_refs, words, authors))
                    .into_iter()
                    .map(|z| 1.0 / (1.0 + (-z / 2.0).exp()))
                    .collect()
            });
        let floor = profile.trained.calibration().map_or(CLOSE, |c| c.quiet);
        if scores.iter().all(|&s| s < floor) {
            quiet.push(profile.name.clone());
        }
        for (i, s) in scores.into_iter().enumerate() {
            if s > best[i].0 {
                best[i] = (s, p);
            }
        }
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        best[b]
            .0
            .total_cmp(&best[a].0)
            .then(candidates[a].cmp(&candidates[b]))
    });
    order.truncate(request.limit);

    let mut liked_papers: HashMap<usize, Paper> = HashMap::new();
    let runs = index.runs_since(0)?;
    let mut hits = Vec::with_capacity(order.len());
    for i in order {
        let (s, p) = best[i];
        let profile = &profiles[p];
        let (nearest, similarity) = profile.trained.nearest(&new_vectors[i]);
        let liked_row = profile.liked_rows[nearest];
        if let std::collections::hash_map::Entry::Vacant(slot) = liked_papers.entry(liked_row) {
            slot.insert(index.paper(liked_row)?);
        }
        let liked = liked_papers[&liked_row].clone();
        // Read once already, for its words and authors.
        let paper = match new_papers.get(i) {
            Some(paper) => paper.clone(),
            None => index.paper(candidates[i])?,
        };
        let terms: HashSet<String> = analysis.terms(&liked.embed_text()).into_iter().collect();
        let evidence = evidence::by_words(&paper.text, &terms, bm25).to_string();
        hits.push(FeedHit {
            found: Found {
                // The sentence of its abstract that shares most with the
                // liked paper.
                evidence: Some(evidence),
                ..Found::new(Hit::new(candidates[i], s), paper)
            },
            because: Some(Because {
                tag: profile.name.clone(),
                liked,
                similarity,
            }),
            added: runs
                .iter()
                .find(|run| run.range().contains(&candidates[i]))
                .map(|run| run.at),
            // A tag with nothing today says so on every paper it ranks.
            verdict: if quiet.contains(&profile.name) {
                Verdict::None
            } else {
                verdict(s)
            },
        });
    }
    Ok(Feed {
        hits,
        described: selection.described,
        ranked: candidates.len(),
        tags: profiles.into_iter().map(|p| p.name).collect(),
        skipped,
        quiet,
        unranked: false,
    })
}
