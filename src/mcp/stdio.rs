//! `papers mcp`'s standard streams: stdin is read a line at a time and
//! judged ([`super::lines`]) before the SDK sees it, and stdout carries the
//! SDK's lines and the judge's answers, a whole line at a time.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::lines::{judge, Verdict, MAX_LINE_BYTES};

/// Reads `input` a line at a time (keeping at most [`MAX_LINE_BYTES`] of
/// each), hands the lines that pass to the SDK through `sdk`, and the
/// answers to the others to `answers`. Ends at the end of `input`.
pub async fn read(
    input: impl AsyncRead + Unpin,
    mut sdk: impl AsyncWrite + Unpin,
    answers: UnboundedSender<String>,
) {
    let mut reader = BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let (mut whole, mut end) = (true, false);
        loop {
            let buffer = match reader.fill_buf().await {
                Ok(buffer) if !buffer.is_empty() => buffer,
                _ => {
                    end = true;
                    break;
                }
            };
            let newline = buffer.iter().position(|&b| b == b'\n');
            let part = &buffer[..newline.unwrap_or(buffer.len())];
            let room = MAX_LINE_BYTES.saturating_sub(line.len());
            if part.len() > room {
                whole = false;
            }
            line.extend_from_slice(&part[..part.len().min(room)]);
            let used = newline.map_or(buffer.len(), |at| at + 1);
            reader.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if end && line.is_empty() {
            return;
        }
        match judge(&line, whole) {
            Verdict::Pass => {
                line.push(b'\n');
                if sdk.write_all(&line).await.is_err() || sdk.flush().await.is_err() {
                    return;
                }
            }
            Verdict::Skip => {}
            Verdict::Answer(answer) => {
                if answers.send(answer).is_err() {
                    return;
                }
            }
        }
        if end {
            return;
        }
    }
}

/// Writes the SDK's lines and this reader's answers to `out`, a whole line
/// at a time, until both have ended.
pub async fn write(
    from_sdk: impl AsyncRead + Unpin,
    mut answers: UnboundedReceiver<String>,
    mut out: impl AsyncWrite + Unpin,
) {
    let mut sdk_lines = BufReader::new(from_sdk).lines();
    let (mut sdk_done, mut answers_done) = (false, false);
    while !(sdk_done && answers_done) {
        let line = tokio::select! {
            line = sdk_lines.next_line(), if !sdk_done => match line {
                Ok(Some(line)) => line,
                _ => {
                    sdk_done = true;
                    continue;
                }
            },
            answer = answers.recv(), if !answers_done => match answer {
                Some(answer) => answer,
                None => {
                    answers_done = true;
                    continue;
                }
            },
        };
        let written = async {
            out.write_all(line.as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
}
