//! A simulated reader over the ten days (issue 55): each morning it reads
//! the top 20 of an interest's feed and answers every one (`tag` if it
//! carries the category, `tag --not` if not); the next day's feed learns
//! from the answers. Compared with the same ranker never answered, on days
//! 6-10, for the shipped ranker and (with `replica`) the replica, which
//! gains only its liked papers from the answers (it trains liked against
//! every other paper, so a paper answered "not" was a negative already).

use std::collections::{BTreeMap, HashSet};

use papers::feed::authors;
use papers::feed::batch::Batch;
use papers::feed::words::{self, Words};
use papers::feed::{ExampleWords, Examples, Trained, CHOSEN};

/// How many of each day's feed the reader answers.
const ANSWERED: usize = 20;
/// The days the comparison reads (0-based: days 6-10).
const LATER: std::ops::Range<usize> = 5..10;

/// What the rankers read of each paper.
pub struct Collection<'a> {
    pub vectors: &'a BTreeMap<&'a str, Vec<f32>>,
    pub words: &'a BTreeMap<&'a str, Words>,
    pub authors: &'a BTreeMap<&'a str, Vec<String>>,
    /// The replica's papers (id, vector, text), when it runs.
    pub texts: &'a [(&'a str, &'a [f32], String)],
}

/// Which ranker the reader answers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Who {
    Shipped,
    Replica,
}

/// A trained ranker: a day's ids to their scores.
pub type Scorer<'a> = Box<dyn Fn(&[&str]) -> Vec<f32> + 'a>;

/// MAP on days 6-10, by (ranker, answered, tuned).
pub type Table = BTreeMap<(Who, bool, bool), Vec<f64>>;

/// Runs the ten days for one interest, answered or not, into `table`.
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    collection: &Collection,
    who: Who,
    liked: &[&str],
    disliked: &[&str],
    days: &[Vec<&str>],
    relevant: &dyn Fn(&str) -> bool,
    tuned: bool,
    table: &mut Table,
    average_precision: fn(&[bool]) -> f64,
) {
    for answered in [false, true] {
        let mut liked: Vec<&str> = liked.to_vec();
        let mut disliked: Vec<&str> = disliked.to_vec();
        let mut static_scores: Option<Scorer> = None;
        for (d, day) in days.iter().enumerate() {
            let scores = match (&static_scores, answered) {
                (Some(score), false) => score(day),
                _ => {
                    let score = ranker(collection, who, &liked, &disliked);
                    let s = score(day);
                    if !answered {
                        static_scores = Some(score);
                    }
                    s
                }
            };
            let mut order: Vec<usize> = (0..day.len()).collect();
            order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(day[a].cmp(day[b])));
            let truth: Vec<bool> = order.iter().map(|&i| relevant(day[i])).collect();
            if LATER.contains(&d) && truth.contains(&true) {
                table
                    .entry((who, answered, tuned))
                    .or_default()
                    .push(average_precision(&truth));
            }
            if answered {
                for &i in order.iter().take(ANSWERED) {
                    if relevant(day[i]) {
                        liked.push(day[i]);
                    } else {
                        disliked.push(day[i]);
                    }
                }
            }
        }
    }
}

/// Trains `who` on the answers so far; returns a scorer of a day's ids.
fn ranker<'a>(
    collection: &'a Collection<'a>,
    who: Who,
    liked: &[&str],
    disliked: &[&str],
) -> Scorer<'a> {
    match who {
        Who::Replica => crate::replicated::trained(collection.texts, liked.iter().copied()),
        Who::Shipped => {
            let tagged: HashSet<&str> = liked.iter().chain(disliked).copied().collect();
            let others: Vec<&str> = collection
                .vectors
                .keys()
                .copied()
                .filter(|id| !tagged.contains(id))
                .collect();
            let sample = papers::feed::background_sample(&others);
            let vector = |id: &&str| -> &'a [f32] { collection.vectors[*id].as_slice() };
            let word = |id: &&str| -> &'a Words { &collection.words[*id] };
            let each_background = Batch::of(&sample.iter().map(word).collect::<Vec<_>>());
            let mean = words::mean(&sample.iter().map(word).collect::<Vec<_>>());
            let author = |id: &&str| -> &'a [String] { collection.authors[*id].as_slice() };
            let examples = Examples {
                liked: liked.iter().map(vector).collect(),
                disliked: disliked.iter().map(vector).collect(),
                background: sample.iter().map(vector).collect(),
                words: Some(ExampleWords {
                    liked: liked.iter().map(word).collect(),
                    disliked: disliked.iter().map(word).collect(),
                    background: &mean,
                    each_background: Some(&each_background),
                }),
                authors: authors::tally(
                    &liked.iter().map(author).collect::<Vec<_>>(),
                    &disliked.iter().map(author).collect::<Vec<_>>(),
                ),
            };
            let trained = Trained::new(CHOSEN, &examples);
            Box::new(move |day: &[&str]| {
                let vectors: Vec<&[f32]> = day.iter().map(vector).collect();
                let words: Vec<Words> = day.iter().map(|id| word(id).clone()).collect();
                let by: Vec<Vec<String>> = day.iter().map(|id| author(id).to_vec()).collect();
                trained.score(&vectors, Some(&Batch::new(&words)), Some(&by))
            })
        }
    }
}

/// Prints the reader's table.
pub fn print(table: &Table) {
    println!();
    println!("| ranker | categories | pairs (days 6-10) | MAP without answers | MAP with answers | gain |");
    println!("|---|---|---:|---:|---:|---:|");
    for tuned in [true, false] {
        for who in [Who::Shipped, Who::Replica] {
            let (Some(without), Some(with)) = (
                table.get(&(who, false, tuned)),
                table.get(&(who, true, tuned)),
            ) else {
                continue;
            };
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
            println!(
                "| {} | {} | {} | {:.4} | {:.4} | {:+.4} |",
                match who {
                    Who::Shipped => "shipped (papers feed)",
                    Who::Replica => "replica (scikit-learn's SVM)",
                },
                if tuned { "tuning" } else { "held out" },
                with.len(),
                mean(without),
                mean(with),
                mean(with) - mean(without),
            );
        }
    }
}
