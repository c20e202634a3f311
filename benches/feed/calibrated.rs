//! What the feed's score means (issue 55): for the chosen ranker, every
//! (interest, day) pair's probabilities beside the truth, then
//! - the expected calibration error over 10 equal-width bins;
//! - of the papers scored >= 0.5, the share relevant;
//! - how often the feed says "nothing today" (no paper reaches
//!   the tag's own `Calibration::quiet`) on days holding none of the interest's papers, and on days
//!   holding 5 or more;
//! - the spread of the tags' own fits (for `Calibration::UNFITTED`).

/// One interest's scores on one day.
pub struct Day {
    pub tuned: bool,
    pub scores: Vec<f32>,
    pub relevant: Vec<bool>,
    /// The tag's "nothing today" threshold.
    pub quiet: f32,
}

/// Prints the table, tuning categories and held-out ones apart.
pub fn report(days: &[Day], fits: &[(bool, [f32; 6])]) {
    println!();
    println!("| categories | pairs | ECE (10 bins) | papers >= 0.5 | of them relevant | \"nothing today\" on days with none | on days with 5+ |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for tuned in [true, false] {
        let part: Vec<&Day> = days.iter().filter(|d| d.tuned == tuned).collect();
        if part.is_empty() {
            continue;
        }
        let pairs: Vec<(f32, bool)> = part
            .iter()
            .flat_map(|d| d.scores.iter().copied().zip(d.relevant.iter().copied()))
            .collect();
        let high: Vec<bool> = pairs
            .iter()
            .filter(|(p, _)| *p >= 0.5)
            .map(|(_, r)| *r)
            .collect();
        let quiet = |d: &&&&Day| d.scores.iter().all(|&s| s < d.quiet);
        let count = |d: &&&Day| d.relevant.iter().filter(|r| **r).count();
        let empty: Vec<&&Day> = part.iter().filter(|d| count(d) == 0).collect();
        let full: Vec<&&Day> = part.iter().filter(|d| count(d) >= 5).collect();
        let share = |days: &[&&Day]| {
            format!(
                "{:.0}% of {}",
                100.0 * days.iter().filter(quiet).count() as f64 / days.len().max(1) as f64,
                days.len()
            )
        };
        println!(
            "| {} | {} | {:.4} | {} | {:.0}% | {} | {} |",
            if tuned { "tuning" } else { "held out" },
            part.len(),
            ece(&pairs),
            high.len(),
            100.0 * high.iter().filter(|r| **r).count() as f64 / high.len().max(1) as f64,
            share(&empty),
            share(&full),
        );
    }
    // Each day's best score, on days with none of the interest's papers
    // and on days with 5+: where a "nothing today" threshold would fall.
    for tuned in [true, false] {
        for (name, keep) in [("none", 0..1), ("5+", 5..usize::MAX)] {
            let mut best: Vec<f32> = days
                .iter()
                .filter(|d| d.tuned == tuned)
                .filter(|d| keep.contains(&d.relevant.iter().filter(|r| **r).count()))
                .map(|d| d.scores.iter().copied().fold(0.0, f32::max))
                .collect();
            best.sort_by(f32::total_cmp);
            let at = |q: f64| best.get(((best.len() as f64 - 1.0) * q) as usize).copied();
            println!(
                "best score of a day ({}, {name} relevant): {:?}",
                if tuned { "tuning" } else { "held out" },
                [0.1, 0.2, 0.5, 0.8, 0.9].map(|q| at(q).map(|x| (x * 1000.0).round() / 1000.0))
            );
        }
    }
    for tuned in [true, false] {
        let mut each: Vec<[f32; 6]> = fits
            .iter()
            .filter(|(t, _)| *t == tuned)
            .map(|(_, f)| *f)
            .collect();
        if each.is_empty() {
            continue;
        }
        let median = |k: usize, each: &mut Vec<[f32; 6]>| {
            each.sort_by(|a, b| a[k].total_cmp(&b[k]));
            each[each.len() / 2][k]
        };
        println!(
            "tags' fits ({}): median intercept {:.2}, slope {:.2}, c {:.3}, nothing-today threshold {:.3}",
            if tuned { "tuning" } else { "held out" },
            median(2, &mut each),
            median(3, &mut each),
            median(4, &mut each),
            median(5, &mut each),
        );
    }
}

/// Expected calibration error: the mean |confidence - accuracy| over 10
/// equal-width bins, weighted by how many scores each holds.
fn ece(pairs: &[(f32, bool)]) -> f64 {
    let mut bins = [(0.0f64, 0.0f64, 0usize); 10];
    for &(p, r) in pairs {
        let b = ((p * 10.0) as usize).min(9);
        bins[b].0 += p as f64;
        bins[b].1 += r as u8 as f64;
        bins[b].2 += 1;
    }
    let n = pairs.len().max(1) as f64;
    bins.iter()
        .filter(|b| b.2 > 0)
        .map(|(p, r, _)| (p - r).abs() / n)
        .sum()
}
