//! JSON bodies for the refusals hyper writes itself. A request whose head
//! hyper cannot take (a target past its URI limit, a head past the
//! buffer, a line it cannot parse) never reaches a route or the guard:
//! hyper answers 414, 431 or 400 with an empty body and closes. The
//! connection's socket is wrapped so that such an answer leaves with the
//! `{"error": ...}` body every other 4xx has. Only a 4xx head with
//! `content-length: 0` is rewritten: every route's 4xx carries a body.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A socket whose writes pass through, but for hyper's bodiless 4xx.
pub struct Bare<S> {
    inner: S,
    /// A rewritten answer still being written, and how much of it is out.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> Bare<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Bare {
            inner,
            pending: None,
        }
    }
}

/// The answer to write instead of `head`, when it is hyper's own bodiless
/// refusal.
fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let status: u16 = text.strip_prefix("HTTP/1.1 4")?.get(..2)?.parse().ok()?;
    let status = 400 + status;
    let (head, rest) = text.split_once("\r\n\r\n")?;
    if !rest.is_empty() || !head.to_ascii_lowercase().contains("\r\ncontent-length: 0") {
        return None;
    }
    let message = match status {
        414 => "the request target is too long; at most 16384 bytes",
        431 => "the request head is too large; at most 32768 bytes",
        _ => "the request could not be read as HTTP/1.1",
    };
    let body = serde_json::json!({ "error": message, "parameter": null }).to_string();
    let mut out = String::new();
    for line in head.split("\r\n") {
        if line.to_ascii_lowercase().starts_with("content-length:") {
            out.push_str("content-type: application/json\r\n");
            out.push_str(&format!("content-length: {}\r\n", body.len()));
        } else {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("\r\n");
    out.push_str(&body);
    Some(out.into_bytes())
}

impl<S: AsyncRead + Unpin> AsyncRead for Bare<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Bare<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.pending.is_none() {
            match rewrite(buf) {
                Some(answer) => self.pending = Some((answer, 0)),
                None => return Pin::new(&mut self.inner).poll_write(cx, buf),
            }
        }
        // The rewritten answer goes out whole before hyper hears that its
        // own was written.
        let this = &mut *self;
        if let Some((answer, done)) = this.pending.as_mut() {
            while *done < answer.len() {
                match Pin::new(&mut this.inner).poll_write(cx, &answer[*done..]) {
                    Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Poll::Ready(Ok(n)) => *done += n,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
            }
        }
        this.pending = None;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodiless_refusals_are_rewritten() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let answer = String::from_utf8(rewrite(hyper).unwrap()).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "));
        assert!(head.contains("content-type: application/json"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(json["error"].as_str().unwrap().contains("too large"));
        // A route's answers pass as they are.
        let routed = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n";
        assert!(rewrite(routed).is_none());
        assert!(rewrite(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(rewrite(b"{\"hits\":[]}").is_none());
    }
}
