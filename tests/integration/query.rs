//! `search`, `similar`, `show` and ids on the seed index.

use crate::util::{seed, seed_index, Hit};

#[test]
fn search_ranks_length_generalization_papers_first() {
    crate::needs!(Seeds);
    let hits: Vec<Hit> = seed(&[
        "search",
        "--json",
        "positional encoding length generalization",
    ])
    .ok()
    .json_lines();
    assert_eq!(hits.len(), 10);
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit.rank, i + 1);
        assert_eq!(hit.id.len(), 16);
        assert!(
            !hit.headline.is_empty() && hit.text.starts_with(hit.headline.trim_end_matches('…'))
        );
        assert!(!hit.sources.is_empty());
    }
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    // The top two are about length generalization, and most of the top
    // five about positions (the RoPE analysis among them).
    for hit in &hits[..2] {
        let text = hit.text.to_lowercase();
        assert!(
            text.contains("length") || text.contains("longer"),
            "{}",
            hit.headline
        );
    }
    let about_positions = hits[..5]
        .iter()
        .filter(|h| {
            let t = h.text.to_lowercase();
            t.contains("position") || t.contains("rope") || t.contains("nope")
        })
        .count();
    assert!(about_positions >= 4, "{hits:#?}");
    assert!(
        hits[..5]
            .iter()
            .any(|h| h.text.contains("Rotary Position Embedding (RoPE)")),
        "{hits:#?}"
    );
    // Every hit says how it ranked and why.
    for hit in &hits {
        assert_eq!(hit.mode.as_deref(), Some("hybrid"));
        assert!(hit.semantic.is_some());
        let evidence = hit.evidence.as_deref().unwrap_or_default();
        assert!(!evidence.is_empty() && hit.text.contains(evidence));
    }
}

#[test]
fn search_honours_limit_and_min_score() {
    crate::needs!(Seeds);
    let semantic = |extra: &[&str]| -> Vec<Hit> {
        let mut args = vec!["search", "--json", "--mode", "semantic"];
        args.extend_from_slice(extra);
        args.push("speech recognition");
        seed(&args).ok().json_lines()
    };
    let hits = semantic(&["-k", "3"]);
    assert_eq!(hits.len(), 3);
    let floor = hits[1].score;
    let floored = semantic(&["--min-score", &floor.to_string()]);
    assert_eq!(floored.len(), 2);
    // In hybrid mode the floor applies to the cosine of each hit.
    let hybrid: Vec<Hit> = seed(&[
        "search",
        "--json",
        "--min-score",
        &floor.to_string(),
        "speech recognition",
    ])
    .ok()
    .json_lines();
    assert!(!hybrid.is_empty());
    assert!(hybrid
        .iter()
        .all(|h| h.semantic.as_ref().is_some_and(|s| s.score >= floor)));
    assert!(seed(&[
        "search",
        "--json",
        "--min-score",
        "0.99",
        "speech recognition"
    ])
    .ok()
    .stdout
    .is_empty());
}

#[test]
fn similar_returns_ten_other_papers_without_the_model() {
    crate::needs!(Seeds);
    let top: Vec<Hit> = seed(&[
        "search",
        "--json",
        "-k",
        "1",
        "diffusion models image generation",
    ])
    .ok()
    .json_lines();
    let id = &top[0].id;
    let mut cmd = crate::util::papers();
    // No model anywhere: similar must not need one.
    cmd.env("PAPERS_INDEX", &seed_index().dir)
        .env("PAPERS_CACHE_DIR", "/nonexistent")
        .env("PAPERS_MODEL_DIR", "/nonexistent");
    let run = crate::util::run(cmd, &["similar", "--json", &id[..6]]).ok();
    let hits: Vec<Hit> = run.json_lines();
    assert_eq!(hits.len(), 10);
    assert!(hits.iter().all(|h| &h.id != id));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn graph_and_int8_search_agree_with_the_exact_scan_on_the_seeds() {
    crate::needs!(Seeds);
    use papers::search::{SearchOptions, Strategy};
    let index = papers::index::Index::open(&seed_index().dir).unwrap();
    let with = |strategy| SearchOptions {
        strategy,
        ..Default::default()
    };
    for strategy in [Strategy::Graph, Strategy::Quantized, Strategy::Binary] {
        let mut found = 0;
        let mut wanted = 0;
        for row in (0..index.rows()).step_by(7) {
            let truth: Vec<usize> = papers::search::similar(&index, row, &with(Strategy::Exact))
                .unwrap()
                .iter()
                .map(|h| h.row)
                .collect();
            let got = papers::search::similar(&index, row, &with(strategy)).unwrap();
            // Both rescore exactly, so shared hits score alike.
            for hit in &got {
                let exact = papers::search::dot(&index.vector(row), &index.vector(hit.row));
                assert!((hit.score - exact).abs() < 1e-6);
            }
            wanted += truth.len();
            found += truth
                .iter()
                .filter(|r| got.iter().any(|h| h.row == **r))
                .count();
        }
        let recall = found as f64 / wanted as f64;
        println!("seed index recall@10 of {}: {recall:.4}", strategy.name());
        assert!(recall >= 0.98, "{} recall@10 {recall}", strategy.name());
    }
}

#[test]
fn show_accepts_unique_prefixes_and_rejects_ambiguous_ones() {
    crate::needs!(Seeds);
    let top: Vec<Hit> = seed(&["search", "--json", "-k", "1", "graph neural networks"])
        .ok()
        .json_lines();
    let id = &top[0].id;
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Shown {
        id: String,
        headline: String,
        text: String,
        sources: Vec<crate::util::Source>,
    }
    let shown: Shown = seed(&["show", "--json", &id[..5]]).ok().json();
    assert_eq!(
        (&shown.id, &shown.text, &shown.headline),
        (id, &top[0].text, &top[0].headline)
    );
    assert_eq!(shown.sources, top[0].sources);
    let upper = id[..8].to_uppercase();
    seed(&["show", &upper]).ok();

    // Two seed abstracts have ids starting with 420e.
    let run = seed(&["show", "420e"]).fails(
        1,
        &[
            "ambiguous id `420e`",
            "420e4926d201f1bd",
            "420eb9633695f331",
        ],
    );
    assert!(run.stdout.is_empty());
    seed(&["show", "420e4"]).ok();
    seed(&["show", "ffffffff"]).fails(1, &["unknown id `ffffffff`"]);
    seed(&["show", "abc"]).fails(1, &["at least 4"]);
    seed(&["similar", "xyz!"]).fails(1, &["hex"]);
}
