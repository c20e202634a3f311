//! A filter that matches nothing says which filter and what it could have
//! been, and `--in` tells an input's name from a day, or asks.

use crate::util::{papers_in, sample_data};

#[test]
fn an_empty_filter_names_itself_and_in_tells_a_file_from_a_day() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let (index, inputs) = (dir.path().join("i"), dir.path().join("in"));
    std::fs::create_dir(&inputs).unwrap();
    // A dump named for a day, indexed (and so listed) today.
    let day = {
        let out = std::process::Command::new("date")
            .args(["-u", "+%F"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let named = inputs.join(format!("{day}.txt"));
    std::fs::copy(sample_data().join("daily-2024-05-01.txt"), &named).unwrap();
    papers_in(&index, &["index", named.to_str().unwrap()]).ok();
    let search = |args: &[&str]| {
        let mut all = vec!["search", "--mode", "lexical"];
        all.extend_from_slice(args);
        all.push("rotary position");
        papers_in(&index, &all)
    };
    // Both the file's name without .txt and a day with papers: asked.
    search(&["--in", &day]).fails(2, &["--in", &format!("{day}.txt"), "--listed-since"]);
    let file = format!("{day}.txt");
    assert!(!search(&["--in", &file]).ok().stdout.is_empty());
    search(&["--in", "2020-01-01"])
        .fails(2, &["--in", "2020-01-01", &format!("days listed: {day}")]);
    search(&["--in", "nosuch.txt"]).fails(2, &["--in", "nosuch.txt", &file]);
    search(&["--author", "Nobody"]).fails(2, &["--author", "Nobody"]);
    search(&["--category", "cs.XX"]).fails(2, &["--category", "cs.XX"]);
    search(&["--listed-since", "2030-01-01"]).fails(2, &["--listed-since", &day]);
    // With --min-score 0, an empty list (no word of the query is in any
    // paper) does not blame the score.
    let none = papers_in(
        &index,
        &[
            "search",
            "--table",
            "--mode",
            "lexical",
            "--min-score",
            "0",
            "zzqxv",
        ],
    )
    .ok();
    assert!(none.stdout.contains("no paper matched"), "{}", none.stdout);
    assert!(!none.stdout.contains("scored"), "{}", none.stdout);
}
