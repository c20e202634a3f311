//! The feed's anchor carried exactly (issue 55): `papers::feed::replica`
//! (scikit-learn's TfidfVectorizer with arxiv-sanity's settings, and
//! LinearSVC's squared-hinge SVM over [MiniLM vector, TF-IDF]) against
//! scikit-learn itself, on the seeds as `papers index` stored them (their
//! texts and their vectors from the real model). scikit-learn lives in a
//! throwaway venv: `PAPERS_SKLEARN_PYTHON` names its python (`.ci/run`
//! makes one); without it the test skips.

use std::io::Write;
use std::path::PathBuf;

use papers::feed::replica::{Paper, Replica};
use papers::index::Index;

use crate::needs;
use crate::util::seed_index;

/// The python that has scikit-learn: `PAPERS_SKLEARN_PYTHON` (CI sets
/// it, and then it must work), else a `python3` that has it.
fn python() -> Option<PathBuf> {
    crate::util::python_with("PAPERS_SKLEARN_PYTHON", "import sklearn, scipy")
}

#[test]
fn the_replica_ranks_as_scikit_learn_does() {
    needs!(Seeds);
    let Some(python) = python() else {
        eprintln!("skipped: no scikit-learn (set PAPERS_SKLEARN_PYTHON to a python with it)");
        return;
    };
    let index = Index::open(&seed_index().dir).unwrap();
    let mut texts = Vec::new();
    let mut vectors = Vec::new();
    for row in (0..index.rows()).filter(|&r| index.is_live(r)) {
        let paper = index.paper(row).unwrap();
        let title = paper.meta.as_ref().map_or("", |m| m.title.as_str());
        texts.push(format!("{title}. {}", paper.text));
        vectors.push(index.vector(row));
    }
    // A reader's interest: the papers about diffusion models.
    let liked: Vec<usize> = (0..texts.len())
        .filter(|&i| texts[i].to_lowercase().contains("diffusion model"))
        .collect();
    assert!(
        liked.len() >= 5 && liked.len() < texts.len() / 4,
        "{} liked of {}",
        liked.len(),
        texts.len()
    );

    let papers: Vec<Paper> = texts
        .iter()
        .zip(&vectors)
        .map(|(text, vector)| Paper { vector, text })
        .collect();
    let replica = Replica::train(&papers, &liked);
    let ours: Vec<f64> = papers.iter().map(|p| replica.decision(p) as f64).collect();

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("papers.jsonl");
    let mut file = std::fs::File::create(&input).unwrap();
    for (i, (text, vector)) in texts.iter().zip(&vectors).enumerate() {
        let line = serde_json::json!({"text": text, "vector": vector, "liked": liked.contains(&i)});
        writeln!(file, "{line}").unwrap();
    }
    drop(file);
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sklearn_replica.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scikit-learn failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs["terms"].as_u64().unwrap() as usize, replica.terms());
    let theirs: Vec<f64> = theirs["decision"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();

    let r = pearson(&ours, &theirs);
    assert!(r >= 0.999, "decision values correlate {r:.5}");
    assert_eq!(top(&ours, 10), top(&theirs, 10), "the top 10 differ");
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "replica: {} terms, r = {r:.6}, largest difference {worst:.4}",
        replica.terms()
    );
}

/// The positions of the `k` highest values, as a sorted set.
fn top(values: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    let mut top = order[..k].to_vec();
    top.sort_unstable();
    top
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}
