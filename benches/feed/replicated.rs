//! The anchor beside the shipped ranker (issue 55): scikit-learn's SVM
//! over [MiniLM vector, TF-IDF] as `papers::feed::replica` carries it,
//! trained on each interest's liked papers against every other paper of
//! the collection (arxiv-sanity's protocol), ranking the same days.

use std::collections::{BTreeMap, HashSet};

use papers::feed::replica::{Paper, Replica};

/// Each (interest, day) pair's ranking metrics, by tuned or held out.
pub type Scores = BTreeMap<bool, Vec<[f64; 3]>>;

/// Trains the replica for one interest and scores its days into `scores`.
/// `collection` is every paper (id, vector, text); `liked` the interest's
/// liked ids; `days` each day's ids with whether each is relevant.
pub fn score(
    collection: &[(&str, &[f32], String)],
    liked: &HashSet<&str>,
    days: &[(Vec<&str>, Vec<bool>)],
    tuned: bool,
    scores: &mut Scores,
    metrics: fn(&[bool]) -> [f64; 3],
) {
    let replica = trained(collection, liked.iter().copied());
    for (ids, relevant) in days {
        if !relevant.contains(&true) {
            continue;
        }
        let s = replica(ids);
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(ids[a].cmp(ids[b])));
        let ranked: Vec<bool> = order.iter().map(|&i| relevant[i]).collect();
        scores.entry(tuned).or_default().push(metrics(&ranked));
    }
}

/// The replica trained on the `liked` ids of `collection` (id, vector,
/// text) against the rest of it: a scorer of a day's ids.
pub fn trained<'a, 'b>(
    collection: &'a [(&'a str, &'a [f32], String)],
    liked: impl Iterator<Item = &'b str>,
) -> crate::reader::Scorer<'a> {
    let papers: Vec<Paper> = collection
        .iter()
        .map(|(_, vector, text)| Paper { vector, text })
        .collect();
    let at: BTreeMap<&str, usize> = collection
        .iter()
        .enumerate()
        .map(|(i, (id, ..))| (*id, i))
        .collect();
    let positions: Vec<usize> = liked.filter_map(|id| at.get(id).copied()).collect();
    let replica = Replica::train(&papers, &positions);
    Box::new(move |day: &[&str]| {
        day.iter()
            .map(|id| replica.decision(&papers[at[id]]))
            .collect()
    })
}

/// Prints the replica's rows under the rankers' table.
pub fn print(scores: &Scores) {
    for (tuned, rows) in scores.iter().rev() {
        let n = rows.len() as f64;
        let avg = |k: usize| rows.iter().map(|r| r[k]).sum::<f64>() / n;
        println!(
            "| replica: scikit-learn's SVM on [MiniLM, TF-IDF] (arxiv-sanity) | {} | {} | {:.4} | {:.4} | {:.4} | |",
            if *tuned { "tuning" } else { "held out" },
            rows.len(),
            avg(0),
            avg(1),
            avg(2),
        );
    }
}
