//! `papers serve`: one resident [`Searcher`] behind an HTTP JSON API and a
//! web page.
//!
//! The API speaks the CLI's JSON contract ([`crate::output::json`]): lists
//! are JSON arrays of the objects the CLI prints one per line, single
//! results are the CLI's object, and errors are a 4xx or 5xx with
//! `{"error": "...", "parameter": "..."}` (`parameter` when one is to blame).
//!
//! | route                  | parameters                                                   |
//! |------------------------|--------------------------------------------------------------|
//! | `GET /api/search`      | `q`, `k`, `mode`, `since`, `until`, `in`, `author`, `category` (each repeatable), `listed_since`, `listed_until`, `min_score`, `strict`, `as_typed`, `strategy`, `explain` |
//! | `GET /api/similar`     | `id` (repeatable), `not` (repeatable), `k`, `min_score`, `strategy`, and the filters of `/api/search` (`since`, `until`, `in`, `author`, `category`, `listed_since`, `listed_until`) |
//! | `GET /api/papers/ID`   | `raw`; ID in any form the CLI takes                          |
//! | `GET /api/list`        | `offset`, `limit` (at most 1000 a page); `saved` or `read`: the reading list, newest mark first |
//! | `GET /api/info`        |                                                              |
//! | `GET /api/dupes`       | `min_score`, `min_overlap`, `k`                              |
//! | `GET /api/feed`, `/api/tags`, `/feed` | see `feeds`                                   |
//! | `POST /api/mark`       | `state` (seen, read, saved, new), `id` (repeatable): with `--allow-write` only |
//! | `POST /api/tag`        | `tag`, `id` (repeatable), `not_interested=1`: the feed's like / not interested, with `--allow-write` only |
//! | `GET /healthz`         | `{"status": "ok", "records": N, "writable": BOOL}`           |
//! | `POST /mcp`            | MCP over Streamable HTTP ([`crate::mcp::http`])               |
//! | `GET /`                | the page; `?q=`, `?similar=ID`, `?paper=ID` are its links    |
//!
//! What one request may cost is capped ([`crate::request`]: `k`, query bytes, ids;
//! [`Limits`]: time and how many run at once). The work runs on a pool of
//! blocking threads no larger than [`Limits::workers`]; a client that is
//! slow to send or read holds only a socket and an async task, never one of
//! those threads. The server only reads the index, unless started with
//! `--allow-write` (the page's marks, MCP's `tag`, `untag` and `mark`).

mod api;
mod app;
mod bare;
mod feeds;
pub mod guard;
mod listen;
mod page;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::search::Searcher;

/// The port `papers serve` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 7474;

/// What the server allows one request and all of them together.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Requests answered at once; more wait (up to `timeout`) for a turn.
    pub workers: usize,
    /// The longest one request may wait and run before it gets a 503; its
    /// work stops there too (see [`crate::deadline`]).
    pub timeout: Duration,
    /// Indexes larger than this refuse `/api/dupes` (it compares every
    /// pair of records): the CLI's `papers dupes` is the tool there.
    pub dupes_records: usize,
    /// Connections open at once; one more is told 503 and closed. Kept
    /// below the process's file limit (`listen::connection_cap`).
    pub connections: usize,
    /// How long a connection may take to send a request head, and how
    /// long an idle keep-alive connection is kept.
    pub head_timeout: Duration,
    /// How long a stop waits for the open connections to finish.
    pub grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            timeout: Duration::from_secs(10),
            dupes_records: 20_000,
            connections: listen::connection_cap(512),
            head_timeout: Duration::from_secs(5),
            grace: Duration::from_secs(3),
        }
    }
}

/// Serves `searcher` on `addr` until Ctrl-C (or SIGTERM); `ready` hears the
/// address once the socket listens (port 0 picks a free one). The server
/// answers to loopback names, the address it listens on and the names in
/// `hosts` ([`guard`]). Only with `allow_write` may the page mark papers
/// (`/api/mark`) and MCP clients at `/mcp` tag and mark them.
pub fn run(
    searcher: Arc<Searcher>,
    addr: SocketAddr,
    limits: Limits,
    hosts: &[String],
    allow_write: bool,
    ready: impl FnOnce(SocketAddr),
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(limits.workers.max(1) + 1)
        .thread_name("papers-serve")
        .enable_all()
        .build()
        .map_err(|e| Error::io("the server's threads", e))?;
    let hosts = Arc::new(guard::Hosts::new(addr, hosts));
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::io(format!("address {addr}"), e))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::io(format!("address {addr}"), e))?;
        ready(local);
        let app = api::router(app::App::new(searcher, limits, allow_write))
            .layer(axum::middleware::from_fn_with_state(
                limits.head_timeout,
                guard::body_in_time,
            ))
            .layer(axum::middleware::map_response(guard::json_errors))
            .layer(axum::middleware::from_fn_with_state(hosts, guard::check));
        listen::serve(listener, app, limits, shutdown())
            .await
            .map_err(|e| Error::io(format!("address {local}"), e))
    });
    // Work past its deadline ends at its next check; none is waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
}
