//! The feed's anchor, carried exactly: arxiv-sanity's classifier as the
//! feed benchmark runs it in scikit-learn: a linear SVM as `LinearSVC`
//! trains one (squared hinge, `C = 0.01`, `class_weight="balanced"`,
//! `tol=1e-4`, the bias a regularised constant feature; LIBLINEAR's dual
//! coordinate descent: [`super::svm`]) over [MiniLM vector, TF-IDF of
//! words and word pairs ([`super::tfidf`], fitted on the whole
//! collection)], liked papers against every other paper of the
//! collection.
//!
//! `tests/integration/replica.rs` checks it against scikit-learn on the
//! seeds; `cargo bench --bench feed` ranks with it beside the shipped
//! ranker ([`super::ranker::CHOSEN`]), so the two are compared on the same
//! draws.

use super::svm::{self, Example, Loss};
use super::tfidf::{Settings, Tfidf};

/// `LinearSVC`'s `C` as arxiv-sanity sets it.
pub const COST: f32 = 0.01;

/// `LinearSVC`'s `tol`.
const TOLERANCE: f32 = 1e-4;

/// The passes allowed (`max_iter` in the benchmark's scikit-learn runs).
const MAX_EPOCHS: usize = 5000;

/// A paper of the collection: its vector and its text (title, ". ", then
/// abstract, as the benchmark's scikit-learn runs build it).
#[derive(Clone, Copy)]
pub struct Paper<'a> {
    /// The MiniLM vector (unit length).
    pub vector: &'a [f32],
    /// The text the TF-IDF reads.
    pub text: &'a str,
}

/// A trained replica: the TF-IDF and the SVM over [vector, TF-IDF].
pub struct Replica {
    tfidf: Tfidf,
    linear: svm::Linear,
    words: Vec<f32>,
}

impl Replica {
    /// Fits the TF-IDF on `collection` and trains the papers at `liked`
    /// (positions in it) against every other paper of it.
    pub fn train(collection: &[Paper], liked: &[usize]) -> Replica {
        let texts: Vec<&str> = collection.iter().map(|p| p.text).collect();
        let tfidf = Tfidf::fit(&texts, Settings::default());
        let rows: Vec<Vec<(u32, f32)>> = texts.iter().map(|t| tfidf.row(t)).collect();
        let is_liked: std::collections::HashSet<usize> = liked.iter().copied().collect();
        let n = collection.len() as f32;
        let positives = is_liked.len().max(1) as f32;
        let negatives = (collection.len() - is_liked.len()).max(1) as f32;
        // scikit-learn's balanced weights: n / (2 n_class).
        let (c_liked, c_other) = (COST * n / (2.0 * positives), COST * n / (2.0 * negatives));
        let examples: Vec<Example> = collection
            .iter()
            .zip(&rows)
            .enumerate()
            .map(|(i, (paper, row))| {
                let liked = is_liked.contains(&i);
                Example {
                    x: paper.vector,
                    sparse: row,
                    y: if liked { 1.0 } else { -1.0 },
                    c: if liked { c_liked } else { c_other },
                }
            })
            .collect();
        let (linear, words) = svm::train_with(
            &examples,
            tfidf.terms(),
            Loss::SquaredHinge,
            TOLERANCE,
            MAX_EPOCHS,
        );
        Replica {
            tfidf,
            linear,
            words,
        }
    }

    /// How many words and word pairs the TF-IDF kept.
    pub fn terms(&self) -> usize {
        self.tfidf.terms()
    }

    /// The decision value of `paper` (`decision_function` in
    /// scikit-learn): higher is more like the liked papers.
    pub fn decision(&self, paper: &Paper) -> f32 {
        self.linear.score(paper.vector)
            + self
                .tfidf
                .row(paper.text)
                .iter()
                .map(|&(t, x)| self.words[t as usize] * x)
                .sum::<f32>()
    }
}
