//! What every request passes before a route sees it: a bounded target and
//! head (414, 431), a `Host` this server answers to (421: a page on any
//! other name, even one that resolves to 127.0.0.1, is DNS rebinding), and
//! for the API, MCP and the RSS/Atom feed an `Origin` that is the server's
//! own (403: another site's page may send requests, but not have them
//! answered). Every refusal is
//! a JSON error.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The longest request target (path and query) answered, in bytes.
pub const MAX_TARGET_BYTES: usize = 16 << 10;
/// The largest request head answered: header bytes, and header count.
pub const MAX_HEAD_BYTES: usize = 32 << 10;
/// The most headers one request may carry.
pub const MAX_HEADERS: usize = 64;

/// The names a server answers to: loopback names, the address it listens
/// on, and those the user allowed (`papers serve --allow-host`).
#[derive(Clone, Debug)]
pub struct Hosts {
    addr: SocketAddr,
    allowed: Vec<String>,
}

impl Hosts {
    /// The names a server on `addr` answers to, with `allowed` besides.
    pub fn new(addr: SocketAddr, allowed: &[String]) -> Hosts {
        Hosts {
            addr,
            allowed: allowed.iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    /// Whether a `Host` header's value names this server; a malformed
    /// value (see `name_of`) names none.
    pub fn admits(&self, host: &str) -> bool {
        let Some(name) = name_of(host) else {
            return false;
        };
        let name = name.to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        if self.allowed.contains(&name) {
            return true;
        }
        let Ok(ip) = name.parse::<IpAddr>() else {
            return false;
        };
        // An address names the server when it is loopback, the one it
        // listens on, or any when it listens on every interface: only a
        // name can be rebound to another address.
        ip.is_loopback() || ip == self.addr.ip() || self.addr.ip().is_unspecified()
    }
}

/// The host part of a `Host` value as RFC 9110 has it: `name`,
/// `name:port` or `[v6]:port`, the name of letters, digits, dots and
/// dashes, the port 1 to 5 digits up to 65535. Anything else (`localhost:`,
/// `[::1]junk`, a port of 99999, a space) is malformed: `None`.
fn name_of(host: &str) -> Option<&str> {
    let port_ok = |port: &str| {
        !port.is_empty()
            && port.len() <= 5
            && port.chars().all(|c| c.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|p| p <= 65_535)
    };
    if let Some(rest) = host.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let ok = after.is_empty() || after.strip_prefix(':').is_some_and(port_ok);
        return (ok && inside.parse::<std::net::Ipv6Addr>().is_ok()).then_some(inside);
    }
    let (name, port) = match host.split_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    (name_ok && port.is_none_or(port_ok)).then_some(name)
}

/// A JSON error with `status`.
pub fn refuse(status: StatusCode, message: &str, parameter: Option<&str>) -> Response {
    let body = serde_json::json!({ "error": message, "parameter": parameter });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The largest request body read: `/mcp`'s tool calls (the only bodies
/// the server takes) are far smaller.
pub const MAX_BODY_BYTES: usize = crate::mcp::http::MAX_BODY_BYTES;

/// Reads a request's body whole, within the head's time (`papers serve`'s
/// `head_timeout`), before any route sees it: a body sent a byte at a time
/// gets a 408 and its connection back, instead of holding a socket (and,
/// at the file limit, everyone else) for as long as it likes. Past
/// [`MAX_BODY_BYTES`] it is a 413.
pub async fn body_in_time(
    State(limit): State<std::time::Duration>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = axum::body::to_bytes(body, MAX_BODY_BYTES);
    let bytes = match tokio::time::timeout(limit, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the request body is over {MAX_BODY_BYTES} bytes, or was cut off"),
                None,
            )
        }
        Err(_) => {
            let mut answer = refuse(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request body did not arrive within {} s",
                    limit.as_secs_f64()
                ),
                None,
            );
            answer.headers_mut().insert(
                header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
            return answer;
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// Every 4xx a route answers in JSON, as the design promises: a refusal
/// some layer wrote as plain text (the MCP transport's 405, 406, 413 and
/// 415) becomes `{"error": its text}` with its status and its other headers
/// (`Allow`) kept.
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !status.is_client_error() || json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 64 << 10)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let message = match text.trim() {
        "" => status.canonical_reason().unwrap_or("refused"),
        text => text,
    };
    let mut answer = refuse(status, message, None);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

/// Whether a request from a page is one the API answers: no `Origin`, or
/// this server's own; and no fetch metadata that says another site sent it
/// (browsers send `Sec-Fetch-Site` where they leave `Origin` out, as on a
/// plain cross-site GET).
fn same_origin(headers: &HeaderMap, host: &str) -> Result<(), &'static str> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let own = ["http://", "https://"]
            .iter()
            .any(|scheme| origin.strip_prefix(scheme) == Some(host));
        if !own {
            return Err("requests from another origin are refused");
        }
    }
    match headers.get("sec-fetch-site").map(|v| v.as_bytes()) {
        Some(b"cross-site") | Some(b"same-site") => {
            Err("requests sent by another site's page are refused")
        }
        _ => Ok(()),
    }
}

/// The middleware.
pub async fn check(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_TARGET_BYTES {
        return refuse(
            StatusCode::URI_TOO_LONG,
            &format!("the request target is {target} bytes; at most {MAX_TARGET_BYTES}"),
            None,
        );
    }
    let headers = request.headers();
    let head: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    if headers.len() > MAX_HEADERS || head > MAX_HEAD_BYTES {
        return refuse(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            &format!(
                "the request has {} headers of {head} bytes; at most {MAX_HEADERS} of {MAX_HEAD_BYTES}",
                headers.len()
            ),
            None,
        );
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()))
        .unwrap_or_default()
        .to_string();
    if !hosts.admits(&host) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            &format!(
                "this server does not answer to the host {:?}: use localhost or the address it \
                 listens on (papers serve --allow-host NAME adds a name)",
                crate::error::shown(&host)
            ),
            None,
        );
    }
    let path = request.uri().path();
    // `/feed` ranks the inbox, as `/api/feed` does: as costly, so another
    // site's page may not have it made either (a feed reader sends no
    // `Origin` or fetch metadata, and is answered).
    if path.starts_with("/api/") || path == "/mcp" || path == "/feed" {
        if let Err(why) = same_origin(headers, &host) {
            return refuse(StatusCode::FORBIDDEN, why, None);
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let local = Hosts::new("127.0.0.1:7474".parse().unwrap(), &[]);
        for ok in [
            "localhost:7474",
            "127.0.0.1:7474",
            "[::1]:7474",
            "app.localhost",
        ] {
            assert!(local.admits(ok), "{ok}");
        }
        for bad in [
            "evil.example:7474",
            "192.168.1.5:7474",
            "",
            "localhost.evil.example",
            // Malformed: an empty or out-of-range port, text after an
            // address, an unclosed bracket, spaces, user info.
            "localhost:",
            "localhost:99999",
            "localhost:7474:7474",
            "[::1]junk",
            "[::1",
            "local host",
            "user@localhost",
        ] {
            assert!(!local.admits(bad), "{bad}");
        }
        let all = Hosts::new("0.0.0.0:7474".parse().unwrap(), &["papers.lan".into()]);
        assert!(all.admits("192.168.1.5:7474"));
        assert!(all.admits("PAPERS.lan:7474"));
        assert!(!all.admits("evil.example:7474"));
    }
}
