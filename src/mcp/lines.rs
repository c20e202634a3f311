//! What reaches the MCP server from stdin: every line gets an answer. The
//! SDK drops a line that is not JSON (and so leaves a client waiting for
//! ever), and answers a request whose `params` do not fit its method as
//! an unknown method; this reader stands before it and answers, as
//! JSON-RPC 2.0 says, `-32700` (not JSON, not UTF-8) with `"id": null`,
//! `-32600` (not a request: too large, nested too deep, a batch, no
//! `jsonrpc: "2.0"`) and `-32602` (a known method's `params` do not fit)
//! with the request's id wherever it can be read. The rest goes on to the
//! SDK unchanged.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{json, Value};

/// The longest line read, in bytes; a longer one is refused unread.
pub const MAX_LINE_BYTES: usize = 4 << 20;
/// The deepest nesting of arrays and objects a line may have.
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC's error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The methods a client may call whose `params` the SDK knows the shape of.
const KNOWN: [&str; 15] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
];

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the SDK.
    Pass,
    /// Nothing (an empty line).
    Skip,
    /// Answer this (a JSON-RPC error response) instead.
    Answer(String),
}

fn error(id: Value, code: i64, message: &str) -> Verdict {
    Verdict::Answer(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string(),
    )
}

/// Judges one line (without its newline); `whole` is false when the line
/// was longer than [`MAX_LINE_BYTES`] and only its start was kept.
pub fn judge(line: &[u8], whole: bool) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if !whole {
        return error(
            top_level_id(line),
            INVALID_REQUEST,
            &format!("the message is over {MAX_LINE_BYTES} bytes"),
        );
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return error(Value::Null, PARSE_ERROR, "parse error: not UTF-8 text");
    };
    if depth(line) > MAX_DEPTH {
        return error(
            top_level_id(line),
            INVALID_REQUEST,
            &format!("the message is nested deeper than {MAX_DEPTH} levels"),
        );
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return error(Value::Null, PARSE_ERROR, &format!("parse error: {e}")),
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (an array) is not accepted: send one request a line"
        } else {
            "a request is a JSON object"
        };
        return error(Value::Null, INVALID_REQUEST, what);
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(Value::Null) | None => None,
        Some(_) => {
            return error(
                Value::Null,
                INVALID_REQUEST,
                "\"id\" must be a string or a number",
            )
        }
    };
    let reply = |code, message: &str| error(id.clone().unwrap_or(Value::Null), code, message);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return reply(INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return reply(INVALID_REQUEST, "\"method\" must be a string"),
        // A response to the server's own request.
        None if object.contains_key("result") || object.contains_key("error") => {
            return Verdict::Pass
        }
        None => return reply(INVALID_REQUEST, "a request needs a \"method\""),
    };
    if id.is_none() {
        // A notification: nothing is answered, whatever it holds.
        return Verdict::Pass;
    }
    if let Some(params) = object.get("params") {
        if !params.is_object() {
            return reply(INVALID_PARAMS, "\"params\" must be an object");
        }
    }
    let known = KNOWN.contains(&method);
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(JsonRpcMessage::Request(request)) => match request.request {
            ClientRequest::CustomRequest(_) if known => {
                reply(INVALID_PARAMS, &format!("invalid params for {method}"))
            }
            _ => Verdict::Pass,
        },
        Ok(_) => Verdict::Pass,
        Err(e) if known => reply(INVALID_PARAMS, &format!("invalid params for {method}: {e}")),
        Err(e) => reply(INVALID_REQUEST, &format!("invalid request: {e}")),
    }
}

/// The deepest nesting of `[` and `{` outside strings.
fn depth(line: &[u8]) -> usize {
    let (mut depth, mut most, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                most = most.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// The `"id"` of a message too large or too deep to parse whole: a string
/// or number value of the key `id` at the top level of the object.
fn top_level_id(line: &[u8]) -> Value {
    let (mut depth, mut i) = (0usize, 0usize);
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i);
                let key = &line[i..end.min(line.len())];
                i = end;
                if depth == 1 && key == b"\"id\"" {
                    let rest = &line[i..];
                    let start = rest
                        .iter()
                        .position(|b| !b.is_ascii_whitespace() && *b != b':');
                    let Some(start) = start else { break };
                    let rest = &rest[start..];
                    let len = if rest.first() == Some(&b'"') {
                        string_end(rest, 0)
                    } else {
                        rest.iter()
                            .position(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace())
                            .unwrap_or(rest.len())
                    };
                    return std::str::from_utf8(&rest[..len.min(rest.len())])
                        .ok()
                        .and_then(|t| serde_json::from_str::<Value>(t).ok())
                        .filter(|v| v.is_string() || v.is_number())
                        .unwrap_or(Value::Null);
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// The index just past the string starting at `start` (a `"`).
fn string_end(line: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes(), true) {
            Verdict::Answer(text) => serde_json::from_str(&text).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_bad_line_is_answered() {
        let a = answer("not json");
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"a":{}1{}}}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        let a = answer(&deep);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        let a =
            answer(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"arguments":3}}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("x"), json!(-32602))
        );
        let a = answer(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(a["error"]["code"], json!(-32600));
        assert!(a.as_object().unwrap().contains_key("id"));
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, true),
            Verdict::Pass
        );
        let cut = judge(
            br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"aaaa"#,
            false,
        );
        let Verdict::Answer(text) = cut else { panic!() };
        assert!(text.contains("\"id\":12"), "{text}");
        assert!(matches!(judge(b"\xff\xfe{}", true), Verdict::Answer(t) if t.contains("-32700")));
    }
}
