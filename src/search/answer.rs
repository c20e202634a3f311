//! A text query answered: open the index and the model it was built with
//! (side by side), embed the query's paragraphs, rank each in the asked
//! mode (fusion and window vectors included, see
//! [`search_text`](super::retrieve::search_text)), keep every record's best
//! paragraph, and pick the evidence sentence of each hit.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::embed::{BertEmbedder, Embedder, ModelChoice};
use crate::error::{Error, Result};
use crate::evidence;
use crate::hint::{rebuild_command, source_dirs};
use crate::index::{Index, Manifest};
use crate::paper::sentences;

use super::found::{Annotations, Found, Results};
use super::options::{Mode, SearchOptions};
use super::rank::Hit;
use super::retrieve;
use super::spelling::{self, Spelled};
use super::syntax::Parsed;
use super::verdict::Verdict;

/// A search: one or more query paragraphs and how to rank.
#[derive(Clone, Debug)]
pub struct Query {
    /// The query text, one entry per paragraph (see [`paragraphs`]).
    pub paragraphs: Vec<String>,
    /// Mode, limit, floor, dates, strategy.
    pub options: SearchOptions,
    /// Choose each hit's evidence by meaning (embeds the hits' sentences)
    /// instead of by query-term weight.
    pub explain: bool,
}

/// Splits a query text into paragraphs (blank-line separated), white space
/// collapsed; an empty query is [`Error::EmptyQuery`].
pub fn paragraphs(text: &str) -> Result<Vec<String>> {
    let paragraphs: Vec<String> = text
        .replace("\r\n", "\n")
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    if paragraphs.is_empty() {
        return Err(Error::EmptyQuery);
    }
    Ok(paragraphs)
}

/// Opens the index in `dir` for a search with `options`, and loads the
/// model it was built with. The two run side by side: each takes
/// milliseconds that a one-query process waits for. `note` hears which
/// model was loaded. Lexical mode reads the model only to decide whether
/// the query matches anything: without it (not fetched, or other weights)
/// it searches by words alone, and `note` says so.
pub fn open(
    dir: &Path,
    choice: &ModelChoice,
    options: &SearchOptions,
    note: &(dyn Fn(&str) + Sync),
) -> Result<(Index, Option<BertEmbedder>)> {
    if options.mode == Mode::Lexical {
        let wanted = SearchOptions {
            mode: Mode::Hybrid,
            ..options.clone()
        };
        return match open(dir, choice, &wanted, note) {
            Ok((index, model)) => Ok((index, model)),
            Err(e) => {
                let index = Index::open(dir)?;
                note(&format!(
                    "verdict decided by words alone (the model did not load: {e})"
                ));
                Ok((index, None))
            }
        };
    }
    let manifest = Manifest::read(dir)?;
    let (index, model) = std::thread::scope(|scope| {
        let index = scope.spawn(|| {
            let index = Index::open_from(dir, manifest.clone())?;
            retrieve::prepare(&index, options)?;
            Ok::<_, Error>(index)
        });
        let model = load_for(dir, &manifest, choice, None, note);
        let index = index
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (index, model)
    });
    let index = index?;
    // A writer may have replaced the index between the two reads; the
    // hint needs the index's sources, so a mismatch is reported after it
    // is open.
    let same = index.manifest().weights_sha256 == manifest.weights_sha256;
    let model = match model {
        Ok(model) if same => model,
        Err(e) if same && !matches!(e, Error::IndexModelMismatch { .. }) => return Err(e),
        _ => load_for(dir, index.manifest(), choice, Some(&index), &|_| {})?,
    };
    Ok((index, Some(model)))
}

/// Loads the model of the index whose manifest is `manifest`, refusing
/// other weights.
pub(crate) fn load_for(
    dir: &Path,
    manifest: &Manifest,
    choice: &ModelChoice,
    index: Option<&Index>,
    note: &dyn Fn(&str),
) -> Result<BertEmbedder> {
    // The hint reads every record's sources (seconds at a million records),
    // so only when a model mismatch asks for it.
    let rebuild = |model: &str| {
        let sources = index.map(source_dirs).unwrap_or_default();
        rebuild_command(dir, model, &sources)
    };
    Ok(choice
        .load(Some(manifest.built_with(dir)), &rebuild, note)?
        .embedder)
}

/// Answers `query` on `index`; `model` must be given unless the mode is
/// lexical (with `--explain`, it also embeds the hits' sentences; in
/// lexical mode it decides whether the query matches anything).
pub fn answer(index: &Index, model: Option<&dyn Embedder>, query: &Query) -> Result<Results> {
    let deadline = crate::deadline::current();
    let options = &query.options;
    let paragraphs = &query.paragraphs;
    // Unknown words corrected against the index's terms, then each
    // paragraph parsed and analysed once, for every step below.
    let bm25 = index.lexical()?;
    let words = spelling::Terms::of(index, model)?;
    let spelled: Vec<Spelled> = paragraphs
        .iter()
        .map(|p| match options.as_typed {
            true => Spelled {
                text: p.clone(),
                changes: Vec::new(),
            },
            false => spelling::correct(p, &words),
        })
        .collect();
    let corrected = spelled.iter().any(|s| !s.changes.is_empty());
    let parsed: Vec<Parsed> = spelled.iter().map(|s| Parsed::new(&s.text)).collect();
    let vectors = match (options.mode, model) {
        (Mode::Lexical, None) => None,
        (_, Some(model)) => {
            // Without the quotes and the -words (see `syntax`).
            let refs: Vec<&str> = parsed.iter().map(|p| p.syntax.text.as_str()).collect();
            Some(model.embed(&refs, &mut |_| deadline.flow())?)
        }
        (mode, None) => return Err(Error::NeedsEmbedding { mode: mode.name() }),
    };

    // Each paragraph's top hits; a record keeps its best paragraph, and
    // the query the best verdict of its paragraphs.
    let mut best: HashMap<usize, (Hit, usize)> = HashMap::new();
    let mut verdict = Verdict::None;
    for (p, query) in parsed.iter().enumerate() {
        let vector = vectors.as_ref().map(|v| v[p].as_slice());
        let ranking = retrieve::search_parsed(index, query, vector, options)?;
        deadline.check()?;
        verdict = verdict.max(ranking.verdict);
        for hit in ranking.hits {
            let slot = best.entry(hit.row).or_insert((hit, p));
            if hit.score > slot.0.score {
                *slot = (hit, p);
            }
        }
    }
    let mut ranked: Vec<(Hit, usize)> = best.into_values().collect();
    ranked.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.row.cmp(&b.0.row)));
    ranked.truncate(options.limit);

    let analysis = crate::analysis::Analysis::CURRENT;
    let terms: Vec<HashSet<String>> = parsed
        .into_iter()
        .map(|p| p.terms.into_iter().collect())
        .collect();
    let papers = ranked
        .iter()
        .map(|(hit, _)| index.paper(hit.row))
        .collect::<Result<Vec<_>>>()?;
    let texts: Vec<&str> = papers.iter().map(|p| p.text.as_str()).collect();
    let by_meaning = query.explain && options.mode != Mode::Lexical;
    let evidence: Vec<String> = match (model, &vectors, by_meaning) {
        (Some(model), Some(vectors), true) => {
            // One model pass over every sentence of every hit.
            let sentences: Vec<Vec<&str>> = texts.iter().map(|t| sentences(t)).collect();
            let flat: Vec<&str> = sentences.iter().flatten().copied().collect();
            let mut sentence_vectors = model.embed(&flat, &mut |_| deadline.flow())?.into_iter();
            sentences
                .iter()
                .zip(&ranked)
                .map(|(s, (_, p))| {
                    let v: Vec<Vec<f32>> = sentence_vectors.by_ref().take(s.len()).collect();
                    evidence::by_meaning(s, &v, &vectors[*p]).to_string()
                })
                .collect()
        }
        _ => texts
            .iter()
            .zip(&ranked)
            .map(|(t, (_, p))| evidence::by_words(t, &terms[*p], bm25).to_string())
            .collect(),
    };
    let several = paragraphs.len() > 1;
    let notes = Annotations {
        mode: Some(options.mode),
        terms: terms.into_iter().flatten().collect(),
        analysis,
        explain: query.explain,
        min_score: options.min_score,
        sort: Default::default(),
        verdict: Some(verdict),
        searched: corrected.then(|| {
            spelled
                .iter()
                .map(|s| s.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        }),
    };
    Ok(Results {
        found: ranked
            .into_iter()
            .zip(papers)
            .zip(evidence)
            .map(|(((hit, p), paper), evidence)| Found {
                hit,
                paper,
                evidence: Some(evidence),
                query_paragraph: several.then_some(p + 1),
            })
            .collect(),
        notes,
    })
}
