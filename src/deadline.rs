//! A request's deadline, seen by the work it started: the server sets one
//! for each request ([`within`]), and the long loops of a search, an
//! `--explain`, a feed or `dupes` check it a batch at a time ([`current`],
//! [`Deadline::check`]), so work whose answer nobody waits for any more
//! stops and frees its worker instead of running on for minutes. Outside
//! the server there is no deadline and a check costs one thread-local read.

use std::cell::Cell;
use std::ops::ControlFlow;
use std::time::Instant;

use crate::error::{Error, Result};

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// When the work of the current request must stop, if ever. Copied into
/// the closures of parallel loops, whose threads do not share the
/// caller's thread-local.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// When it passes, if ever.
    pub fn at(self) -> Option<Instant> {
        self.0
    }

    /// Whether the deadline has passed.
    pub fn passed(self) -> bool {
        self.0.is_some_and(|at| Instant::now() >= at)
    }

    /// [`Error::Interrupted`] once the deadline has passed.
    pub fn check(self) -> Result<()> {
        if self.passed() {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }

    /// For the embedders' progress callbacks: `Break` once passed (the
    /// embedder then stops with [`Error::Interrupted`]).
    pub fn flow(self) -> ControlFlow<()> {
        if self.passed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// The deadline of the work running on this thread.
pub fn current() -> Deadline {
    Deadline(DEADLINE.with(Cell::get))
}

/// Runs `work` on this thread with `at` as its deadline.
pub fn within<T>(at: Instant, work: impl FnOnce() -> T) -> T {
    struct Reset(Option<Instant>);
    impl Drop for Reset {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _reset = Reset(DEADLINE.with(|d| d.replace(Some(at))));
    work()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_deadline_holds_within_its_work_only() {
        assert!(!current().passed());
        within(Instant::now() - Duration::from_millis(1), || {
            assert!(current().passed());
            assert!(current().check().is_err());
            assert!(current().flow().is_break());
        });
        assert!(current().check().is_ok());
        within(Instant::now() + Duration::from_secs(60), || {
            assert!(!current().passed());
        });
    }
}
