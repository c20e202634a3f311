//! `papers index --embeddings`: vectors made elsewhere (here by `papers
//! embed`, as a GPU job or a cluster would run it) are stored without
//! embedding again, after a sampled check that they are this model's.

use std::path::Path;

use crate::util::{papers, papers_in, Hit, Report};

/// Three records with titles, as `{id, title, abstract}`.
const RECORDS: [(&str, &str, &str); 3] = [
    (
        "2607.00001",
        "Bees Dance",
        "Honey bees encode the distance and direction of food in the waggle dance.",
    ),
    (
        "2607.00002",
        "Ant Trails",
        "Foraging ants lay pheromone trails that shorten as more ants use them.",
    ),
    (
        "2607.00003",
        "Rotary Scaling",
        "Rescaling rotary position embeddings lets a transformer read longer contexts.",
    ),
];

/// The model's vectors of `texts`, through `papers embed`.
fn embed(texts: &[String]) -> Vec<Vec<f32>> {
    #[derive(serde::Deserialize)]
    struct Line {
        embedding: Vec<f32>,
    }
    let args: Vec<&str> = std::iter::once("embed")
        .chain(texts.iter().map(String::as_str))
        .collect();
    let run = crate::util::run(papers(), &args).ok();
    run.json_lines::<Line>()
        .into_iter()
        .map(|l| l.embedding)
        .collect()
}

/// Writes the records with `vectors` as an embeddings file.
fn write(path: &Path, vectors: &[Vec<f32>]) {
    let lines: Vec<String> = RECORDS
        .iter()
        .zip(vectors)
        .map(|((id, title, text), v)| {
            serde_json::json!({"id": id, "title": title, "abstract": text, "embedding": v})
                .to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// What the model embeds for a record with a title.
fn embedded_texts() -> Vec<String> {
    RECORDS
        .iter()
        .map(|(_, title, text)| format!("{title} {text}"))
        .collect()
}

#[test]
fn vectors_made_elsewhere_are_indexed_without_embedding_again() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let file = dir.path().join("embedded.jsonl");
    let vectors = embed(&embedded_texts());
    // Scaled: another tool may not normalise; papers does.
    let scaled: Vec<Vec<f32>> = vectors
        .iter()
        .map(|v| v.iter().map(|x| x * 3.0).collect())
        .collect();
    write(&file, &scaled);
    let run = papers_in(
        &index,
        &["index", "--json", "--embeddings", file.to_str().unwrap()],
    )
    .ok();
    assert!(
        run.stderr
            .contains("checking 3 of the first 3 given vectors"),
        "{}",
        run.stderr
    );
    let report: Report = run.json();
    assert_eq!((report.added, report.records), (3, 3));

    // Each record is its own nearest neighbour with the query its text.
    let hits: Vec<Hit> = papers_in(
        &index,
        &[
            "search",
            "--mode",
            "semantic",
            "-k",
            "1",
            &embedded_texts()[1],
        ],
    )
    .ok()
    .json_lines();
    assert_eq!(hits[0].arxiv_id.as_deref(), Some("2607.00002"));
    // The same text: a cosine of 1, a match as strong as the scale shows
    // (semantic mode tops out near 0.98 for a text this long).
    let cosine = hits[0].semantic.as_ref().unwrap().score;
    assert!(cosine > 0.999, "{cosine}");
    assert!(hits[0].score > 0.95, "{}", hits[0].score);
    let similar: Vec<Hit> = papers_in(&index, &["similar", "2607.00003"])
        .ok()
        .json_lines();
    assert_eq!(similar.len(), 2);
}

#[test]
fn vectors_of_other_texts_are_refused_unless_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let file = dir.path().join("embedded.jsonl");
    let mut vectors = embed(&embedded_texts());
    vectors.rotate_left(1); // each record gets another's vector
    write(&file, &vectors);
    let path = file.to_str().unwrap();
    let failed = papers_in(&index, &["index", "-q", "--embeddings", path])
        .fails(1, &["line 1", "cosine", "--no-verify"]);
    assert!(
        failed.stderr.contains("embedded.jsonl"),
        "{}",
        failed.stderr
    );
    assert!(!index.join("manifest.json").exists(), "nothing written");

    let report: Report = papers_in(
        &index,
        &["index", "--json", "--no-verify", "--embeddings", path],
    )
    .ok()
    .json();
    assert_eq!(report.records, 3);
}

#[test]
fn a_vector_of_the_wrong_length_or_none_is_reported_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let file = dir.path().join("embedded.jsonl");
    let mut vectors = embed(&embedded_texts());
    vectors[2].pop();
    write(&file, &vectors);
    papers_in(
        &index,
        &[
            "index",
            "--no-verify",
            "--embeddings",
            file.to_str().unwrap(),
        ],
    )
    .fails(1, &["embedded.jsonl: line 3", "383 dimensions", "384"]);

    // A record without a vector is a bad line; the others are indexed.
    let mut body = std::fs::read_to_string(&file).unwrap();
    let last = body.trim_end().rfind('\n').unwrap();
    body.truncate(last + 1);
    body.push_str("{\"id\": \"2607.00009\", \"abstract\": \"No vector here.\"}\n");
    std::fs::write(&file, body).unwrap();
    let run = papers_in(
        &index,
        &["index", "--json", "--embeddings", file.to_str().unwrap()],
    )
    .ok();
    assert!(
        run.stderr.contains("line 3: no embedding"),
        "{}",
        run.stderr
    );
    let report: Report = run.json();
    assert_eq!((report.records, report.bad_lines), (2, 1));
}

/// `papers embed --records` is the other half of the hand-off: records in
/// (LaTeX and hard wraps included), the same records with the vectors of
/// exactly what papers embeds out, which `index --embeddings` accepts.
#[test]
fn embed_records_output_is_accepted_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = dir.path().join("papers.jsonl");
    std::fs::write(
        &input,
        concat!(
            "{\"id\": \"2607.00011\", \"title\": \"Sparse \\\\emph{Mixtures}\", \"summary\": \"We route each token\\n  to $k=2$ of \\\\textbf{64} experts.\", \"extra\": [1, 2]}\n",
            "not json\n",
            "{\"id\": \"2607.00012\", \"abstract\": \"Contrastive pretraining aligns images with captions.\"}\n",
        ),
    )
    .unwrap();
    let run = crate::util::run(papers(), &["embed", "--records", input.to_str().unwrap()]).ok();
    assert!(
        run.stderr.contains("papers.jsonl: line 2: not JSON"),
        "{}",
        run.stderr
    );
    let lines: Vec<serde_json::Value> = run.json_lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["extra"], serde_json::json!([1, 2]), "fields kept");
    assert_eq!(lines[0]["embedding"].as_array().unwrap().len(), 384);

    let embedded = dir.path().join("embedded.jsonl");
    std::fs::write(&embedded, run.stdout).unwrap();
    let run = papers_in(
        &index,
        &[
            "index",
            "--json",
            "--embeddings",
            embedded.to_str().unwrap(),
        ],
    )
    .ok();
    let report: Report = run.json();
    assert_eq!((report.records, report.bad_lines), (2, 0), "{}", run.stderr);
    let hits: Vec<Hit> = papers_in(&index, &["search", "-k", "1", "mixture of experts routing"])
        .ok()
        .json_lines();
    assert_eq!(hits[0].arxiv_id.as_deref(), Some("2607.00011"));
}
