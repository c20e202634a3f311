//! MCP over Streamable HTTP, at `/mcp` on `papers serve`: the same tools
//! as `papers mcp`, on the server's resident [`Searcher`], answered
//! statelessly (the 2026-07-28 revision has no sessions; clients of the
//! earlier revisions get their `initialize` answered and need no session
//! either) and as plain JSON responses. `papers serve`'s guard stands
//! before it: a `Host` it does not answer to is a 421, another site's
//! `Origin` a 403 ([`crate::serve::guard`]); each call waits for one of the
//! server's turns and stops at its time limit, as an API request does.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::Server;
use crate::search::Searcher;
use crate::turns::Gate;

/// The largest request body `/mcp` reads: tool arguments are small.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The `/mcp` service over `searcher`.
pub fn service(
    searcher: Arc<Searcher>,
    allow_write: bool,
    gate: Gate,
) -> StreamableHttpService<Server, NeverSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // The server's own guard has checked Host and Origin already, with
        // the names `--allow-host` adds.
        .with_allowed_hosts(Vec::<String>::new())
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    let server = Server::new(searcher, allow_write).gated(gate);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}
