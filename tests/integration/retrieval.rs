//! Hybrid retrieval, evidence and paper-set queries on the seed index.

use crate::util::{papers, papers_in, run, seed, seed_index, top_id, Hit};

/// The id of the top semantic hit for `query`.
fn top(query: &str) -> String {
    top_id(&seed_index().dir, &["--mode", "semantic", query])
}

/// Lexical mode finds an exact rare term, and loads no model: it works
/// with an empty model cache and the hub switched off.
#[test]
fn lexical_mode_matches_exact_terms_without_a_model() {
    crate::needs!(Seeds);
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = papers();
    cmd.env("PAPERS_INDEX", &seed_index().dir)
        .env("PAPERS_CACHE_DIR", empty.path());
    let hits: Vec<Hit> = run(
        cmd,
        &["search", "--mode", "lexical", "-k", "3", "sparsemax"],
    )
    .ok()
    .json_lines();
    assert!(!hits.is_empty());
    assert!(hits[0].text.contains("sparsemax"), "{}", hits[0].headline);
    assert_eq!(hits[0].mode.as_deref(), Some("lexical"));
    assert_eq!(hits[0].lexical.as_ref().map(|l| l.rank), Some(1));
    assert!(hits[0].semantic.is_none());
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    // A word found nowhere gives no hits and no error.
    let none = seed(&["search", "--mode", "lexical", "zzqxv"]).ok();
    assert!(none.stdout.is_empty());
}

/// Hybrid keeps both rankings: each hit has its semantic place, and the
/// lexical one when a query word matched.
#[test]
fn hybrid_hits_carry_both_rankings_and_evidence() {
    crate::needs!(Seeds);
    let hits: Vec<Hit> = seed(&["search", "-k", "5", "ColBERT multi-vector retrieval"])
        .ok()
        .json_lines();
    assert!(hits[0].text.contains("ColBERT"), "{}", hits[0].headline);
    let first = &hits[0];
    assert!(first.semantic.is_some() && first.lexical.is_some());
    assert!(first.evidence.as_deref().unwrap().contains("ColBERT"));
}

/// `--explain` on a table shows the evidence sentence and the ranks.
#[test]
fn explain_prints_evidence_and_ranks() {
    crate::needs!(Seeds);
    let out = seed(&[
        "search",
        "--table",
        "--explain",
        "-k",
        "2",
        "sparsemax softmax",
    ])
    .ok();
    assert!(out.stdout.contains("\u{203a} "), "{}", out.stdout);
    assert!(out.stdout.contains("semantic #"), "{}", out.stdout);
    assert!(!out.stdout.contains('\x1b'), "no colour when piped");
}

/// A file query: each paragraph is searched and each hit names the
/// paragraph it matched best.
#[test]
fn a_file_query_reports_the_paragraph_each_hit_matched() {
    crate::needs!(Seeds);
    let dir = tempfile::tempdir().unwrap();
    let draft = dir.path().join("draft.txt");
    std::fs::write(
        &draft,
        "We train sparse attention with sparsemax instead of softmax.\n\n\
         Our retriever is evaluated zero-shot on the BEIR benchmark.\n",
    )
    .unwrap();
    let hits: Vec<Hit> = seed(&["search", "-k", "10", "--file", draft.to_str().unwrap()])
        .ok()
        .json_lines();
    let paragraph_of = |needle: &str| {
        hits.iter()
            .find(|h| h.text.contains(needle))
            .and_then(|h| h.query_paragraph)
    };
    assert_eq!(paragraph_of("sparsemax"), Some(1), "{hits:#?}");
    assert_eq!(paragraph_of("BEIR is a benchmark"), Some(2), "{hits:#?}");
    // An empty file is an empty query: a usage error.
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    seed(&["search", "--file", empty.to_str().unwrap()]).fails(2, &["query"]);
    seed(&["search", "--file", "/no/such/draft.txt"]).fails(1, &["/no/such/draft.txt"]);
}

/// `similar A B --not C` never returns the papers it was given, and
/// steering away from C changes the answer.
#[test]
fn similar_to_a_set_away_from_another() {
    crate::needs!(Seeds);
    let a = top("BEIR zero-shot retrieval benchmark");
    let b = top("Mr. TyDi multilingual retrieval benchmark");
    let c = top("learned sparse representations for retrieval");
    let like: Vec<Hit> = seed(&["similar", &a, &b]).ok().json_lines();
    assert_eq!(like.len(), 10);
    assert!(like.iter().all(|h| h.id != a && h.id != b));
    let away: Vec<Hit> = seed(&["similar", &a, &b, "--not", &c]).ok().json_lines();
    assert!(away.iter().all(|h| h.id != a && h.id != b && h.id != c));
    let ids = |hits: &[Hit]| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert_ne!(ids(&like), ids(&away));
    seed(&["similar", &a, "--not", "ffff0000"]).fails(1, &["ffff0000"]);
}

/// `dupes` finds the revised versions in the seeds, most similar first.
#[test]
fn dupes_lists_near_duplicate_pairs() {
    crate::needs!(Seeds);
    #[derive(serde::Deserialize)]
    struct Pair {
        score: f32,
        overlap: f32,
        a: Paper,
        b: Paper,
    }
    #[derive(serde::Deserialize)]
    struct Paper {
        id: String,
        text: String,
    }
    let pairs: Vec<Pair> = seed(&["dupes"]).ok().json_lines();
    // The seeds hold a few revised abstracts; topical neighbours with a
    // high cosine but little shared wording are not listed.
    assert!((1..=10).contains(&pairs.len()), "{} pairs", pairs.len());
    assert!(pairs.windows(2).all(|w| w[0].score >= w[1].score));
    for pair in &pairs {
        assert!(pair.score >= 0.75 && pair.overlap >= 0.3);
        assert_ne!(pair.a.id, pair.b.id);
        assert_ne!(pair.a.text, pair.b.text);
    }
    let by_cosine: Vec<Pair> = seed(&["dupes", "--min-overlap", "0"]).ok().json_lines();
    assert!(by_cosine.len() > pairs.len());
}

/// Text past the model's 256 word pieces is searchable through window
/// vectors, and `info` says how many records needed them.
#[test]
fn the_tail_of_a_long_abstract_is_searchable() {
    crate::needs!(Seeds);
    let info: serde_json::Value =
        serde_json::from_str(&seed(&["info", "--json"]).ok().stdout).unwrap();
    let long = info["long_records"].as_u64().unwrap();
    assert!(
        long > 0 && info["windows"].as_u64().unwrap() >= long,
        "{info}"
    );
    let hits: Vec<Hit> = seed(&[
        "search",
        "--mode",
        "semantic",
        "-k",
        "1",
        "models cannot count letters that appear more than twice in a word",
    ])
    .ok()
    .json_lines();
    let text = &hits[0].text;
    // The phrase sits near the end of a long abstract, past the cut.
    let at = text.find("more than twice").expect("the counting paper");
    assert!(
        text[..at].split_whitespace().count() > 220,
        "{}",
        hits[0].headline
    );
}

/// A Hugging Face daily papers JSON dump beside the text dumps: titles as
/// headlines, arXiv ids as aliases, authors and dates, and date filters
/// applied before ranking.
#[test]
fn json_dumps_bring_titles_aliases_and_date_filters() {
    crate::util::ensure_model();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let text_dump = crate::util::sample_data().join("daily-2024-05-01.txt");
    let json_dump =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf-daily-papers.json");
    let report: serde_json::Value = serde_json::from_str(
        &papers_in(
            &index,
            &[
                "index",
                "--json",
                text_dump.to_str().unwrap(),
                json_dump.to_str().unwrap(),
            ],
        )
        .ok()
        .stdout,
    )
    .unwrap();
    // Five entries, one without an abstract, one the same abstract as the
    // text dump's first paragraph.
    assert_eq!(report["files"], 2);
    assert_eq!(report["paragraphs"].as_u64().unwrap(), 10 + 4);
    assert_eq!(report["unique"].as_u64().unwrap(), 10 + 3);

    // The arXiv id is an alias; the shared abstract has both sources and
    // the JSON entry's metadata.
    let shown: serde_json::Value = serde_json::from_str(
        &papers_in(&index, &["show", "--json", "arXiv:2405.00011"])
            .ok()
            .stdout,
    )
    .unwrap();
    let title = "Rescaled Rotary Frequencies for Training-Free Context Extension";
    assert_eq!(shown["sources"].as_array().unwrap().len(), 2, "{shown}");
    assert_eq!(shown["headline"], title);
    assert_eq!(shown["title"], title);
    assert_eq!(shown["authors"].as_array().unwrap().len(), 2);
    assert_eq!(shown["published"], "2024-05-02");
    papers_in(&index, &["show", "2405.99999"]).fails(1, &["2405.99999"]);

    // --since keeps only dated records, and still fills the list from them.
    let since: Vec<Hit> = papers_in(
        &index,
        &[
            "search",
            "--since",
            "2024-05-03",
            "--min-score",
            "0",
            "rotary position",
        ],
    )
    .ok()
    .json_lines();
    let ids: Vec<&str> = since.iter().filter_map(|h| h.arxiv_id.as_deref()).collect();
    assert_eq!(since.len(), 2, "{ids:?}");
    assert!(ids.contains(&"2405.00022") && ids.contains(&"2405.00033"));
    for hit in &since {
        assert_eq!(hit.title.as_deref(), Some(hit.headline.as_str()));
        assert!(hit.published.as_deref().unwrap() >= "2024-05-03");
        assert!(!hit.authors.as_ref().unwrap().is_empty());
    }
    let until: Vec<Hit> = papers_in(&index, &["similar", "2405.00033", "--until", "2024-05-02"])
        .ok()
        .json_lines();
    let mut ids: Vec<&str> = until.iter().filter_map(|h| h.arxiv_id.as_deref()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["2404.00044", "2405.00011"]);
    assert_eq!(until.len(), 2);
    // A window nothing falls in names itself and the dates there are.
    let none = papers_in(&index, &["search", "--until", "2000-01-01", "rotary"])
        .fails(2, &["--since/--until", "from 2024-04-20 to 2024-05-04"]);
    assert!(none.stdout.is_empty());
    papers_in(&index, &["search", "--since", "May 3", "rotary"]).fails(2, &["YYYY-MM-DD"]);
}
