//! papers' own rankers on the draws of `bench/feed_cv.py`:
//! `cargo bench --bench feed_cv -- INDEX DRAWS OUT` (`bench/feed_cv.sh`
//! runs it between the script's two passes).
//!
//! DRAWS (JSON, the script's `--draws`) lists, for each (category, seed),
//! the arXiv ids of the 20 liked papers, the 20 disliked, and the
//! collection the script's rankers see (its sample of the pool, the days,
//! the disliked papers); and the days. Each ranker of [`Ranker::ALL`] is
//! trained here as `papers feed` trains it: vectors, words and authors as
//! the index has them, weak negatives sampled from the collection by
//! [`papers::feed::background_sample`], the collection's mean words from
//! every [`papers::feed::WORDS_EVERY`]-th of them. OUT (JSON) gets every
//! day's scores by draw and ranker, for the script to rank and average as
//! its own candidates, so that the nested cross-validation compares the
//! code that ships with everything else.

use std::collections::HashMap;
use std::path::PathBuf;

use papers::feed::authors;
use papers::feed::batch::Batch;
use papers::feed::words::{self, Words};
use papers::feed::{ExampleWords, Examples, Ranker, Trained};
use papers::index::Index;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(serde::Deserialize)]
struct Draw {
    category: String,
    seed: u64,
    liked: Vec<String>,
    disliked: Vec<String>,
    collection: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Draws {
    draws: Vec<Draw>,
    days: Vec<Vec<String>>,
}

/// A day's papers as the rankers take them: vectors, words, authors.
type Day<'a> = (Vec<&'a [f32]>, Batch, Vec<Vec<String>>);

/// A paper of the index as the rankers see it.
struct Seen {
    vector: Vec<f32>,
    words: Words,
    authors: Vec<String>,
}

fn names<'a>(ps: &[&'a Seen]) -> Vec<&'a [String]> {
    ps.iter().map(|p| p.authors.as_slice()).collect()
}

fn vectors<'a>(ps: &[&'a Seen]) -> Vec<&'a [f32]> {
    ps.iter().map(|p| p.vector.as_slice()).collect()
}

fn word_refs<'a>(ps: &[&'a Seen]) -> Vec<&'a Words> {
    ps.iter().map(|p| &p.words).collect()
}

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [index, draws, out] = args.as_slice() else {
        return Err("usage: cargo bench --bench feed_cv -- INDEX DRAWS OUT".into());
    };
    let draws: Draws = serde_json::from_slice(&std::fs::read(draws)?)?;
    let index = Index::open(&PathBuf::from(index))?;
    let bm25 = index.lexical()?;
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let every = draws
        .draws
        .iter()
        .flat_map(|d| d.liked.iter().chain(&d.disliked).chain(&d.collection))
        .chain(draws.days.iter().flatten());
    for id in every {
        if seen.contains_key(id) {
            continue;
        }
        let row = index
            .resolve_arxiv(id)?
            .ok_or_else(|| format!("{id}: not in {}", index.data_dir().display()))?;
        let paper = index.paper(row)?;
        seen.insert(
            id.clone(),
            Seen {
                vector: index.vector(row),
                words: words::of(&paper, bm25),
                authors: authors::of(&paper),
            },
        );
    }
    let day_batches: Vec<Day> = draws
        .days
        .iter()
        .map(|day| {
            let papers: Vec<&Seen> = day.iter().map(|id| &seen[id]).collect();
            (
                papers.iter().map(|p| p.vector.as_slice()).collect(),
                Batch::of(&word_refs(&papers)),
                papers.iter().map(|p| p.authors.clone()).collect(),
            )
        })
        .collect();

    let mut results = Vec::new();
    let mut training: std::collections::BTreeMap<&str, f64> = Default::default();
    let started = std::time::Instant::now();
    for draw in &draws.draws {
        let of = |ids: &[String]| -> Vec<&Seen> { ids.iter().map(|id| &seen[id]).collect() };
        let (liked, disliked) = (of(&draw.liked), of(&draw.disliked));
        let sample = papers::feed::background_sample(&of(&draw.collection));
        let mean_words = words::mean(
            &sample
                .iter()
                .step_by(papers::feed::WORDS_EVERY)
                .map(|p| &p.words)
                .collect::<Vec<_>>(),
        );
        let each_background = Batch::of(&word_refs(&sample));
        let examples = Examples {
            liked: vectors(&liked),
            disliked: vectors(&disliked),
            background: vectors(&sample),
            words: Some(ExampleWords {
                liked: word_refs(&liked),
                disliked: word_refs(&disliked),
                background: &mean_words,
                each_background: Some(&each_background),
            }),
            authors: authors::tally(&names(&liked), &names(&disliked)),
        };
        let mut by_ranker = serde_json::Map::new();
        for ranker in Ranker::ALL {
            let t = std::time::Instant::now();
            let trained = Trained::new(ranker, &examples);
            *training.entry(ranker.name()).or_default() += t.elapsed().as_secs_f64();
            let days: Vec<Vec<f32>> = day_batches
                .iter()
                .map(|(v, w, a)| trained.score(v, Some(w), Some(a)))
                .collect();
            by_ranker.insert(ranker.name().to_string(), serde_json::json!(days));
        }
        results.push(serde_json::json!({
            "category": draw.category,
            "seed": draw.seed,
            "scores": by_ranker,
        }));
    }
    std::fs::write(out, serde_json::to_vec(&results)?)?;
    for (name, seconds) in &training {
        eprintln!(
            "{name}: training {:.1} ms per tag",
            1000.0 * seconds / draws.draws.len() as f64
        );
    }
    eprintln!(
        "{} draws, {} rankers: {:.1} s",
        draws.draws.len(),
        Ranker::ALL.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
