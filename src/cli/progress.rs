//! The embedding progress line's rate and time left. indicatif's own
//! estimate follows the last few batches, and the first batches of a run
//! are its slowest (the model warming up, the longest abstracts first), so
//! 3 s into a 26 s run it said "88s left". Here nothing is promised until
//! a tenth of the records is done, and from then on the time left is the
//! rate measured since that tenth, over the whole stretch, not the last
//! few batches.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressState, ProgressStyle};

/// The share of the records done before a time left is shown.
const SETTLED: f64 = 0.1;

/// The rate and time-left estimate of one run.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    /// When the first tenth was done, and how many records that was.
    mark: Option<(Duration, u64)>,
}

impl Estimate {
    /// Records `done` of `total` at `elapsed`; returns the records per
    /// second and the seconds left, once they can be told (the rate from
    /// the start, the time left from the first tenth on).
    pub fn update(&mut self, done: u64, total: u64, elapsed: Duration) -> (f64, Option<f64>) {
        let secs = elapsed.as_secs_f64();
        let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
        if total == 0 || (done as f64) < SETTLED * total as f64 {
            return (rate, None);
        }
        let (at, from) = *self.mark.get_or_insert((elapsed, done));
        let span = secs - at.as_secs_f64();
        // Right at the mark, the rate from the start stands in.
        let settled = if span >= 1.0 && done > from {
            (done - from) as f64 / span
        } else {
            rate
        };
        let left = if settled > 0.0 {
            (total - done.min(total)) as f64 / settled
        } else {
            return (rate, None);
        };
        (settled, Some(left))
    }
}

/// The progress bar's style: `embedding [bar] 57/578 records (22/s, 24s left)`,
/// with "estimating time left" before the first tenth.
pub fn style() -> ProgressStyle {
    let estimate = Arc::new(Mutex::new(Estimate::default()));
    ProgressStyle::with_template("embedding {bar:40} {pos}/{len} records ({estimate})")
        .expect("valid template")
        .with_key(
            "estimate",
            move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let mut estimate = estimate.lock().unwrap_or_else(|e| e.into_inner());
                let (rate, left) =
                    estimate.update(state.pos(), state.len().unwrap_or(0), state.elapsed());
                let _ = match left {
                    Some(left) => write!(w, "{rate:.0}/s, {} left", seconds(left)),
                    None => write!(w, "{rate:.0}/s, estimating time left"),
                };
            },
        )
}

/// Seconds as `42s`, `3m 05s` or `1h 02m`.
fn seconds(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn nothing_is_promised_before_a_tenth() {
        let mut e = Estimate::default();
        // The run the estimate was reported on: 12 of 578 after 3 s.
        let (rate, left) = e.update(12, 578, at(3.0));
        assert_eq!(left, None);
        assert!((rate - 4.0).abs() < 1e-9);
    }

    #[test]
    fn the_time_left_follows_the_rate_since_the_first_tenth() {
        let mut e = Estimate::default();
        // Slow start (warm-up), then 25 records a second.
        assert_eq!(e.update(10, 578, at(4.0)).1, None);
        let (_, left) = e.update(58, 578, at(5.0));
        // At the mark the rate from the start (11.6/s) stands in.
        assert!((left.unwrap() - 520.0 / 11.6).abs() < 1e-6);
        let (rate, left) = e.update(158, 578, at(9.0));
        assert!((rate - 25.0).abs() < 1e-9, "{rate}");
        assert!((left.unwrap() - 420.0 / 25.0).abs() < 1e-9);
        // A run that took 26 s in all ends near its estimate.
        let (_, left) = e.update(558, 578, at(25.0));
        assert!(left.unwrap() < 1.0);
    }

    #[test]
    fn times_read_as_people_write_them() {
        assert_eq!(seconds(42.4), "42s");
        assert_eq!(seconds(185.0), "3m 05s");
        assert_eq!(seconds(3720.0), "1h 02m");
    }
}
