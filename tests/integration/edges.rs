//! The rough edges a researcher met in two days of daily use, each driven
//! through the real binary: what a wrong input is told, the wording of the
//! summaries, the ids a feed names, the first feed before any tag, the
//! column a search is sorted by, headlines and BibTeX of text dumps, prices
//! and TeX in abstracts, and dropping what one input brought. (The MCP
//! `feed {"tag"}` case is in `mcp.rs`, with the SDK's client.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{ensure_model, papers_in, small_index_copy};

/// Writes `text` to `name` in `dir` and returns its path.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// JSON Lines records of our own, with arXiv ids, titles, authors and
/// upvotes; two carry prices and TeX the cleaning must read right.
const RECORDS: &str = r#"{"id": "2612.00101", "title": "Prefix Caching for Agent Loops", "abstract": "Agents re-send a growing prompt at every step. Re-prefilling a day of such traffic costs ~$1.5M, while caching the shared prefix costs ~$0.03M, a 7.68\\times{} saving with $\\leq 1\\%$ change in answers.", "authors": ["Rae Sample", "Tom Example"], "update_date": "2026-12-01", "upvotes": 12}
{"id": "2612.00102", "title": "Rotary Scaling for Long Contexts", "abstract": "We rescale rotary position frequencies at inference time so that a transformer trained on short contexts keeps a flat perplexity on long documents, with no extra parameters.", "authors": ["Ada Sample"], "update_date": "2026-12-02", "upvotes": 40}
{"id": "2612.00103", "title": "Speculative Decoding with Tiny Drafters", "abstract": "A small draft model proposes several tokens that the large model verifies in one pass; we show drafters of 1% of the target's size keep most of the speed-up on code and chat.", "authors": ["Lin Example"], "update_date": "2026-12-03", "upvotes": 3}
{"id": "2612.00104", "title": "Position Interpolation Revisited", "abstract": "Interpolating position indices lets a model read contexts eight times longer than it was trained on after a short fine-tune; we study which layers need it.", "authors": ["Ada Sample", "Rae Sample"], "update_date": "2026-12-04"}
"#;

/// A temporary index of [`RECORDS`], and the folder holding it.
fn records_index() -> (tempfile::TempDir, PathBuf, PathBuf) {
    ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let records = file(dir.path(), "week.jsonl", RECORDS);
    let index = dir.path().join("index");
    (dir, index, records)
}

#[test]
fn a_pdf_or_a_csv_is_told_what_papers_reads() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("paper.pdf");
    std::fs::write(
        &pdf,
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n\0",
    )
    .unwrap();
    let csv = file(dir.path(), "papers.csv", "title,abstract\nA,Some text\n");
    let index = dir.path().join("index");
    for (input, needles) in [
        (&pdf, vec!["paper.pdf", "a PDF", "not PDFs"]),
        (&csv, vec!["papers.csv", "not an input papers reads"]),
    ] {
        let run = papers_in(&index, &["index", input.to_str().unwrap()]);
        assert_ne!(run.code, 0, "{}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        for needle in needles.iter().chain(&[
            "Daily Papers text",
            "Hugging Face daily papers JSON",
            "JSON Lines",
            "Parquet",
            "gzip",
        ]) {
            assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
        }
    }
}

#[test]
fn summaries_count_in_words_and_show_pages_as_text_when_piped() {
    let (dir, index, records) = records_index();
    let run = papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    assert!(
        run.stderr
            .contains("1 file read (4 records, 4 unique), 0 skipped: 4 added"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("4 records in"), "{}", run.stderr);

    // One more record: "1 record", never "1 records".
    let one = file(
        dir.path(),
        "one.jsonl",
        RECORDS
            .lines()
            .next()
            .unwrap()
            .replace("2612.00101", "2612.00199")
            .as_str(),
    );
    let run = papers_in(&index, &["index", one.to_str().unwrap()]).ok();
    assert!(
        run.stderr.contains("1 file read (1 record, 1 unique)"),
        "{}",
        run.stderr
    );

    // `show` piped (as into `head` or `less`) prints the page; --json is
    // still there for scripts.
    let page = papers_in(&index, &["show", "2612.00102"]).ok().stdout;
    assert!(!page.trim_start().starts_with('{'), "{page}");
    assert!(page.contains("Rotary Scaling for Long Contexts"), "{page}");
    assert!(page.contains("https://arxiv.org/abs/2612.00102"), "{page}");
    let json: Value = papers_in(&index, &["show", "--json", "2612.00102"])
        .ok()
        .json();
    assert_eq!(json["arxiv_id"], "2612.00102");

    // A feed written to a file says how many papers, in words.
    papers_in(&index, &["tag", "long", "2612.00102"]).ok();
    let out = dir.path().join("feed.xml");
    let run = papers_in(
        &index,
        &[
            "feed",
            "-k",
            "1",
            "--format",
            "rss",
            "-o",
            out.to_str().unwrap(),
        ],
    )
    .ok();
    assert!(run.stderr.contains("wrote 1 paper to"), "{}", run.stderr);

    // Undated records are not called "text dumps" when they are not.
    let text = file(
        dir.path(),
        "day.txt",
        "Daily Papers\n\nA record of a text dump has no date, so a date filter leaves it out of every search.\n",
    );
    papers_in(&index, &["index", text.to_str().unwrap()]).ok();
    let run = papers_in(&index, &["search", "--since", "2026-12-02", "rotary"]).ok();
    assert!(
        run.stderr.contains("so 1 paper without one (Daily Papers text, or records whose input gave none) is left out"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("(text dumps)"), "{}", run.stderr);
}

#[test]
fn every_feed_format_names_the_liked_paper_by_its_arxiv_id() {
    let (_dir, index, records) = records_index();
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    papers_in(&index, &["tag", "long", "2612.00102"]).ok();
    let markdown = papers_in(&index, &["feed", "--format", "markdown"])
        .ok()
        .stdout;
    assert!(markdown.contains("like 2612.00102"), "{markdown}");
    let rss = papers_in(&index, &["feed", "--format", "rss"]).ok().stdout;
    assert!(rss.contains("like 2612.00102"), "{rss}");
    let table = papers_in(&index, &["feed", "--table"]).ok().stdout;
    assert!(table.contains("like 2612.00102"), "{table}");
    let hits: Vec<Value> = papers_in(&index, &["feed", "--json"]).ok().json_lines();
    assert!(!hits.is_empty());
    for hit in &hits {
        assert_eq!(hit["because"]["arxiv_id"], "2612.00102", "{hit}");
    }
}

#[test]
fn the_first_feed_before_any_tag_lists_the_new_papers_newest_first() {
    let (_dir, index, records) = records_index();
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    let run = papers_in(&index, &["feed", "--json"]).ok();
    assert!(
        run.stderr.contains("no tags yet") && run.stderr.contains("papers tag NAME ID"),
        "{}",
        run.stderr
    );
    let hits: Vec<Value> = run.json_lines();
    let order: Vec<&str> = hits
        .iter()
        .map(|h| h["arxiv_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["2612.00104", "2612.00103", "2612.00102", "2612.00101"],
        "newest first"
    );
    for hit in &hits {
        assert_eq!(hit["score"], 0.0, "{hit}");
        assert!(
            hit.get("because").is_none() && hit.get("tag").is_none(),
            "{hit}"
        );
    }
    let table = papers_in(&index, &["feed", "--table", "-k", "2"])
        .ok()
        .stdout;
    let first = table.lines().next().unwrap();
    assert!(
        first.contains("2 of the 4 papers not yet marked"),
        "{table}"
    );
    assert!(
        first.contains("no tags yet") || table.contains("no tags yet"),
        "{table}"
    );
    assert!(table.contains("2612.00104"), "{table}");

    // Once a tag exists, the feed ranks by it.
    papers_in(&index, &["tag", "long", "2612.00102"]).ok();
    let ranked: Vec<Value> = papers_in(&index, &["feed", "--json"]).ok().json_lines();
    assert_eq!(ranked.len(), 3);
    assert!(ranked.iter().all(|h| h["tag"] == "long"), "{ranked:?}");
}

#[test]
fn a_search_sorted_by_upvotes_or_date_shows_that_column() {
    let (_dir, index, records) = records_index();
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    let search = |sort: &str, width: &str| {
        let mut cmd = crate::util::papers();
        cmd.env("PAPERS_INDEX", &index).env("COLUMNS", width);
        crate::util::run(
            cmd,
            &[
                "search",
                "--table",
                "--sort",
                sort,
                "--min-score",
                "0",
                "-k",
                "4",
                "context length",
            ],
        )
        .ok()
        .stdout
    };
    let table = search("upvotes", "100");
    let header = table.lines().find(|l| l.contains("SCORE")).unwrap();
    assert!(header.contains("UPVOTES"), "{table}");
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("2612.")).collect();
    let votes: Vec<&str> = rows
        .iter()
        .map(|row| row.split_whitespace().nth(3).unwrap())
        .collect();
    assert_eq!(votes, ["40", "12", "3", "-"], "{table}");
    assert!(table.contains("sorted by UPVOTES"), "{table}");
    // Sorted by score, no such column.
    assert!(!search("score", "100").contains("UPVOTES"));
    // Sorted by date, the date shows even where the table would drop it.
    let narrow = search("date", "60");
    assert!(
        narrow.contains("DATE") && narrow.contains("2026-12-04"),
        "{narrow}"
    );
}

#[test]
fn text_dump_headlines_say_what_the_paper_is_and_bibtex_says_it_cannot_cite_them() {
    ensure_model();
    let dir = tempfile::tempdir().unwrap();
    // Our own abstracts in the shapes a reader met: the subject after an
    // opening clause, then a release note; a code link first.
    let dump = file(
        dir.path(),
        "day.txt",
        "Daily Papers\n\n\
         Driven by the need to search page images and text together, we introduce Colpage, a \
         late-interaction retriever over screenshots of documents. We release two model \
         variants, 1B and 3B. The larger one leads two visual retrieval leaderboards.\n\n\
         Code is available at https://example.org/kv. Evicting key-value cache entries by \
         their attention mass keeps long-context accuracy at a quarter of the memory.\n",
    );
    let index = dir.path().join("index");
    papers_in(&index, &["index", dump.to_str().unwrap()]).ok();
    let hits: Vec<Value> = papers_in(
        &index,
        &[
            "search",
            "--json",
            "--min-score",
            "0",
            "retrieval over page screenshots",
        ],
    )
    .ok()
    .json_lines();
    let headlines: Vec<&str> = hits
        .iter()
        .map(|h| h["headline"].as_str().unwrap())
        .collect();
    assert!(
        headlines
            .iter()
            .any(|h| h.starts_with("Driven by the need")),
        "{headlines:?}"
    );
    assert!(
        headlines
            .iter()
            .any(|h| h.starts_with("Evicting key-value cache")),
        "{headlines:?}"
    );
    assert!(!headlines
        .iter()
        .any(|h| h.starts_with("We release") || h.starts_with("Code is")));

    let ids: Vec<&str> = hits.iter().map(|h| h["id"].as_str().unwrap()).collect();
    let mut args = vec!["export", "--format", "bibtex"];
    args.extend(&ids);
    let run = papers_in(&index, &args).ok();
    assert!(
        run.stderr
            .contains("BibTeX: 2 papers left out as a `%` comment"),
        "{}",
        run.stderr
    );
    let bibtex = run.stdout;
    assert!(!bibtex.contains("@misc"), "{bibtex}");
    assert_eq!(bibtex.matches("not citable").count(), 2, "{bibtex}");
    assert!(bibtex.contains("day.txt"), "{bibtex}");
}

#[test]
fn prices_stay_prices_and_tex_symbols_render() {
    let (_dir, index, records) = records_index();
    papers_in(&index, &["index", records.to_str().unwrap()]).ok();
    let shown: Value = papers_in(&index, &["show", "--json", "2612.00101"])
        .ok()
        .json();
    let text = shown["text"].as_str().unwrap();
    assert!(text.contains("costs ~$1.5M, while"), "{text}");
    assert!(text.contains("costs ~$0.03M"), "{text}");
    assert!(text.contains("a 7.68× saving with ≤ 1% change"), "{text}");
    assert!(!text.contains("\\times"), "{text}");
    // The evidence lines read the same text.
    let hits: Vec<Value> = papers_in(
        &index,
        &[
            "search",
            "--json",
            "--explain",
            "--min-score",
            "0",
            "-k",
            "1",
            "prefix caching saving",
        ],
    )
    .ok()
    .json_lines();
    let evidence = hits[0]["evidence"].as_str().unwrap_or_default();
    assert!(!evidence.contains("\\times"), "{evidence}");
}

#[test]
fn remove_source_drops_what_one_input_brought() {
    let index = small_index_copy();
    let dir = index.path();
    let data = crate::util::sample_data();
    let second = data.join("daily-2024-05-02.txt");
    papers_in(dir, &["index", second.to_str().unwrap()]).ok();
    let before: Vec<Value> = papers_in(dir, &["list", "--json"]).ok().json_lines();
    let from_second = before
        .iter()
        .filter(|p| {
            let sources = p["sources"].as_array().unwrap();
            sources.iter().all(|s| s["file"] == "daily-2024-05-02.txt")
        })
        .count();
    assert!(from_second > 0);

    let dry = papers_in(
        dir,
        &[
            "remove",
            "--source",
            "daily-2024-05-02.txt",
            "--dry-run",
            "--json",
        ],
    )
    .ok();
    let would: Vec<Value> = dry.json_lines();
    assert_eq!(would.len(), from_second, "{}", dry.stderr);
    assert!(
        dry.stderr.contains("dry run: nothing changed"),
        "{}",
        dry.stderr
    );
    let unchanged: Vec<Value> = papers_in(dir, &["list", "--json"]).ok().json_lines();
    assert_eq!(unchanged.len(), before.len());

    // By path as well as by name; the first day's records stay.
    let run = papers_in(dir, &["remove", "--source", second.to_str().unwrap()]).ok();
    assert!(
        run.stderr
            .contains(&format!("removed {from_second} records")),
        "{}",
        run.stderr
    );
    let after: Vec<Value> = papers_in(dir, &["list", "--json"]).ok().json_lines();
    assert_eq!(after.len(), before.len() - from_second);
    assert!(after.iter().all(|p| p["sources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["file"] == "daily-2024-05-01.txt")));
    papers_in(dir, &["check"]).ok();

    // An input the index never read is a one-line error naming it.
    papers_in(dir, &["remove", "--source", "nowhere.txt"])
        .fails(2, &["--source", "nowhere.txt", "papers info"]);
    papers_in(dir, &["remove", "--source", "x.txt", "0c5bf8d0"]).fails(2, &["--source"]);
}

#[test]
fn the_progress_line_promises_no_time_before_a_tenth_is_done() {
    // The bar is drawn only on a terminal: `script` gives the run one.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped the progress line test: needs `script` (util-linux)");
        return;
    }
    ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let typescript = dir.path().join("typescript");
    let dump = crate::util::sample_data().join("daily-2024-05-01.txt");
    let line = format!(
        "{} --index {} index --precision f32 {}",
        env!("CARGO_BIN_EXE_papers"),
        index.display(),
        dump.display()
    );
    let mut cmd = std::process::Command::new("script");
    cmd.env_clear();
    for (k, v) in crate::util::papers().get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    // A terminal that draws (console takes an unset TERM for a dumb one).
    cmd.env("TERM", "xterm");
    let run = crate::util::run(cmd, &["-qec", &line, typescript.to_str().unwrap()]).ok();
    let seen = std::fs::read_to_string(&typescript).unwrap_or_default() + &run.stdout;
    let drawn: Vec<&str> = seen
        .split(['\r', '\n'])
        .filter(|l| l.contains("records ("))
        .collect();
    assert!(!drawn.is_empty(), "no progress line drawn: {seen}");
    for line in &drawn {
        // "embedding [bar] 3/10 records (2/s, ...)".
        let counts = line
            .split(" records")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap();
        let (done, total) = counts.split_once('/').unwrap();
        let (done, total): (u64, u64) = (done.parse().unwrap(), total.parse().unwrap());
        if done * 10 < total {
            assert!(line.contains("estimating time left"), "{line}");
        } else {
            assert!(
                line.contains("s left") || line.contains("estimating"),
                "{line}"
            );
        }
    }
    assert!(
        seen.contains("1 file read (10 records, 10 unique)"),
        "{seen}"
    );
}
