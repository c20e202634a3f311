//! Training the rankers that are classifiers (`LikedSvm`, `ArxivSanity`
//! and `Classifier` of [`super::ranker::Ranker`]): which papers are
//! examples, with what cost and which features, for [`super::svm`] to
//! learn from. Classes are balanced as scikit-learn's
//! `class_weight="balanced"` does (n / (2 n_class)), so a tag with 20
//! liked papers against 2,000 of the collection is not swamped.

use super::batch::Batch;
use super::calibration::Calibration;
use super::examples::Examples;
use super::svm::{self, Example, Linear};
use super::words::Words;

/// The SVM's cost.
const COST: f32 = 0.01;

/// [`super::ranker::Ranker::Classifier`]'s cost, the weight of a paper's vector beside
/// its words (both unit vectors), and the weight of the shared authors
/// beside the standardised score: chosen on the 20 tuning categories of
/// the feed's cross-validation (C in 0.01-0.02, the scale in 0.35-1, the
/// authors in 0.5-1.5).
pub(super) const CLASSIFIER: (f32, f32, f32) = (0.02, 0.5, 1.0);

/// When [`super::ranker::Ranker::Classifier`]'s training stops (the
/// spread of the projected gradient): on the feed's cross-validation 1e-2
/// ranked as 1e-3 did (MAP equal to 4 decimals) in two thirds of the time.
const TOLERANCE: f32 = 1e-2;

/// How many word weights [`super::ranker::Ranker::Classifier`] keeps (the
/// largest): the rest, words of one or two papers of the collection, weigh
/// next to nothing, and a tag's weights are read back on every feed. On the
/// feed's cross-validation, 5,000 ranked as every weight did (0.4038 and
/// 0.4039 MAP on the tuning categories, 0.6391 and 0.6389 kept aside).
const TERMS_KEPT: usize = 5_000;

/// Trains an SVM of `liked` against the negatives, each group weighted;
/// classes are balanced as scikit-learn's `class_weight="balanced"` does
/// (n / (2 n_class)), with the negatives' total weight counted.
pub(super) fn fit(liked: &[&[f32]], negatives: &[(&Vec<&[f32]>, f32)]) -> Linear {
    let negative_mass: f32 = negatives.iter().map(|(v, w)| v.len() as f32 * w).sum();
    let (positive_c, negative_c) = balanced(COST, liked.len() as f32, negative_mass);
    let mut examples: Vec<Example> = liked
        .iter()
        .map(|x| Example {
            x,
            sparse: &[],
            y: 1.0,
            c: positive_c,
        })
        .collect();
    for (group, weight) in negatives {
        examples.extend(group.iter().map(|x| Example {
            x,
            sparse: &[],
            y: -1.0,
            c: negative_c * weight,
        }));
    }
    svm::train(&examples, 1e-3, 200)
}

/// The costs of a positive and of a negative example: `cost` times the
/// class weight `n / (2 n_class)`.
fn balanced(cost: f32, positives: f32, negatives: f32) -> (f32, f32) {
    let total = positives + negatives;
    (
        cost * total / (2.0 * positives.max(1.0)),
        cost * total / (2.0 * negatives.max(1e-6)),
    )
}

/// How many folds the calibration's cross-validation makes (fewer when a
/// tag has fewer liked papers): each costs a training, paid by the write.
const FOLDS: usize = 3;

/// Trains [`super::ranker::Ranker::Classifier`]: liked against disliked and background,
/// balanced, over [vector × scale, words]. The dense weights come back
/// scaled, so they apply to unit vectors as they are. The tag's
/// [`Calibration`] is fitted on out-of-fold scores of the same examples.
pub(super) fn classify(examples: &Examples) -> (Linear, Option<Words>, Calibration) {
    let (cost, scale, _) = CLASSIFIER;
    let dense: Vec<Vec<f32>> = examples
        .liked
        .iter()
        .chain(&examples.disliked)
        .chain(&examples.background)
        .map(|v| v.iter().map(|x| scale * x).collect())
        .collect();
    let n_liked = examples.liked.len();
    let n_own = n_liked + examples.disliked.len();
    // The tag's own papers' words numbered after the sample's (numbered
    // once for every tag).
    let batches = match &examples.words {
        Some(w)
            if w.liked.len() + w.disliked.len() == n_own
                && w.each_background
                    .is_some_and(|b| b.len() == examples.background.len()) =>
        {
            let shared = w.each_background.expect("checked");
            let own: Vec<&Words> = w.liked.iter().chain(&w.disliked).copied().collect();
            Some((Batch::after(Some(shared), &own), shared))
        }
        _ => None,
    };
    let (positive_c, negative_c) = balanced(cost, n_liked as f32, (dense.len() - n_liked) as f32);
    let training: Vec<Example> = dense
        .iter()
        .enumerate()
        .map(|(i, x)| Example {
            x,
            sparse: match &batches {
                Some((own, _)) if i < n_own => own.row(i),
                Some((_, shared)) => shared.row(i - n_own),
                None => &[],
            },
            y: if i < n_liked { 1.0 } else { -1.0 },
            c: if i < n_liked { positive_c } else { negative_c },
        })
        .collect();
    let terms = batches.as_ref().map_or(0, |(own, _)| own.terms());
    let (mut linear, weights) = svm::train_sparse(&training, terms, TOLERANCE, 200);
    let (centre, spread) = spread(&training[n_own..], &linear, &weights);
    let (liked, others) = out_of_fold(&training, n_liked, n_own, terms);
    let calibration = Calibration::fit(&liked, &others, centre, spread);
    linear.w.iter_mut().for_each(|w| *w *= scale);
    let terms = batches.map(|(own, shared)| Batch::to_words(&[shared, &own], &weights, TERMS_KEPT));
    (linear, terms, calibration)
}

/// The raw score of a training example.
fn raw(e: &Example, linear: &Linear, weights: &[f32]) -> f32 {
    linear.score(e.x)
        + e.sparse
            .iter()
            .map(|&(t, x)| weights[t as usize] * x)
            .sum::<f32>()
}

/// The mean and standard deviation of the raw score over `sample`.
fn spread(sample: &[Example], linear: &Linear, weights: &[f32]) -> (f32, f32) {
    let scores: Vec<f32> = sample.iter().map(|e| raw(e, linear, weights)).collect();
    let n = scores.len().max(1) as f32;
    let mean = scores.iter().sum::<f32>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f32>() / n).sqrt();
    (mean, if sd > 1e-6 { sd } else { 1.0 })
}

/// Every example's standardised score by a classifier trained without
/// it ([`FOLDS`] folds, each group dealt round them), the liked papers'
/// apart from the others'. Nothing when there are under two liked papers.
fn out_of_fold(
    training: &[Example],
    n_liked: usize,
    n_own: usize,
    terms: usize,
) -> (Vec<f32>, Vec<f32>) {
    let folds = FOLDS.min(n_liked);
    if folds < 2 {
        return (Vec::new(), Vec::new());
    }
    // Within each group (liked, disliked, collection) by position.
    let fold_of = |i: usize| match i {
        i if i < n_liked => i % folds,
        i if i < n_own => (i - n_liked) % folds,
        i => (i - n_own) % folds,
    };
    let mut z = vec![0f32; training.len()];
    for fold in 0..folds {
        let kept: Vec<Example> = training
            .iter()
            .enumerate()
            .filter(|(i, _)| fold_of(*i) != fold)
            .map(|(_, e)| *e)
            .collect();
        let (linear, weights) = svm::train_sparse(&kept, terms, TOLERANCE, 200);
        // Standardised over its own collection's sample, as the final
        // classifier is.
        let sample: Vec<Example> = training[n_own..]
            .iter()
            .enumerate()
            .filter(|(i, _)| fold_of(i + n_own) != fold)
            .map(|(_, e)| *e)
            .collect();
        let (centre, spread) = spread(&sample, &linear, &weights);
        for (i, e) in training.iter().enumerate() {
            if fold_of(i) == fold {
                z[i] = (raw(e, &linear, &weights) - centre) / spread;
            }
        }
    }
    let others = z.split_off(n_liked);
    (z, others)
}
