//! A linear support vector machine over embedding vectors: L1-loss
//! (hinge) or L2-loss (squared hinge, [`Loss`]), L2-regularised, trained
//! by dual coordinate descent (Hsieh et al., ICML 2008, the method of
//! LIBLINEAR and of scikit-learn's `LinearSVC`). The bias is learnt as the weight of a constant feature,
//! as LIBLINEAR does. Each example carries its own cost `C`, so classes
//! can be balanced and weak negatives weighted down.
//!
//! An example's features are a dense part (an embedding) and, optionally,
//! a sparse part (a paper's words, as term numbers and weights): the
//! weights come back as a [`Linear`] over the dense part and one weight per
//! term number.
//!
//! Deterministic: examples are visited in an order shuffled by a fixed
//! seed, so the same examples always give the same weights.

use crate::vector::dot;

/// One training example: a vector, its label (+1 or -1) and its cost.
#[derive(Clone, Copy)]
pub struct Example<'a> {
    /// The dense features.
    pub x: &'a [f32],
    /// The sparse features: (term number, value), numbers under the
    /// `terms` given to [`train_sparse`]; empty for [`train`].
    pub sparse: &'a [(u32, f32)],
    /// +1 (liked) or -1.
    pub y: f32,
    /// The cost of a margin violation (`C` times the class weight).
    pub c: f32,
}

/// A trained linear separator: `score(x) = w·x + b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    /// One weight per feature.
    pub w: Vec<f32>,
    /// The bias.
    pub b: f32,
}

impl Linear {
    /// The signed distance-like score of `x`.
    pub fn score(&self, x: &[f32]) -> f32 {
        dot(&self.w, x) + self.b
    }
}

/// The value of the constant feature that carries the bias.
const BIAS_FEATURE: f32 = 1.0;

/// The loss a margin violation costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// `max(0, 1 - y f)`: the dual's variables are capped at `C`.
    Hinge,
    /// `max(0, 1 - y f)²`, scikit-learn's `LinearSVC` default: the dual
    /// is uncapped, with `1 / (2 C)` on its diagonal.
    SquaredHinge,
}

/// Trains on `examples` (dense features only) until the projected
/// gradient's spread is under `tol` or `max_epochs` passes were made.
pub fn train(examples: &[Example], tol: f32, max_epochs: usize) -> Linear {
    train_sparse(examples, 0, tol, max_epochs).0
}

/// [`train`] over dense and sparse features, the sparse ones numbered
/// under `terms`: the classifier over the dense part, and the weight of
/// each term number.
pub fn train_sparse(
    examples: &[Example],
    terms: usize,
    tol: f32,
    max_epochs: usize,
) -> (Linear, Vec<f32>) {
    train_with(examples, terms, Loss::Hinge, tol, max_epochs)
}

/// [`train_sparse`] with the given [`Loss`].
pub fn train_with(
    examples: &[Example],
    terms: usize,
    loss: Loss,
    tol: f32,
    max_epochs: usize,
) -> (Linear, Vec<f32>) {
    // The dual's diagonal term and cap for each example.
    let dual = |e: &Example| match loss {
        Loss::Hinge => (0.0, e.c),
        Loss::SquaredHinge => (0.5 / e.c, f32::INFINITY),
    };
    let d = examples.first().map_or(0, |e| e.x.len());
    let mut w = vec![0f32; d];
    let mut v = vec![0f32; terms];
    let mut b = 0f32;
    let n = examples.len();
    let mut alpha = vec![0f32; n];
    let q: Vec<f32> = examples
        .iter()
        .map(|e| {
            dot(e.x, e.x)
                + e.sparse.iter().map(|(_, x)| x * x).sum::<f32>()
                + BIAS_FEATURE * BIAS_FEATURE
                + dual(e).0
        })
        .collect();
    let sparse_dot =
        |v: &[f32], e: &Example| -> f32 { e.sparse.iter().map(|&(t, x)| v[t as usize] * x).sum() };
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..max_epochs {
        shuffle(&mut order, &mut rng);
        let (mut pg_max, mut pg_min) = (f32::NEG_INFINITY, f32::INFINITY);
        for &i in &order {
            let e = &examples[i];
            if q[i] <= 0.0 {
                continue;
            }
            let (diagonal, cap) = dual(e);
            let g = e.y * (dot(&w, e.x) + sparse_dot(&v, e) + b * BIAS_FEATURE) - 1.0
                + diagonal * alpha[i];
            let pg = if alpha[i] == 0.0 {
                g.min(0.0)
            } else if alpha[i] >= cap {
                g.max(0.0)
            } else {
                g
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (old - g / q[i]).clamp(0.0, cap);
                let step = (alpha[i] - old) * e.y;
                if step != 0.0 {
                    for (wj, xj) in w.iter_mut().zip(e.x) {
                        *wj += step * xj;
                    }
                    for &(t, x) in e.sparse {
                        v[t as usize] += step * x;
                    }
                    b += step * BIAS_FEATURE;
                }
            }
        }
        if pg_max - pg_min < tol {
            break;
        }
    }
    (Linear { w, b }, v)
}

/// Fisher-Yates with a xorshift generator.
fn shuffle(order: &mut [usize], state: &mut u64) {
    for i in (1..order.len()).rev() {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let j = (*state % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_two_clusters_and_is_deterministic() {
        let points: Vec<[f32; 2]> = (0..40)
            .map(|i| {
                let t = i as f32 * 0.1;
                if i % 2 == 0 {
                    [1.0 + t.sin() * 0.3, 0.5 + t.cos() * 0.3]
                } else {
                    [-1.0 + t.cos() * 0.3, -0.5 + t.sin() * 0.3]
                }
            })
            .collect();
        let examples: Vec<Example> = points
            .iter()
            .enumerate()
            .map(|(i, p)| Example {
                x: p,
                sparse: &[],
                y: if i % 2 == 0 { 1.0 } else { -1.0 },
                c: 1.0,
            })
            .collect();
        let model = train(&examples, 1e-4, 1000);
        for e in &examples {
            assert!(model.score(e.x) * e.y > 0.0, "misclassified {:?}", e.x);
        }
        assert_eq!(model, train(&examples, 1e-4, 1000));
    }

    #[test]
    fn learns_from_sparse_features_where_the_dense_ones_say_nothing() {
        // Every dense vector the same; term 0 marks the positives, term 1
        // the negatives, term 2 is on every other example of both.
        let dense = [0.5f32, 0.5];
        let sparse: Vec<Vec<(u32, f32)>> = (0..30)
            .map(|i| {
                let mut s = vec![(if i % 2 == 0 { 0 } else { 1 }, 0.8)];
                if i % 4 < 2 {
                    s.push((2, 0.6));
                }
                s
            })
            .collect();
        let examples: Vec<Example> = sparse
            .iter()
            .enumerate()
            .map(|(i, s)| Example {
                x: &dense,
                sparse: s,
                y: if i % 2 == 0 { 1.0 } else { -1.0 },
                c: 1.0,
            })
            .collect();
        let (model, terms) = train_sparse(&examples, 3, 1e-4, 1000);
        for e in &examples {
            let score = model.score(e.x)
                + e.sparse
                    .iter()
                    .map(|&(t, x)| terms[t as usize] * x)
                    .sum::<f32>();
            assert!(score * e.y > 0.0, "misclassified {:?}: {score}", e.sparse);
        }
        assert!(terms[0] > 0.5 && terms[1] < -0.5, "{terms:?}");
        assert!(terms[2].abs() < 0.1, "{terms:?}");
    }
}
