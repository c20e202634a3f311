//! The server's connections: accepted up to a cap below the process's file
//! limit (one more gets a 503 and is closed, so the sockets that are open
//! stay usable), each given a deadline for its request head that also ends
//! an idle keep-alive (a client that opens a socket and sends nothing, or
//! half a request, holds it only that long), and at shutdown asked to
//! finish and then dropped after a grace period whatever they are doing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tower_service::Service;

use super::Limits;

/// What one connection over the cap is told before it is closed.
fn full() -> String {
    let body = r#"{"error":"too many connections: try again","parameter":null}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The most connections the process can hold open: half of what its file
/// limit leaves (the index's files, the model and the listener need
/// theirs), never more than `wanted`.
pub fn connection_cap(wanted: usize) -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            let files = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
            return wanted.min(files.saturating_sub(64) / 2).max(4);
        }
    }
    wanted
}

/// Serves `router` on `listener` until `stop` resolves, then lets the
/// open connections finish for at most `limits.grace`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let open = Arc::new(Semaphore::new(limits.connections.max(1)));
    let (stopping, stopped) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        let (mut socket, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                // Out of files or a connection reset before it was
                // accepted: wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        // Finished connections are collected as the loop goes.
        while connections.try_join_next().is_some() {}
        let Ok(turn) = Arc::clone(&open).try_acquire_owned() else {
            connections.spawn(async move {
                let answer = full();
                let write = socket.write_all(answer.as_bytes());
                let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
                let _ = socket.shutdown().await;
            });
            continue;
        };
        let _ = socket.set_nodelay(true);
        let router = router.clone();
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let _turn = turn;
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let mut router = router.clone();
                async move { router.call(request.map(axum::body::Body::new)).await }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.head_timeout)
                .max_buf_size(super::guard::MAX_HEAD_BYTES * 2 + 8192);
            let socket = super::bare::Bare::new(socket);
            let connection = builder.serve_connection(TokioIo::new(socket), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = stopped.changed() => connection.as_mut().graceful_shutdown(),
            }
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let all_done = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.grace, all_done).await.is_err() {
        connections.abort_all();
    }
    Ok(())
}
