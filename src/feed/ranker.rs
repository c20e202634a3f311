//! Rankers: how a tag's examples (liked papers, papers marked not
//! interested, and the rest of the collection as weak negatives) become a
//! score for a new paper. Every ranker compared on the feed benchmark is
//! here, so the benchmark and `papers feed` run the same code; [`CHOSEN`]
//! is the one the benchmark picked (`cargo bench --bench feed`).

use super::authors::{self, Tally};
use super::batch::Batch;
use super::calibration::Calibration;
use super::classifier::{classify, fit, CLASSIFIER};
pub use super::examples::{ExampleWords, Examples};
use super::svm::Linear;
use super::words::{self, Words};

/// A way to score new papers from a tag's examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ranker {
    /// Cosine with the mean of the liked vectors.
    MeanLiked,
    /// Cosine with mean liked minus mean disliked (Rocchio without a query).
    MeanDifference,
    /// The highest cosine with any liked paper.
    NearestLiked,
    /// A linear SVM, liked against disliked.
    LikedSvm,
    /// arxiv-sanity's classifier: a linear SVM, liked against every other
    /// paper of the collection (balanced classes, C = 0.01).
    ArxivSanity,
    /// Rocchio with weak negatives: the cosine with mean liked minus 0.75
    /// mean disliked minus 0.2 mean of the collection.
    Rocchio,
    /// [`Ranker::Rocchio`] over the embeddings plus half as much of the
    /// same over the papers' TF-IDF word vectors ([`super::words`]: mean
    /// liked minus 0.5 mean disliked minus 0.5 the collection's), each
    /// score standardised over the papers ranked.
    Profile,
    /// A linear SVM, liked against the papers marked not interested and the
    /// collection (balanced classes, C = 0.02), over each paper's vector at
    /// half weight beside its words and word pairs ([`super::words`]); its
    /// standardised score plus the [`super::authors`] the tag shares with
    /// the paper. The best on the feed's cross-validation over categories
    /// (`bench/feed_cv.py`).
    Classifier,
}

/// The ranker `papers feed` uses: the best on the feed's cross-validation.
pub const CHOSEN: Ranker = Ranker::Classifier;

impl Ranker {
    /// Every ranker, in the benchmark's order.
    pub const ALL: [Ranker; 8] = [
        Ranker::MeanLiked,
        Ranker::MeanDifference,
        Ranker::NearestLiked,
        Ranker::LikedSvm,
        Ranker::ArxivSanity,
        Ranker::Rocchio,
        Ranker::Profile,
        Ranker::Classifier,
    ];

    /// Whether it reads the papers' words ([`Examples::words`]).
    pub fn reads_words(self) -> bool {
        matches!(self, Ranker::Profile | Ranker::Classifier)
    }

    /// Whether it reads each paper of the collection's sample's words
    /// ([`ExampleWords::each_background`]), not only their mean.
    pub fn reads_each_background(self) -> bool {
        self == Ranker::Classifier
    }

    /// Whether it reads the papers' authors ([`Examples::authors`]).
    pub fn reads_authors(self) -> bool {
        self == Ranker::Classifier
    }

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Ranker::MeanLiked => "mean of liked",
            Ranker::MeanDifference => "mean liked - mean disliked",
            Ranker::NearestLiked => "nearest liked",
            Ranker::LikedSvm => "SVM liked vs disliked",
            Ranker::ArxivSanity => "SVM liked vs collection (arxiv-sanity)",
            Ranker::Rocchio => "Rocchio with weak negatives",
            Ranker::Profile => "Rocchio, meaning + words",
            Ranker::Classifier => "SVM [meaning / 2, words] + shared authors (chosen)",
        }
    }
}

/// What training learnt, for [`Trained::with`] to take instead of
/// training again (and for [`super::cache`] to keep): a classifier or a
/// direction, and the word side's direction for rankers that read words.
#[derive(Clone, Debug, PartialEq)]
pub struct Learnt {
    /// The SVM rankers' classifier, or the direction (bias 0) of the
    /// Rocchio rankers.
    pub linear: Linear,
    /// [`Ranker::Profile`]'s direction over words, or
    /// [`Ranker::Classifier`]'s weights of words.
    pub terms: Option<Words>,
    /// The authors' tally, for rankers that read authors.
    pub authors: Option<Tally>,
    /// [`Ranker::Classifier`]'s scale: how its scores become probabilities.
    pub calibration: Option<Calibration>,
}

/// A trained ranker.
pub struct Trained {
    ranker: Ranker,
    direction: Vec<f32>,
    terms: Option<Words>,
    linear: Option<Linear>,
    authors: Tally,
    calibration: Option<Calibration>,
    liked: Vec<Vec<f32>>,
}

/// [`Ranker::Rocchio`]'s weights of the disliked papers' and the
/// collection's means (chosen on the benchmark's tuning categories).
const ROCCHIO: (f32, f32) = (0.75, 0.2);

/// The same weights on the word side of [`Ranker::Profile`], and the
/// weight of its standardised word score beside the meaning's.
const WORDS: (f32, f32, f32) = (0.5, 0.5, 0.5);

impl Trained {
    /// Trains `ranker` on `examples` (at least one liked paper).
    pub fn new(ranker: Ranker, examples: &Examples) -> Trained {
        Trained::with(ranker, examples, None)
    }

    /// [`Trained::new`], taking what an earlier training of the same
    /// examples learnt ([`Trained::into_learnt`]) when given; then only the
    /// examples' liked vectors are read (to say which is nearest).
    pub fn with(ranker: Ranker, examples: &Examples, trained: Option<Learnt>) -> Trained {
        let liked: Vec<Vec<f32>> = examples.liked.iter().map(|v| v.to_vec()).collect();
        let mut calibration = None;
        let (direction, terms, linear, authors) = match (ranker, trained) {
            (Ranker::Rocchio | Ranker::Profile, Some(learnt)) => {
                (learnt.linear.w, learnt.terms, None, Tally::default())
            }
            (Ranker::LikedSvm | Ranker::ArxivSanity, Some(learnt)) => {
                (Vec::new(), None, Some(learnt.linear), Tally::default())
            }
            (Ranker::Classifier, Some(learnt)) => {
                calibration = learnt.calibration;
                (
                    Vec::new(),
                    learnt.terms,
                    Some(learnt.linear),
                    learnt.authors.unwrap_or_default(),
                )
            }
            (Ranker::Classifier, None) => {
                let (linear, terms, fitted) = classify(examples);
                calibration = Some(fitted);
                (Vec::new(), terms, Some(linear), examples.authors.clone())
            }
            (ranker, _) => {
                let (direction, terms, linear) = Trained::train(ranker, examples);
                (direction, terms, linear, Tally::default())
            }
        };
        Trained {
            ranker,
            direction,
            terms,
            linear,
            authors,
            calibration,
            liked,
        }
    }

    /// Trains from the examples: a direction over vectors, one over
    /// words, or a classifier, as the ranker has.
    fn train(ranker: Ranker, examples: &Examples) -> (Vec<f32>, Option<Words>, Option<Linear>) {
        let mut direction = Vec::new();
        let mut terms = None;
        let mut linear = None;
        match ranker {
            Ranker::MeanLiked => direction = mean(&examples.liked),
            Ranker::MeanDifference => {
                direction = mean(&examples.liked);
                if !examples.disliked.is_empty() {
                    for (d, n) in direction.iter_mut().zip(mean(&examples.disliked)) {
                        *d -= n;
                    }
                }
            }
            Ranker::NearestLiked | Ranker::Classifier => {}
            Ranker::LikedSvm => {
                linear = Some(fit(&examples.liked, &[(&examples.disliked, 1.0)]));
            }
            Ranker::ArxivSanity => {
                let mut rest = examples.disliked.clone();
                rest.extend(&examples.background);
                linear = Some(fit(&examples.liked, &[(&rest, 1.0)]));
            }
            Ranker::Rocchio | Ranker::Profile => {
                // Without papers marked not interested, the collection
                // stands in for them.
                let unliked = if examples.disliked.is_empty() {
                    &examples.background
                } else {
                    &examples.disliked
                };
                direction = mean(&examples.liked);
                let (a, b) = ROCCHIO;
                for ((d, n), g) in direction
                    .iter_mut()
                    .zip(mean(unliked))
                    .zip(mean(&examples.background))
                {
                    *d -= a * n + b * g;
                }
                if let (Ranker::Profile, Some(w)) = (ranker, &examples.words) {
                    let mut t = words::mean(&w.liked);
                    let unliked: &[&Words] = if w.disliked.is_empty() {
                        std::slice::from_ref(&w.background)
                    } else {
                        &w.disliked
                    };
                    let (a, b, _) = WORDS;
                    words::add(&mut t, &words::mean(unliked), -a);
                    words::add(&mut t, w.background, -b);
                    terms = Some(t);
                }
            }
        }
        (direction, terms, linear)
    }

    /// What training learnt, for [`Trained::with`] to take instead of
    /// training again: the classifier of the SVM rankers, the directions
    /// of the Rocchio rankers; `None` for the others (nothing to save).
    pub fn into_learnt(self) -> Option<Learnt> {
        match self.ranker {
            Ranker::Rocchio | Ranker::Profile => Some(Learnt {
                linear: Linear {
                    w: self.direction,
                    b: 0.0,
                },
                terms: self.terms,
                authors: None,
                calibration: None,
            }),
            Ranker::Classifier => self.linear.map(|linear| Learnt {
                linear,
                terms: self.terms,
                authors: Some(self.authors),
                calibration: self.calibration,
            }),
            _ => self.linear.map(|linear| Learnt {
                linear,
                terms: None,
                authors: None,
                calibration: None,
            }),
        }
    }

    /// Scores `papers` (unit vectors, and their words and authors for
    /// rankers that read them); higher is better. Scores compare within
    /// one call only (some rankers standardise over the batch), except
    /// [`Ranker::Classifier`]'s, standardised over the collection's sample
    /// when it was trained ([`Calibration::standardise`]).
    pub fn score(
        &self,
        papers: &[&[f32]],
        words: Option<&Batch>,
        authors: Option<&[Vec<String>]>,
    ) -> Vec<f32> {
        match self.ranker {
            Ranker::MeanLiked | Ranker::MeanDifference | Ranker::Rocchio => papers
                .iter()
                .map(|v| crate::vector::dot(&self.direction, v))
                .collect(),
            Ranker::NearestLiked => papers.iter().map(|v| self.nearest(v).1).collect(),
            Ranker::LikedSvm | Ranker::ArxivSanity => {
                let linear = self.linear.as_ref().expect("trained");
                papers.iter().map(|v| linear.score(v)).collect()
            }
            Ranker::Profile => {
                let meaning = standardise(
                    papers
                        .iter()
                        .map(|v| crate::vector::dot(&self.direction, v))
                        .collect(),
                );
                match (&self.terms, words) {
                    (Some(terms), Some(words)) => {
                        let lexical = standardise(words.dots(terms));
                        let weight = WORDS.2;
                        meaning
                            .iter()
                            .zip(&lexical)
                            .map(|(a, b)| a + weight * b)
                            .collect()
                    }
                    _ => meaning,
                }
            }
            Ranker::Classifier => {
                let linear = self.linear.as_ref().expect("trained");
                let mut scores: Vec<f32> = papers.iter().map(|v| linear.score(v)).collect();
                if let (Some(terms), Some(words)) = (&self.terms, words) {
                    for (s, w) in scores.iter_mut().zip(words.dots(terms)) {
                        *s += w;
                    }
                }
                let mut scores = match &self.calibration {
                    Some(c) => scores.into_iter().map(|s| c.standardise(s)).collect(),
                    None => standardise(scores),
                };
                if let Some(authors) = authors {
                    for (s, a) in scores.iter_mut().zip(authors) {
                        *s += CLASSIFIER.2 * authors::score(&self.authors, a);
                    }
                }
                scores
            }
        }
    }

    /// How its scores become probabilities, for a calibrated ranker.
    pub fn calibration(&self) -> Option<Calibration> {
        self.calibration
    }

    /// [`Trained::score`] as probabilities that the reader wants each
    /// paper ([`Calibration::probability`]), for a calibrated ranker.
    pub fn probabilities(
        &self,
        papers: &[&[f32]],
        words: Option<&Batch>,
        authors: Option<&[Vec<String>]>,
    ) -> Option<Vec<f32>> {
        let calibration = self.calibration?;
        let scores = self.score(papers, words, authors);
        Some(
            scores
                .into_iter()
                .map(|z| calibration.probability(z))
                .collect(),
        )
    }

    /// The liked paper closest to `v` (its position among the liked) and
    /// the cosine: why a paper ranks high.
    pub fn nearest(&self, v: &[f32]) -> (usize, f32) {
        self.liked
            .iter()
            .enumerate()
            .map(|(i, l)| (i, crate::vector::dot(l, v)))
            .fold(
                (0, f32::NEG_INFINITY),
                |best, x| {
                    if x.1 > best.1 {
                        x
                    } else {
                        best
                    }
                },
            )
    }
}

/// How many papers of the collection a profile takes as weak negatives.
/// On the feed's cross-validation the classifier gained 0.0076 MAP on the
/// tuning categories with 5,000 instead of 2,000 (0.4039 against 0.3963;
/// kept aside 0.6389 and 0.6388). Training ten tags then takes about
/// 0.8 s on two cores, paid by the write that made them stale (a change of
/// a tag's marks, a quarter of growth of the collection: [`super::cache`]).
pub const BACKGROUND: usize = 5000;

/// Up to [`BACKGROUND`] of `all`, evenly spaced: the weak negatives.
pub fn background_sample<T: Copy>(all: &[T]) -> Vec<T> {
    if all.len() <= BACKGROUND {
        return all.to_vec();
    }
    (0..BACKGROUND)
        .map(|i| all[i * all.len() / BACKGROUND])
        .collect()
}

/// The mean of `vectors`.
fn mean(vectors: &[&[f32]]) -> Vec<f32> {
    let d = vectors.first().map_or(0, |v| v.len());
    let mut sum = vec![0f32; d];
    for v in vectors {
        for (s, x) in sum.iter_mut().zip(v.iter()) {
            *s += x;
        }
    }
    let n = vectors.len().max(1) as f32;
    sum.iter_mut().for_each(|s| *s /= n);
    sum
}

/// Scores as z-scores over the batch (all zero when they do not vary).
pub fn standardise(mut scores: Vec<f32>) -> Vec<f32> {
    let n = scores.len().max(1) as f32;
    let mean = scores.iter().sum::<f32>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f32>() / n).sqrt();
    for s in &mut scores {
        *s = if sd > 0.0 { (*s - mean) / sd } else { 0.0 };
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors around `centre` (one of 4 axes in 8 dimensions).
    fn around(centre: usize, n: usize, seed: u32) -> Vec<Vec<f32>> {
        (0..n)
            .map(|i| {
                let mut v: Vec<f32> = (0..8)
                    .map(|j| (((i as u32 * 31 + j * 17 + seed) % 13) as f32 - 6.0) * 0.03)
                    .collect();
                v[centre] += 1.0;
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / norm).collect()
            })
            .collect()
    }

    #[test]
    fn every_ranker_puts_the_liked_topic_first() {
        let liked = around(0, 5, 1);
        let disliked = around(1, 5, 2);
        let background: Vec<Vec<f32>> = (1..4).flat_map(|c| around(c, 20, 3)).collect();
        let examples = Examples {
            liked: liked.iter().map(Vec::as_slice).collect(),
            disliked: disliked.iter().map(Vec::as_slice).collect(),
            background: background.iter().map(Vec::as_slice).collect(),
            words: None,
            authors: Default::default(),
        };
        // Three new papers on the liked topic among nine on the others.
        let mut new = around(0, 3, 7);
        new.extend((1..4).flat_map(|c| around(c, 3, 9)));
        let refs: Vec<&[f32]> = new.iter().map(Vec::as_slice).collect();
        for ranker in Ranker::ALL {
            let scores = Trained::new(ranker, &examples).score(&refs, None, None);
            let mut order: Vec<usize> = (0..scores.len()).collect();
            order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            let mut top: Vec<usize> = order[..3].to_vec();
            top.sort_unstable();
            assert_eq!(top, [0, 1, 2], "{}: {scores:?}", ranker.name());
        }
    }

    #[test]
    fn nearest_names_the_closest_liked_paper() {
        let liked = [around(0, 1, 1).remove(0), around(2, 1, 1).remove(0)];
        let examples = Examples {
            liked: liked.iter().map(Vec::as_slice).collect(),
            ..Default::default()
        };
        let trained = Trained::new(CHOSEN, &examples);
        let (i, cosine) = trained.nearest(&around(2, 1, 5)[0]);
        assert_eq!(i, 1);
        assert!(cosine > 0.9, "{cosine}");
    }

    // The classifier, trained through the ranker.
    mod classifier {
        use super::super::super::authors;
        use super::super::super::batch::Batch;
        use super::super::super::words::Words;
        use super::super::{ExampleWords, Examples, Ranker, Trained};

        fn words(terms: &[&str]) -> Words {
            let w = 1.0 / (terms.len() as f32).sqrt();
            terms.iter().map(|t| (t.to_string(), w)).collect()
        }

        fn names(list: &[&str]) -> Vec<String> {
            list.iter().map(|s| s.to_string()).collect()
        }

        /// Every vector the same: what ranks is the words a tag's papers
        /// share, then the authors.
        #[test]
        fn the_classifier_learns_the_tags_words_and_authors() {
            let v = [0.6f32, 0.8];
            let liked_words: Vec<Words> = (0..4)
                .map(|i| words(&["sql", "queri", &format!("topic{i}")]))
                .collect();
            let background_words: Vec<Words> = (0..40)
                .map(|i| words(&["imag", "diffus", &format!("other{i}")]))
                .collect();
            let batch = Batch::of(&background_words.iter().collect::<Vec<_>>());
            let mean = Words::default();
            let liked_authors = [names(&["Ada Lovelace"]), names(&["Ada Lovelace", "Bo"])];
            let examples = Examples {
                liked: vec![&v; 4],
                disliked: Vec::new(),
                background: vec![&v; 40],
                words: Some(ExampleWords {
                    liked: liked_words.iter().collect(),
                    disliked: Vec::new(),
                    background: &mean,
                    each_background: Some(&batch),
                }),
                authors: authors::tally(&[&liked_authors[0], &liked_authors[1]], &[]),
            };
            let trained = Trained::new(Ranker::Classifier, &examples);
            let new_words = [
                words(&["imag", "diffus", "new"]),
                words(&["sql", "queri", "new"]),
                words(&["imag", "diffus", "again"]),
            ];
            let by = [names(&["Cy"]), names(&["Dee"]), names(&["Ada Lovelace"])];
            let scores = trained.score(&[&v, &v, &v], Some(&Batch::new(&new_words)), Some(&by));
            assert!(
                scores[1] > scores[0],
                "the tag's words rank first: {scores:?}"
            );
            assert!(
                scores[2] > scores[0],
                "a liked author lifts a paper: {scores:?}"
            );
            // What training learnt, read back, ranks the same.
            let again = Trained::with(Ranker::Classifier, &examples, trained.into_learnt());
            assert_eq!(
                again.score(&[&v, &v, &v], Some(&Batch::new(&new_words)), Some(&by)),
                scores
            );
        }
    }
}
