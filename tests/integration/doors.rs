//! The server's and the MCP server's doors, tried as an attacker would:
//! raw sockets with a foreign `Host` or `Origin`, idle and half-sent
//! connections, more connections than the file limit allows, oversized
//! and wrong requests, a DNS-rebinding page in a real browser, and lines
//! on `papers mcp`'s stdin that are not requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::serve::{chromium, rendered_with, Server};
use crate::util::{papers, papers_in, run, small_index_copy};

/// Sends `request` (a raw HTTP/1.1 head) and reads the answer: the status
/// and the body.
fn raw(base: &str, request: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut socket = TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    socket.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    (status, body)
}

fn get(base: &str, path: &str, headers: &str) -> (u16, String) {
    let host = base.trim_start_matches("http://");
    raw(
        base,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\r\n"),
    )
}

#[track_caller]
fn json_error(answer: &(u16, String), status: u16) -> Value {
    assert_eq!(answer.0, status, "{}", answer.1);
    let body: Value =
        serde_json::from_str(&answer.1).unwrap_or_else(|e| panic!("{e}: {}", answer.1));
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    body
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let base = &server.base;
    let port = base.rsplit(':').next().unwrap();
    let rebound = raw(
        base,
        &format!(
            "GET /api/info HTTP/1.1\r\nHost: rebind.example:{port}\r\nConnection: close\r\n\r\n"
        ),
    );
    json_error(&rebound, 421);
    assert!(!rebound.1.contains("records"));
    let local = raw(
        base,
        &format!("GET /api/info HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(local.0, 200, "{}", local.1);
    json_error(
        &get(base, "/api/info", "Origin: http://evil.example\r\n"),
        403,
    );
    json_error(
        &get(base, "/api/search?q=x", "Sec-Fetch-Site: cross-site\r\n"),
        403,
    );
    let own = format!("Origin: {base}\r\nSec-Fetch-Site: same-origin\r\n");
    assert_eq!(get(base, "/api/info", &own).0, 200);
}

#[test]
fn a_dns_rebinding_page_reads_nothing_in_a_real_browser() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no Chromium on this machine (Debian: apt-get install chromium)");
        return;
    };
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let port = server.base.rsplit(':').next().unwrap();
    let rules = [
        "--disable-background-networking",
        "--host-resolver-rules=MAP rebind.example 127.0.0.1",
    ];
    let dom = |url: &str| rendered_with(browser, url, &rules);
    let rebound = dom(&format!("http://rebind.example:{port}/api/list"));
    assert!(rebound.contains("does not answer to the host"), "{rebound}");
    assert!(!rebound.contains("\"id\""), "{rebound}");
    let local = dom(&format!("http://127.0.0.1:{port}/api/list"));
    assert!(local.contains("\"id\""), "{local}");
}

#[test]
fn wrong_and_oversized_requests_get_json_errors_in_the_apis_words() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let base = &server.base;
    let host = base.trim_start_matches("http://");
    let post = raw(
        base,
        &format!("POST /api/info HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    );
    json_error(&post, 405);
    json_error(
        &get(base, &format!("/api/search?q={}", "a".repeat(20_000)), ""),
        414,
    );
    let many: String = (0..80).map(|i| format!("X-Filler-{i}: {i}\r\n")).collect();
    json_error(&get(base, "/api/info", &many), 431);
    for path in ["/api/info?x=1", "/api/tags?x=1"] {
        let body = json_error(&get(base, path, ""), 400);
        assert_eq!(body["parameter"], "x", "{path}: {body}");
    }
    let explain = json_error(
        &get(base, "/api/search?q=attention&explain=true&k=1000", ""),
        400,
    );
    assert_eq!(explain["parameter"], "explain");
    // The library's messages name parameters, not CLI flags.
    for path in ["/api/search?q=x&in=2020-01-01", "/api/feed?tag=nobody"] {
        let (status, body) = get(base, path, "");
        assert!(!body.contains("--"), "{path}: {status} {body}");
    }
}

#[test]
fn idle_and_half_sent_connections_are_closed_and_do_not_hold_a_stop() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let addr = server.base.trim_start_matches("http://").to_string();
    let idle = TcpStream::connect(&addr).unwrap();
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /api/info HTTP/1.1\r\nHost: loc")
        .unwrap();
    let started = Instant::now();
    for mut socket in [idle, half.try_clone().unwrap()] {
        socket
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut rest = Vec::new();
        let _ = socket.read_to_end(&mut rest);
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    // A half-sent request does not keep Ctrl-C from stopping the server.
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /api/info HTTP/1.1\r\nHost: loc")
        .unwrap();
    let stopping = Instant::now();
    let code = server.interrupt();
    assert_eq!(code, 0);
    assert!(
        stopping.elapsed() < Duration::from_secs(8),
        "{:?}",
        stopping.elapsed()
    );
}

#[test]
fn connections_past_the_file_limit_are_told_busy_and_searches_go_on() {
    let index = small_index_copy();
    let exe = env!("CARGO_BIN_EXE_papers");
    let mut sh = Command::new("sh");
    sh.env_clear();
    for (key, value) in papers().get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    let mut child = sh
        .env("PAPERS_INDEX", index.path())
        .args([
            "-c",
            "ulimit -n 100; exec \"$0\" serve --addr 127.0.0.1:0",
            exe,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("the server said where").unwrap();
        if let Some(rest) = line.split("on http://").nth(1) {
            break format!("http://{}", rest.split('/').next().unwrap());
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let addr = base.trim_start_matches("http://").to_string();
    // 300 idle sockets: more than the file limit allows.
    let idle: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(&addr).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let busy = get(&base, "/api/info", "");
    json_error(&busy, 503);
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    let (status, body) = get(&base, "/api/search?q=rotary&k=3", "");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200, "{body}");
}

/// `papers mcp` on an index, with its stdin and stdout.
struct Mcp {
    child: Child,
    replies: std::sync::mpsc::Receiver<Value>,
}

impl Mcp {
    fn start(index: &std::path::Path) -> Mcp {
        Mcp::start_with(index, &[])
    }

    fn start_with(index: &std::path::Path, args: &[&str]) -> Mcp {
        let mut child = papers()
            .env("PAPERS_INDEX", index)
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if send.send(value).is_err() {
                    return;
                }
            }
        });
        Mcp { child, replies }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    #[track_caller]
    fn reply(&self) -> Value {
        self.replies
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer to every line")
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_line_on_mcps_stdin_gets_an_answer() {
    let index = small_index_copy();
    let mut mcp = Mcp::start(index.path());
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"search","arguments":{{"query":{}"x"{}}}}}}}"#,
        "[".repeat(500),
        "]".repeat(500)
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"search","arguments":{{"query":"{}"}}}}}}"#,
        "a".repeat(100 << 20)
    );
    let cases: Vec<(Vec<u8>, Value, i64)> = vec![
        (b"this is not json".to_vec(), Value::Null, -32700),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"ping\",\"x\":\"\xff\"}".to_vec(),
            Value::Null,
            -32700,
        ),
        (deep.into_bytes(), 41.into(), -32600),
        (huge.into_bytes(), 42.into(), -32600),
        (
            br#"[{"jsonrpc":"2.0","id":43,"method":"ping"}]"#.to_vec(),
            Value::Null,
            -32600,
        ),
        (
            br#"{"jsonrpc":"1.0","id":44,"method":"ping"}"#.to_vec(),
            44.into(),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":45,"method":"tools/call","params":{"name":7}}"#.to_vec(),
            45.into(),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":46,"method":"initialize","params":[1,2]}"#.to_vec(),
            46.into(),
            -32602,
        ),
    ];
    for (line, id, code) in cases {
        mcp.send(&line);
        let reply = mcp.reply();
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert!(reply.as_object().unwrap().contains_key("id"), "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], code, "{reply}");
    }
    // And it still serves a well-formed session.
    mcp.send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    assert_eq!(mcp.reply()["id"], 1);
    mcp.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    mcp.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"rotary position encoding","k":3}}}"#);
    let reply = mcp.reply();
    assert_eq!(reply["id"], 2, "{reply}");
    assert_eq!(reply["result"]["isError"], false, "{reply}");
}

#[test]
fn work_past_its_deadline_stops_and_frees_its_worker() {
    crate::needs!(Seeds);
    let index = &crate::util::seed_index().dir;
    let server = Server::start(index, &["--workers", "1", "--timeout", "1"]);
    // Every pair of 578 records with texts compared: seconds of work.
    let started = Instant::now();
    let slow = server.get("/api/dupes?min_score=-1&min_overlap=0&k=1000");
    assert_eq!(slow.0, 503, "{}", slow.1);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // Its work stopped: the one worker is free for the next request at
    // once (it would wait out the limit and get a 503 otherwise).
    let next = server.get("/api/info");
    assert_eq!(next.0, 200, "{}", next.1);
}

#[test]
fn the_feed_document_is_refused_to_other_sites_and_hosts_are_parsed_strictly() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let base = &server.base;
    // `/feed` costs what `/api/feed` costs: another site's page may not
    // have it made; a feed reader, which sends neither header, may.
    json_error(&get(base, "/feed", "Sec-Fetch-Site: cross-site\r\n"), 403);
    json_error(&get(base, "/feed", "Origin: http://evil.example\r\n"), 403);
    let reader = get(base, "/feed", "");
    assert_eq!(reader.0, 200, "{}", reader.1);
    assert!(reader.1.contains("<rss"), "{}", reader.1);

    // Host values that are not `name[:port]` name no server.
    let port = base.rsplit(':').next().unwrap();
    for host in [
        "localhost:".to_string(),
        "localhost:99999".to_string(),
        format!("localhost:{port}:{port}"),
        format!("[::1]junk:{port}"),
        "user@localhost".to_string(),
    ] {
        let request =
            format!("GET /api/info HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        let answer = raw(base, &request);
        assert_ne!(answer.0, 200, "{host}: {}", answer.1);
        assert!(!answer.1.contains("records"), "{host}: {}", answer.1);
    }

    // An --allow-host that could never match is refused when given.
    for (given, why) in [
        ("papers.lan:7474", "has a port"),
        ("http://papers.lan", "is a URL"),
        ("bad name", "is not a host name"),
    ] {
        run(papers(), &["serve", "--allow-host", given]).fails(2, &["--allow-host", why]);
    }
}

#[test]
fn errors_clip_what_they_echo_and_name_parameters_as_mcp_does() {
    let index = small_index_copy();
    let dir = index.path();
    let huge = "t".repeat(100_000);
    let refused = papers_in(dir, &["tag", &huge, "0c5bf8d0"]).fails(2, &["more characters"]);
    assert!(
        refused.stderr.len() < 1_000,
        "{} bytes echoed",
        refused.stderr.len()
    );
    papers_in(dir, &["tag", "pos", "0c5bf8d0"]).ok();

    let mut mcp = Mcp::start_with(dir, &["--allow-write"]);
    mcp.send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
    assert_eq!(mcp.reply()["id"], 1);
    mcp.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // A paper that is not in the tag: the error names `ids`, MCP's word.
    mcp.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"untag","arguments":{"tag":"pos","ids":["42adb744"]}}}"#);
    let reply = mcp.reply();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("ids: 42adb744 is not in tag `pos`"), "{text}");
    assert!(!text.contains("ID"), "{text}");
    // A 100 kB tag name over MCP is clipped as well.
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"tag","arguments":{{"tag":"{huge}","ids":["0c5bf8d0"]}}}}}}"#
    );
    mcp.send(line.as_bytes());
    let reply = mcp.reply();
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.len() < 1_000 && text.contains("more characters"),
        "{}",
        &text[..200.min(text.len())]
    );
    // The digest prompt names the tool in one pair of backticks.
    mcp.send(br#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"digest","arguments":{"tag":"pos"}}}"#);
    let reply = mcp.reply();
    let text = reply["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("Call the `feed` tool with tags [\"pos\"]"),
        "{text}"
    );
    assert_eq!(text.matches('`').count() % 2, 0, "{text}");

    // --allow-write says all it lets through.
    let help = run(papers(), &["serve", "--help"]).ok().stdout;
    for part in ["seen / read", "POST /api/mark", "`mark`"] {
        assert!(help.contains(part), "{part}: {help}");
    }
}

#[test]
fn every_refusal_at_mcp_and_of_an_oversized_head_is_json() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let base = &server.base;
    let host = base.trim_start_matches("http://");
    let post = |headers: &str, body: &str| {
        raw(
            base,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    // The MCP transport's own refusals: wrong method, Accept, type, size.
    let wrong_method = get(base, "/mcp", "");
    json_error(&wrong_method, 405);
    json_error(
        &post(
            "Content-Type: application/json\r\nAccept: text/plain\r\n",
            "{}",
        ),
        406,
    );
    let both = "Accept: application/json, text/event-stream\r\n";
    json_error(
        &post(&format!("{both}Content-Type: text/plain\r\n"), "{}"),
        415,
    );
    let big = format!("\"{}\"", "a".repeat(2 << 20));
    json_error(
        &post(&format!("{both}Content-Type: application/json\r\n"), &big),
        413,
    );

    // A head hyper refuses before any route: a 1 MB target, a 100 kB one.
    for (size, status) in [(1 << 20, 431), (100_000, 414)] {
        let mut socket = TcpStream::connect(host).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let request = format!(
            "GET /api/search?q={} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
            "a".repeat(size)
        );
        // The server answers before it has read it all, and closes.
        let _ = socket.write_all(request.as_bytes());
        let mut answer = Vec::new();
        let _ = socket.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_default();
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{answer}");
        json_error(&(status, body.to_string()), status);
    }
    // And the server goes on answering.
    assert_eq!(get(base, "/api/info", "").0, 200);
}

#[test]
fn a_server_write_while_another_run_writes_is_refused_and_never_applied_later() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &["--allow-write"]);
    let base = &server.base;
    let host = base.trim_start_matches("http://").to_string();
    let post = |path: &str, headers: &str, body: &str| {
        raw(
            base,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    };
    let mcp_tag = || {
        post(
            "/mcp",
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2025-06-18\r\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tag","arguments":{"tag":"pos","ids":["0c5bf8d0"]}}}"#,
        )
    };
    // What an `index` run holds while it writes.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(index.path().join("lock"))
        .unwrap();
    lock.lock().unwrap();

    let started = Instant::now();
    let mark = post("/api/mark?state=seen&id=0c5bf8d0", "", "");
    let refused = json_error(&mark, 503);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("nothing was changed"),
        "{refused}"
    );
    let tag = mcp_tag();
    assert_eq!(tag.0, 200, "{}", tag.1);
    let reply: Value = serde_json::from_str(&tag.1).unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(reply
        .to_string()
        .contains("another papers command is writing"));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "refused in {:?}, within the request's limit",
        started.elapsed()
    );
    // Searches go on answering meanwhile.
    assert_eq!(get(base, "/api/search?q=rotary", "").0, 200);

    // The run ends; what was refused was never applied.
    lock.unlock().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let tags: Value = papers_in(index.path(), &["tags", "--json"])
        .ok()
        .json_lines::<Value>()
        .into();
    assert_eq!(tags, Value::Array(Vec::new()), "no tag was made later");
    let again = post("/api/mark?state=seen&id=0c5bf8d0", "", "");
    assert_eq!(again.0, 200, "{}", again.1);
    let marked: Value = serde_json::from_str(&again.1).unwrap();
    assert_eq!(marked["changed"], 1, "not marked before: {marked}");
    let tag = mcp_tag();
    assert!(tag.1.contains(r#""isError":false"#), "{}", tag.1);
}

#[test]
fn a_body_sent_slowly_is_cut_off_with_a_json_408() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let base = &server.base;
    let host = base.trim_start_matches("http://");
    let mut socket = TcpStream::connect(host).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let started = Instant::now();
    // A head that promises 200 bytes, then two of them, then nothing.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{{\""
    );
    socket.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let waited = started.elapsed();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_default();
    assert!(
        head.starts_with("HTTP/1.1 408 "),
        "after {waited:?}: {answer}"
    );
    json_error(&(408, body.to_string()), 408);
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    // Whole bodies are read as before.
    let ok = raw(
        base,
        &format!(
            "POST /api/mark?state=seen&id=0c5bf8d0 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
             Content-Length: 0\r\n\r\n"
        ),
    );
    assert_eq!(ok.0, 403, "no --allow-write: refused as before: {}", ok.1);
}
