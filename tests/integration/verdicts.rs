//! The feed's score on an absolute scale (issue 55): a probability learnt
//! from the tag's own papers, the same whatever else is new, and a day
//! with nothing close says so, on the seeds and the real model.

use serde_json::Value;

use crate::needs;
use crate::util::{papers_in, seed_index_copy};

fn hits(run: &crate::util::Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids_for(index: &std::path::Path, query: &str, k: usize) -> Vec<String> {
    let run = papers_in(index, &["search", query, "-k", &k.to_string(), "--json"]).ok();
    hits(&run)
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_day_with_nothing_close_says_so_and_scores_do_not_depend_on_the_day() {
    needs!(Seeds);
    let index = seed_index_copy();
    let dir = index.path();
    let diffusion = ids_for(dir, "diffusion models for image generation", 12);
    let (liked, spare) = diffusion.split_at(8);
    let robots = ids_for(dir, "robot manipulation", 4);
    let speech = ids_for(dir, "speech recognition audio", 5);
    let mut args = vec!["tag", "diff"];
    args.extend(liked.iter().map(String::as_str));
    papers_in(dir, &args).ok();
    let mut args = vec!["tag", "diff", "--not"];
    args.extend(robots.iter().map(String::as_str));
    papers_in(dir, &args).ok();

    // Today: only papers about speech are new.
    papers_in(dir, &["mark", "seen", "--all"]).ok();
    let mut args = vec!["mark", "new"];
    args.extend(speech.iter().map(String::as_str));
    papers_in(dir, &args).ok();
    let quiet = hits(&papers_in(dir, &["feed", "diff", "-k", "20", "--json"]).ok());
    assert_eq!(quiet.len(), speech.len());
    for hit in &quiet {
        assert_eq!(hit["match"], "none", "{hit}");
        assert!(hit["score"].as_f64().unwrap() < 0.5, "{hit}");
    }
    let table = papers_in(dir, &["feed", "diff", "--table"]).ok();
    let first = table.stdout.lines().next().unwrap_or_default();
    assert!(
        first.contains("nothing today close to diff"),
        "{}",
        table.stdout
    );

    // Then diffusion papers the tag has not seen arrive too: the feed
    // finds them, and the speech papers keep their scores.
    let mut args = vec!["mark", "new"];
    args.extend(spare.iter().map(String::as_str));
    papers_in(dir, &args).ok();
    let day = hits(&papers_in(dir, &["feed", "diff", "-k", "20", "--json"]).ok());
    assert_eq!(day.len(), speech.len() + spare.len());
    assert_ne!(day[0]["match"], "none", "{}", day[0]);
    assert!(spare.contains(&day[0]["id"].as_str().unwrap().to_string()));
    let table = papers_in(dir, &["feed", "diff", "--table"]).ok();
    assert!(!table.stdout.contains("nothing today"), "{}", table.stdout);
    for hit in &quiet {
        let again = day.iter().find(|h| h["id"] == hit["id"]).unwrap();
        assert_eq!(again["score"], hit["score"], "{hit}");
    }
}
