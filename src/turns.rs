//! What one request of a server waits for and runs within: a turn (one of
//! a fixed number of workers) and a time limit. The work runs on a
//! blocking thread with the limit as its [`crate::deadline`], so a search
//! nobody waits for any more stops within a batch; the turn is held by
//! that thread, not by the request, so a request that timed out still
//! counts until its work is done. `papers serve`'s API and its MCP
//! endpoint share one [`Gate`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

/// The turns and the time limit.
#[derive(Clone, Debug)]
pub struct Gate {
    turns: Arc<Semaphore>,
    timeout: Duration,
}

/// Why work got no answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refused {
    /// No turn came within the time limit.
    Busy,
    /// The work ran past the time limit (its seconds).
    TooSlow(f32),
    /// The work's thread panicked.
    Failed,
}

impl Gate {
    /// `workers` turns (at least one), each request limited to `timeout`.
    pub fn new(workers: usize, timeout: Duration) -> Gate {
        Gate {
            turns: Arc::new(Semaphore::new(workers.max(1))),
            timeout,
        }
    }

    /// Runs `work` on `with` once a turn is free, within the time limit.
    pub async fn run<S, T>(
        &self,
        with: Arc<S>,
        work: impl FnOnce(&S) -> T + Send + 'static,
    ) -> Result<T, Refused>
    where
        S: Send + Sync + 'static,
        T: Send + 'static,
    {
        let started = Instant::now();
        let turn = tokio::time::timeout(self.timeout, Arc::clone(&self.turns).acquire_owned())
            .await
            .ok()
            .and_then(|t| t.ok())
            .ok_or(Refused::Busy)?;
        let at = started + self.timeout;
        let task = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            crate::deadline::within(at, || work(&with))
        });
        let left = self.timeout.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, task).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(Refused::Failed),
            Err(_) => Err(Refused::TooSlow(self.timeout.as_secs_f32())),
        }
    }
}
