//! `papers serve`: the real binary as a server, a real HTTP client (ureq)
//! against it, and a real browser (headless Chromium, where installed)
//! on its page.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{papers, papers_in, sample_data, small_index_copy};

/// A running `papers serve` on a free port, stopped when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Server {
    /// Starts the server on the index in `index` and waits for its address.
    pub fn start(index: &Path, extra: &[&str]) -> Server {
        let mut cmd = papers();
        cmd.env("PAPERS_INDEX", index)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("papers serve starts");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("papers serve said where it listens")
                .unwrap();
            if let Some(rest) = line.split("on http://").nth(1) {
                break format!("http://{}", rest.split('/').next().unwrap());
            }
        };
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Server { child, base }
    }

    /// GETs `path`: the status and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let url = format!("{}{path}", self.base);
        match ureq::get(&url).timeout(Duration::from_secs(60)).call() {
            Ok(response) => (response.status(), response.into_string().unwrap()),
            Err(ureq::Error::Status(code, response)) => (code, response.into_string().unwrap()),
            Err(e) => panic!("{url}: {e}"),
        }
    }

    /// GETs `path`, expecting 200 and JSON.
    #[track_caller]
    pub fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "{path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
    }

    /// Sends SIGINT (Ctrl-C) and returns the exit code.
    pub fn interrupt(mut self) -> i32 {
        let pid = self.child.id().to_string();
        std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        std::mem::forget(self);
        code
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CLI's JSON Lines as one JSON array.
fn cli_array(index: &Path, args: &[&str]) -> Value {
    let run = papers_in(index, args).ok();
    Value::Array(
        run.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// The `id` of every hit of a JSON array, in order.
pub fn ids(hits: &Value) -> Vec<String> {
    hits.as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_api_answers_with_the_clis_json() {
    let index = small_index_copy();
    let dir = index.path();
    let server = Server::start(dir, &[]);
    let q = "position encoding for long contexts";
    let url_q = "position%20encoding%20for%20long%20contexts";

    // Search, in each mode and with the CLI's flags as parameters.
    for (params, flags) in [
        ("k=5", vec!["-k", "5"]),
        ("k=3&mode=semantic", vec!["-k", "3", "--mode", "semantic"]),
        ("k=4&mode=lexical", vec!["-k", "4", "--mode", "lexical"]),
        ("min_score=0.3&k=10", vec!["--min-score", "0.3", "-k", "10"]),
        ("since=2024-01-01", vec!["--since", "2024-01-01"]),
        ("strict=1&k=3", vec!["--strict", "-k", "3"]),
    ] {
        let api = server.json(&format!("/api/search?q={url_q}&{params}"));
        let mut args = vec!["search", "--json", q];
        args.extend(flags);
        assert_eq!(api, cli_array(dir, &args), "search {params}");
    }
    // The verdict on every hit, and a typo corrected as the CLI corrects it.
    let api = server.json(&format!("/api/search?q={url_q}&k=3"));
    assert!(
        api.as_array()
            .unwrap()
            .iter()
            .all(|h| h["match"].is_string()),
        "{api}"
    );
    let typo = "positon encodng for long contexts";
    let api = server.json("/api/search?q=positon%20encodng%20for%20long%20contexts&k=3");
    assert_eq!(api, cli_array(dir, &["search", "--json", "-k", "3", typo]));
    assert_eq!(
        api[0]["searched"], "position encoding for long contexts",
        "{api}"
    );
    let all = cli_array(
        dir,
        &["search", "--json", "-k", "10", "--min-score", "0", q],
    );
    let [a, b, c] = [0, 1, 2].map(|i| all[i]["id"].as_str().unwrap().to_string());

    // Similar to a set, away from another; ids as prefixes.
    let api = server.json(&format!(
        "/api/similar?id={}&id={}&not={}&k=4",
        &a[..6],
        b,
        c
    ));
    let cli = cli_array(dir, &["similar", "--json", &a, &b, "--not", &c, "-k", "4"]);
    assert_eq!(api, cli);
    assert!(!ids(&api).contains(&a) && !ids(&api).contains(&c));

    // One paper, the list, the summary, the pairs.
    let shown: Value = papers_in(dir, &["show", "--json", &a]).ok().json();
    assert_eq!(server.json(&format!("/api/papers/{}", &a[..8])), shown);
    assert_eq!(
        server.json("/api/list?limit=1000"),
        cli_array(dir, &["list", "--json"])
    );
    assert_eq!(ids(&server.json("/api/list?offset=2&limit=3")).len(), 3);
    let info: Value = papers_in(dir, &["info", "--json"]).ok().json();
    assert_eq!(server.json("/api/info"), info);
    assert_eq!(
        server.json("/api/dupes?min_score=0.3&min_overlap=0"),
        cli_array(
            dir,
            &[
                "dupes",
                "--json",
                "--min-score",
                "0.3",
                "--min-overlap",
                "0"
            ]
        )
    );

    // The page: a form with a search box.
    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("<form") && page.contains("name=\"q\""));
    assert!(
        !page.contains("://cdn"),
        "the page loads nothing from elsewhere"
    );

    // Ctrl-C stops it cleanly.
    assert_eq!(server.interrupt(), 0);
}

#[test]
fn bad_requests_get_a_json_error_naming_the_parameter() {
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let long = "a".repeat(5000);
    for (path, status, parameter) in [
        ("/api/search?q=x&k=0", 400, Some("k")),
        ("/api/search?q=x&k=1001", 400, Some("k")),
        ("/api/search?q=x&k=ten", 400, Some("k")),
        ("/api/search?k=3", 400, Some("q")),
        ("/api/search?q=%20%20", 400, Some("q")),
        (&format!("/api/search?q={long}") as &str, 400, Some("q")),
        ("/api/search?q=x&mode=fuzzy", 400, Some("mode")),
        ("/api/search?q=x&min_score=2", 400, Some("min_score")),
        ("/api/search?q=x&min_score=NaN", 400, Some("min_score")),
        ("/api/search?q=x&since=2023-02-29", 400, Some("since")),
        ("/api/search?q=x&limit=3", 400, Some("limit")),
        ("/api/similar?k=3", 400, Some("id")),
        ("/api/similar?id=ffffffff", 404, Some("id")),
        ("/api/similar?id=zz", 400, Some("id")),
        ("/api/papers/ffffffff", 404, Some("id")),
        ("/api/list?limit=0", 400, Some("limit")),
        ("/api/dupes?min_overlap=1.5", 400, Some("min_overlap")),
        ("/api/nothing", 404, None),
    ] {
        let (got, body) = server.get(path);
        assert_eq!(got, status, "{path}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert!(
            error["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
        assert_eq!(error["parameter"].as_str(), parameter, "{path}: {body}");
    }
    // Still up, and the index untouched by any of it.
    assert_eq!(server.json("/api/info")["records"], 10);
}

#[test]
fn a_commit_by_another_process_is_answered_without_a_restart() {
    let index = small_index_copy();
    let dir = index.path();
    let server = Server::start(dir, &[]);
    let before = server.json("/api/info");
    assert_eq!(before["records"], 10);
    let next = sample_data().join("daily-2024-05-02.txt");
    papers_in(dir, &["index", next.to_str().unwrap()]).ok();
    let records: u64 = papers_in(dir, &["info", "--json"]).ok().json::<Value>()["records"]
        .as_u64()
        .unwrap();
    assert!(records > 10);
    let started = Instant::now();
    loop {
        let info = server.json("/api/info");
        if info["records"].as_u64() == Some(records) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server still answers from the old commit: {info}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("new commit answered after {:?}", started.elapsed());
    // A record of the new dump is there, and searches answer as the CLI.
    let list = cli_array(dir, &["list", "--json"]);
    let added = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["sources"][0]["file"].as_str() == Some("daily-2024-05-02.txt"))
        .expect("a record of the new dump");
    let id = added["id"].as_str().unwrap();
    assert_eq!(server.json(&format!("/api/papers/{id}")), *added);
    assert_eq!(
        server.json("/api/search?q=language%20models&k=5"),
        cli_array(dir, &["search", "--json", "-k", "5", "language models"])
    );
}

/// Headless Chromium, if this machine has it.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            std::process::Command::new(name)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// The page at `url` after its script ran, as Chromium's DOM.
pub fn rendered(browser: &str, url: &str) -> String {
    rendered_with(browser, url, &[])
}

/// [`rendered`] with more of Chromium's switches.
pub fn rendered_with(browser: &str, url: &str, switches: &[&str]) -> String {
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
        ])
        .args(switches)
        .args(["--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ids of the hits the page shows, in order.
pub fn shown_ids(dom: &str) -> Vec<String> {
    dom.split("data-id=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_page_searches_and_finds_similar_papers_in_a_real_browser() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no Chromium on this machine (Debian: apt-get install chromium)");
        return;
    };
    let index = small_index_copy();
    let server = Server::start(index.path(), &[]);
    let dom = rendered(
        browser,
        &format!("{}/?q=rotary%20position%20encoding", server.base),
    );
    let want = ids(&server.json("/api/search?q=rotary%20position%20encoding&k=20"));
    assert!(!want.is_empty());
    assert_eq!(
        shown_ids(&dom),
        want,
        "the page shows the API's hits in order"
    );
    assert!(
        dom.contains("class=\"evidence\""),
        "hits show their evidence"
    );
    // A typo: the page says what it searched for, and the verdict.
    let typo = rendered(
        browser,
        &format!("{}/?q=rotary%20positon%20encodng", server.base),
    );
    assert!(
        typo.contains(
            "“rotary position encoding” (searched for that; you typed “rotary positon encodng”)"
        ),
        "{typo}"
    );
    assert!(typo.contains(" match"), "the verdict is shown");

    let similar = rendered(browser, &format!("{}/?similar={}", server.base, want[0]));
    let want_similar = ids(&server.json(&format!("/api/similar?id={}&k=20", want[0])));
    assert_eq!(shown_ids(&similar), want_similar);

    let paper = rendered(
        browser,
        &format!("{}/?paper={}", server.base, &want[0][..8]),
    );
    assert!(paper.contains("<article>") && paper.contains(&format!("id {}", want[0])));
}
