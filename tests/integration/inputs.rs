//! JSON Lines (plain and gzip), field mappings, LaTeX cleaning, arXiv
//! versions, and the real Hugging Face and arXiv files of `../shared/bench`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::{bench, papers_in, Hit, Report};

fn records_jsonl() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/records.jsonl")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn show(index: &Path, id: &str, raw: bool) -> Hit {
    let mut args = vec!["show", "--json", id];
    if raw {
        args.push("--raw");
    }
    // `show` prints a record without rank or score; fill them to reuse Hit.
    let mut value: serde_json::Value = papers_in(index, &args).ok().json();
    value["rank"] = 0.into();
    value["score"] = 0.into();
    serde_json::from_value(value).unwrap()
}

/// The three layouts in one file: the bad line and the record without an
/// abstract are warned about by line, the rest indexed with titles,
/// authors, categories and dates; LaTeX is cleaned and the original kept.
#[test]
fn json_lines_records_index_with_their_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = records_jsonl();
    let run = papers_in(&index, &["index", "--json", input.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert_eq!((report.records, report.bad_lines), (3, 2));
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    assert!(
        warnings[0].contains("records.jsonl: line 3: not JSON"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("records.jsonl: line 5: no abstract"),
        "{}",
        warnings[1]
    );

    let rotary = show(&index, "2501.00001", false);
    assert_eq!(
        rotary.title.as_deref(),
        Some("Rotary Scaling Without Fine-Tuning")
    );
    assert_eq!(rotary.headline, "Rotary Scaling Without Fine-Tuning");
    assert_eq!(
        rotary.authors.as_deref(),
        Some(
            &[
                "Ada Lovelace".to_string(),
                "Alan Turing".into(),
                "Grace Hopper".into()
            ][..]
        )
    );
    assert_eq!(rotary.categories.as_deref().map(<[String]>::len), Some(2));
    assert_eq!(rotary.published.as_deref(), Some("2025-01-03"));
    assert!(
        rotary
            .text
            .contains("with no extra parameters and O(1) cost."),
        "{}",
        rotary.text
    );
    assert!(!rotary.text.contains('\n'));
    assert!(rotary
        .original
        .as_deref()
        .is_some_and(|o| o.contains("\\textbf{no}")));
    let raw = show(&index, "2501.00001", true);
    assert!(raw.text.contains("\\textbf{no}") && raw.text.contains("$O(1)$"));
    // An arXiv id with a version is the same alias.
    assert_eq!(
        show(&index, "arXiv:2501.00002v1", false)
            .arxiv_id
            .as_deref(),
        Some("2501.00002")
    );

    // The title is matched: a word only in a title finds its record.
    let hits: Vec<Hit> = papers_in(&index, &["search", "--mode", "lexical", "fused"])
        .ok()
        .json_lines();
    assert_eq!(hits[0].arxiv_id.as_deref(), Some("2501.00002"));
    let hits: Vec<Hit> = papers_in(&index, &["search", "--mode", "lexical", "protein"])
        .ok()
        .json_lines();
    assert_eq!(hits[0].source_id.as_deref(), Some("77"));

    // The same file again, gzip-compressed: nothing is indexed twice.
    let gz = dir.path().join("records.jsonl.gz");
    std::fs::write(&gz, gzip(&std::fs::read(&input).unwrap())).unwrap();
    let report: Report = papers_in(&index, &["index", "--json", gz.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(
        (report.added, report.already_present, report.records),
        (0, 3, 3)
    );
}

/// A gzip file cut short: the complete lines before the cut are indexed,
/// a warning names the file and the line, and the whole file later adds
/// only the rest.
#[test]
fn a_truncated_gzip_indexes_what_it_holds_and_says_where_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!(
            "{{\"id\": \"2502.{i:05}\", \"title\": \"Paper {i}\", \"abstract\": \"Abstract number {i} about topic {}.\"}}\n",
            i % 7
        ));
    }
    let whole = gzip(text.as_bytes());
    let cut = dir.path().join("cut.jsonl.gz");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let run = papers_in(&index, &["index", "--json", cut.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert!(
        report.records > 0 && report.records < 400,
        "{}",
        report.records
    );
    let warning = run.stderr.lines().find(|l| l.contains("warning")).unwrap();
    assert!(
        warning.contains("cut.jsonl.gz: line ") && warning.contains("truncated gzip"),
        "{warning}"
    );
    let full = dir.path().join("full.jsonl.gz");
    std::fs::write(&full, &whole).unwrap();
    let again: Report = papers_in(&index, &["index", "--json", full.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(again.records, 400);
    assert_eq!(again.added, 400 - report.records);
    // Not gzip at all: a warning, the file skipped.
    let fake = dir.path().join("fake.jsonl.gz");
    std::fs::write(&fake, text.as_bytes()).unwrap();
    let run = papers_in(
        &index,
        &[
            "index",
            "--json",
            fake.to_str().unwrap(),
            full.to_str().unwrap(),
        ],
    )
    .ok();
    assert!(
        run.stderr
            .contains("fake.jsonl.gz: not a readable gzip file"),
        "{}",
        run.stderr
    );
}

/// A new abstract for an arXiv id already indexed replaces the record;
/// the old text is gone, the old source stays.
#[test]
fn a_new_version_of_an_arxiv_paper_replaces_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let v1 = dir.path().join("v1.jsonl");
    std::fs::write(&v1, "{\"id\": \"2503.00001v1\", \"title\": \"T\", \"abstract\": \"First version about zebras.\"}\n").unwrap();
    papers_in(&index, &["index", v1.to_str().unwrap()]).ok();
    let v2 = dir.path().join("v2.jsonl");
    std::fs::write(&v2, "{\"id\": \"2503.00001v2\", \"title\": \"T\", \"abstract\": \"Second version about giraffes.\"}\n").unwrap();
    let report: Report = papers_in(&index, &["index", "--json", v2.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!((report.added, report.replaced, report.records), (1, 1, 1));
    let paper = show(&index, "2503.00001", false);
    assert_eq!(paper.text, "Second version about giraffes.");
    let files: Vec<&str> = paper.sources.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, ["v1.jsonl", "v2.jsonl"]);
    let hits: Vec<Hit> = papers_in(&index, &["search", "--mode", "lexical", "zebras"])
        .ok()
        .json_lines();
    assert!(hits.is_empty(), "the old text is dropped");
}

/// The real `/api/daily_papers` bodies of both layouts index with titles,
/// authors, the arXiv date and (2026) the daily list's date.
#[test]
fn real_hugging_face_responses_index_with_their_dates() {
    crate::needs!(Bench);
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let hf = bench().join("hf-daily");
    let report: Report = papers_in(&index, &["index", "--json", hf.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!((report.files, report.skipped), (3, 0));
    assert!(report.records >= 30, "{}", report.records);
    #[derive(serde::Deserialize)]
    struct Listed {
        title: String,
        authors: Vec<String>,
        published: Option<String>,
        listed: Option<String>,
        text: String,
        arxiv_id: String,
        upvotes: Option<u64>,
        github: Option<String>,
        #[serde(default)]
        keywords: Vec<String>,
        ai_summary: Option<String>,
    }
    let listed: Vec<Listed> = papers_in(&index, &["list"]).ok().json_lines();
    assert_eq!(listed.len(), report.records);
    assert!(listed.iter().all(|p| !p.title.is_empty()));
    assert!(listed.iter().filter(|p| p.authors.is_empty()).count() <= 1);
    assert!(listed.iter().all(|p| p.published.is_some()));
    assert!(listed
        .iter()
        .all(|p| !p.text.contains('\n') && !p.title.contains('\n')));
    assert!(listed
        .iter()
        .any(|p| p.listed.as_deref().is_some_and(|d| d.starts_with("2026-"))));

    // Hugging Face's own fields are kept, shown and sortable.
    assert!(listed.iter().all(|p| p.upvotes.is_some()));
    assert!(listed
        .iter()
        .any(|p| !p.keywords.is_empty() && p.ai_summary.is_some()));
    let with_code = listed
        .iter()
        .find(|p| p.github.is_some())
        .expect("a paper with code");
    let page = papers_in(&index, &["show", "--table", &with_code.arxiv_id])
        .ok()
        .stdout;
    for part in [
        "upvotes",
        with_code.github.as_deref().unwrap(),
        "https://arxiv.org/abs/",
        &with_code.title[..20],
    ] {
        assert!(page.contains(part), "{part}: {page}");
    }
    assert_eq!(
        page.matches(&with_code.text[..40]).count(),
        1,
        "the abstract once: {page}"
    );
    let by_votes: Vec<Listed> = papers_in(
        &index,
        &[
            "search",
            "--sort",
            "upvotes",
            "--min-score",
            "0",
            "-k",
            "20",
            "language models",
        ],
    )
    .ok()
    .json_lines();
    let votes: Vec<u64> = by_votes.iter().map(|p| p.upvotes.unwrap()).collect();
    assert!(
        votes.len() == 20 && votes.windows(2).all(|w| w[0] >= w[1]),
        "{votes:?}"
    );

    // --in DATE: the papers a daily list featured that day.
    let day = "2026-08-03";
    let that_day: Vec<Listed> = papers_in(
        &index,
        &[
            "search",
            "--in",
            day,
            "--min-score",
            "0",
            "-k",
            "1000",
            "models",
        ],
    )
    .ok()
    .json_lines();
    let expected = listed
        .iter()
        .filter(|p| p.listed.as_deref() == Some(day))
        .count();
    assert!(
        expected > 0 && that_day.len() == expected,
        "{} of {expected}",
        that_day.len()
    );
    assert!(that_day.iter().all(|p| p.listed.as_deref() == Some(day)));
}

/// `--field` maps a layout no built-in name covers; a malformed mapping is
/// a one-line error naming the argument.
#[test]
fn field_mappings_read_other_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = dir.path().join("export.jsonl");
    std::fs::write(
        &input,
        concat!(
            "{\"key\": \"ZOT-1\", \"paper\": {\"name\": \"Bees Dance\", \"body\": \"Honey bees encode distance in the waggle dance.\"}}\n",
            "{\"key\": \"ZOT-2\", \"paper\": {\"name\": \"Ant Trails\", \"body\": \"Ants lay pheromone trails that shorten with use.\"}}\n",
        ),
    )
    .unwrap();
    let (fields, path) = (
        [
            "--field",
            "id=key",
            "--field",
            "title=paper.name",
            "--field",
            "abstract=paper.body",
        ],
        input.to_str().unwrap(),
    );
    let mut args = vec!["index", "--json"];
    args.extend(fields);
    args.push(path);
    let report: Report = papers_in(&index, &args).ok().json();
    assert_eq!((report.records, report.bad_lines), (2, 0));
    let bees = show(&index, "ZOT-1", false);
    assert_eq!(bees.title.as_deref(), Some("Bees Dance"));
    // The input's own id in another case is still that record.
    assert_eq!(show(&index, "zot-1", false).text, bees.text);
    assert_eq!(bees.text, "Honey bees encode distance in the waggle dance.");
    // The title is matched too.
    let hits: Vec<Hit> = papers_in(&index, &["search", "--mode", "lexical", "trails"])
        .ok()
        .json_lines();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].title.as_deref(), Some("Ant Trails"));

    papers_in(&index, &["index", "--field", "colour=paper.name", path])
        .fails(2, &["--field", "colour"]);
}

/// The first 2,000 lines of the real arXiv metadata, gzip as shipped: every
/// line a record, ids and titles kept, LaTeX cleaned for display.
#[test]
fn real_arxiv_metadata_indexes_as_shipped() {
    crate::needs!(Bench);
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let source = bench().join("arxiv/arxiv-74k.jsonl.gz");
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(
        std::fs::File::open(&source).unwrap(),
    ));
    let lines: Vec<String> = reader.lines().take(2000).map(Result::unwrap).collect();
    let ids: std::collections::HashSet<String> = lines
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let input = dir.path().join("arxiv-2k.jsonl.gz");
    std::fs::write(&input, gzip((lines.join("\n") + "\n").as_bytes())).unwrap();
    let run = papers_in(&index, &["index", "--json", input.to_str().unwrap()]).ok();
    let report: Report = run.json();
    assert_eq!(report.bad_lines, 0, "{}", run.stderr);
    assert_eq!(report.records, ids.len());

    let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let paper = show(&index, first["id"].as_str().unwrap(), false);
    let title = first["title"].as_str().unwrap();
    let one_line = title.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(paper.title.as_deref(), Some(one_line.as_str()));
    assert!(!paper.text.contains('\n'));
    // Searching for a record's own title finds it first.
    let hits: Vec<Hit> = papers_in(&index, &["search", "--limit", "3", title])
        .ok()
        .json_lines();
    assert_eq!(hits[0].id, paper.id, "{title}");
}
