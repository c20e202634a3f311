//! The feed's score on an absolute scale: the probability that the reader
//! wants a paper, learnt per tag from the tag's own examples, so that a
//! paper scores the same whatever else arrived that day, and a day with
//! nothing close reads low.
//!
//! Training a tag (`feed/classifier.rs`) also scores each of its
//! examples with a classifier that did not see it (k-fold
//! cross-validation over the liked papers, those marked not interested and
//! the collection's sample). Those out-of-fold scores and the examples'
//! labels fit a logistic curve (Platt scaling): `g(z) = σ(a + b·z)`, the
//! probability that a paper scoring `z` is one the reader tagged.
//!
//! The collection's sample is unlabelled, not disliked: it holds papers
//! the reader would like but has not tagged. So `g` is scaled as Elkan and
//! Noto (KDD 2008) scale a classifier learnt from positive and unlabelled
//! examples, where `c` is the mean of `g` over the liked papers' own
//! out-of-fold scores (the share of wanted papers the reader tagged): as a
//! change of prior (Saerens et al., 2002), the odds of `g` over `c`,
//! `p(z) = σ(a + b·z - ln c)`, clipped to [`MOST`]. (Their `g / c` assumes
//! the classes do not overlap; on the feed benchmark it read a paper as
//! wanted twice as often as it was.)
//!
//! "Nothing today" is the tag's own too: a day none of whose papers
//! scores as high as the lower quarter of the tag's liked papers scored
//! out of fold ([`Calibration::quiet`]).
//!
//! Every number comes from the tag's own examples; only a tag with a
//! single liked paper, which cannot be cross-validated, takes
//! [`Calibration::UNFITTED`].

use crate::verdict::{Verdict, STRONG};

/// The highest probability the feed states.
pub const MOST: f32 = 0.99;

/// A paper scoring under this is not close to its tag (`"match"`:
/// `none`): not fitted, the floor of "weak".
pub const CLOSE: f32 = 0.2;

/// Which of the liked papers' out-of-fold probabilities a day's best paper
/// must reach not to be "nothing today": the lower quartile (not fitted:
/// "as close as all but the least typical quarter of what you liked").
const QUIET_QUANTILE: f32 = 0.25;

/// A paper's verdict for its tag, from its probability: `strong` from
/// [`STRONG`] (more likely wanted than not), `weak` from [`CLOSE`],
/// `none` under it.
pub fn verdict(probability: f32) -> Verdict {
    if probability >= STRONG {
        Verdict::Strong
    } else if probability >= CLOSE {
        Verdict::Weak
    } else {
        Verdict::None
    }
}

/// How a tag's raw scores become probabilities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// The mean of the classifier's raw score over the collection's
    /// sample: a raw score is first standardised, `z = (raw - centre) /
    /// spread`, so that the authors' term adds on a known scale.
    pub centre: f32,
    /// The raw score's standard deviation over the collection's sample.
    pub spread: f32,
    /// Platt's intercept `a`.
    pub intercept: f32,
    /// Platt's slope `b`.
    pub slope: f32,
    /// Elkan and Noto's `c`: the mean of `g` over the liked papers.
    pub labelled: f32,
    /// A day whose best paper scores under this has "nothing today" for
    /// the tag: the lower quartile of the liked papers' out-of-fold
    /// probabilities ([`CLOSE`] for a tag too small to cross-validate).
    pub quiet: f32,
}

impl Calibration {
    /// For a tag too small to cross-validate (one liked paper): the
    /// median of the tags' own fits on the feed benchmark's tuning
    /// categories (`cargo bench --bench feed`).
    pub const UNFITTED: Calibration = Calibration {
        centre: 0.0,
        spread: 1.0,
        intercept: -6.41,
        slope: 1.0,
        labelled: 0.048,
        quiet: CLOSE,
    };

    /// The standardised score of a raw one.
    pub fn standardise(&self, raw: f32) -> f32 {
        (raw - self.centre) / self.spread
    }

    /// The probability that a paper of standardised score `z` is wanted.
    pub fn probability(&self, z: f32) -> f32 {
        sigmoid(self.intercept + self.slope * z - self.labelled.ln()).min(MOST)
    }

    /// As stored: `[centre, spread, intercept, slope, labelled, quiet]`.
    pub fn to_array(self) -> [f32; 6] {
        [
            self.centre,
            self.spread,
            self.intercept,
            self.slope,
            self.labelled,
            self.quiet,
        ]
    }

    /// Read back from [`Calibration::to_array`]; `None` when a value
    /// could not have been fitted (a spread or `c` not positive).
    pub fn from_array(a: [f32; 6]) -> Option<Calibration> {
        let [centre, spread, intercept, slope, labelled, quiet] = a;
        (a.iter().all(|x| x.is_finite()) && spread > 0.0 && labelled > 0.0 && labelled <= 1.0)
            .then_some(Calibration {
                centre,
                spread,
                intercept,
                slope,
                labelled,
                quiet,
            })
    }

    /// Fits the curve to out-of-fold standardised scores: `liked` (the
    /// tag's liked papers') against `others` (the papers marked not
    /// interested and the collection's sample), keeping `centre` and
    /// `spread` (the final classifier's).
    pub fn fit(liked: &[f32], others: &[f32], centre: f32, spread: f32) -> Calibration {
        if liked.len() < 2 || others.is_empty() {
            return Calibration {
                centre,
                spread,
                ..Calibration::UNFITTED
            };
        }
        let (intercept, slope) = platt(liked, others);
        let labelled = liked
            .iter()
            .map(|&z| sigmoid(intercept + slope * z))
            .sum::<f32>()
            / liked.len() as f32;
        let mut fitted = Calibration {
            centre,
            spread,
            intercept,
            slope,
            labelled: labelled.clamp(1e-4, 1.0),
            quiet: CLOSE,
        };
        let mut own: Vec<f32> = liked.iter().map(|&z| fitted.probability(z)).collect();
        own.sort_by(f32::total_cmp);
        fitted.quiet = own[((own.len() - 1) as f32 * QUIET_QUANTILE) as usize];
        fitted
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Platt's fit of `σ(a + b·z)` to positives and negatives, with his
/// smoothed targets (`(n+ + 1) / (n+ + 2)` and `1 / (n- + 2)`, so that a
/// separable set does not drive the slope to infinity), by Newton's method
/// on the log-loss.
fn platt(positives: &[f32], negatives: &[f32]) -> (f32, f32) {
    let hi = (positives.len() as f64 + 1.0) / (positives.len() as f64 + 2.0);
    let lo = 1.0 / (negatives.len() as f64 + 2.0);
    let data: Vec<(f64, f64)> = positives
        .iter()
        .map(|&z| (z as f64, hi))
        .chain(negatives.iter().map(|&z| (z as f64, lo)))
        .collect();
    let prior = (positives.len() as f64 + 1.0) / (negatives.len() as f64 + 2.0);
    let (mut a, mut b) = (prior.ln(), 0.0f64);
    // The log-loss, computed stably: log(1 + e^-f) + (1 - t) f.
    let loss = |a: f64, b: f64| -> f64 {
        data.iter()
            .map(|&(z, t)| {
                let f = a + b * z;
                if f >= 0.0 {
                    (-f).exp().ln_1p() + (1.0 - t) * f
                } else {
                    f.exp().ln_1p() - t * f
                }
            })
            .sum()
    };
    let mut current = loss(a, b);
    for _ in 0..100 {
        // Gradient and Hessian, with a tiny ridge.
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (0.0, 0.0, 1e-12, 0.0, 1e-12);
        for &(z, t) in &data {
            let p = 1.0 / (1.0 + (-(a + b * z)).exp());
            let w = p * (1.0 - p);
            ga += p - t;
            gb += (p - t) * z;
            haa += w;
            hab += w * z;
            hbb += w * z * z;
        }
        if ga.abs() < 1e-7 && gb.abs() < 1e-7 {
            break;
        }
        let det = haa * hbb - hab * hab;
        let (da, db) = ((hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det);
        // Backtracking: the largest step of 1, 1/2, 1/4... that lowers
        // the loss (Lin, Lin and Weng's fix of Platt's method).
        let mut step = 1.0;
        while step > 1e-10 {
            let next = loss(a - step * da, b - step * db);
            if next <= current - 1e-4 * step * (ga * da + gb * db) {
                a -= step * da;
                b -= step * db;
                current = next;
                break;
            }
            step /= 2.0;
        }
        if step <= 1e-10 {
            break;
        }
    }
    (a as f32, b as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probability of being tagged, before the change of prior.
    fn platt_g(c: &Calibration, z: f32) -> f32 {
        sigmoid(c.intercept + c.slope * z)
    }

    #[test]
    fn platt_recovers_a_known_curve() {
        // Scores on a grid, a share of each labelled as σ(-1 + 2z) says.
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for i in 0..41 {
            let z = -2.0 + i as f32 * 0.1;
            let p = sigmoid(-1.0 + 2.0 * z);
            let n_pos = (p * 200.0).round() as usize;
            pos.extend(std::iter::repeat_n(z, n_pos));
            neg.extend(std::iter::repeat_n(z, 200 - n_pos));
        }
        let (a, b) = platt(&pos, &neg);
        assert!((a + 1.0).abs() < 0.05 && (b - 2.0).abs() < 0.05, "{a} {b}");
    }

    #[test]
    fn positive_and_unlabelled_scaling_lifts_what_looks_like_the_liked() {
        // 10 liked around z = 3; the collection: 1,000 around 0 and 40
        // untagged papers like the liked ones.
        let liked: Vec<f32> = (0..10).map(|i| 3.0 + (i as f32 - 4.5) * 0.1).collect();
        let mut others: Vec<f32> = (0..1000).map(|i| (i as f32 / 999.0 - 0.5) * 2.0).collect();
        others.extend((0..40).map(|i| 3.0 + (i as f32 - 19.5) * 0.02));
        let c = Calibration::fit(&liked, &others, 0.0, 1.0);
        // A fifth of the papers like the liked ones were tagged: g is
        // about 0.2 there; the odds shifted by c make the liked region
        // more likely wanted than not, and the collection's bulk unwanted.
        assert!((c.labelled - 0.2).abs() < 0.08, "{c:?}");
        let (near, far) = (c.probability(3.0), c.probability(0.0));
        assert!(near > 0.5 && near > 2.0 * platt_g(&c, 3.0), "{near}");
        assert!(far < 0.01, "{far}");
        // "Nothing today" below what most liked papers score.
        assert!(c.quiet > CLOSE && c.quiet <= near + 0.1, "{c:?}");
        assert_eq!(Calibration::from_array(c.to_array()), Some(c));
    }
}
