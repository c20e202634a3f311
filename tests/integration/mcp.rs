//! `papers mcp`: the official MCP Python SDK's client (tests/mcp/client.py)
//! drives the real binary over stdio; its transcript is checked against the
//! CLI's answers. The SDK lives in a throwaway venv: `PAPERS_MCP_PYTHON`
//! names its python (`.ci/run` makes one); without it the test skips.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{papers_in, run, small_index_copy};

/// The python that has the MCP SDK, if any: `PAPERS_MCP_PYTHON`, which CI
/// sets (and then it must work), else a `python3` that imports `mcp`.
fn python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("PAPERS_MCP_PYTHON") {
        return Some(python.into());
    }
    let found = std::process::Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    found.then(|| "python3".into())
}

#[test]
fn a_real_mcp_client_searches_shows_and_gets_tool_errors() {
    let Some(python) = python() else {
        eprintln!("skipped: no MCP Python SDK (set PAPERS_MCP_PYTHON to a python with `mcp`)");
        return;
    };
    let index = small_index_copy();
    let dir = index.path();
    let liked = crate::util::top_id(dir, &["transformers position encoding causal mask"]);
    papers_in(dir, &["tag", "pos", &liked]).ok();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut cmd = crate::util::papers();
    cmd.env_remove("PAPERS_INDEX");
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    let mut python_cmd = std::process::Command::new(&python);
    // The client passes PAPERS_*, HF_*, HOME and PATH on to the server.
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => python_cmd.env(k, v),
            None => python_cmd.env_remove(k),
        };
    }
    python_cmd.env_remove("PAPERS_INDEX");
    let transcript = run(
        python_cmd,
        &[
            script.to_str().unwrap(),
            env!("CARGO_BIN_EXE_papers"),
            dir.to_str().unwrap(),
        ],
    )
    .ok();
    eprintln!("MCP transcript: {}", transcript.stdout.trim());
    let t: Value = transcript.json();

    assert_eq!(t["server"], "papers");
    assert_eq!(
        t["tools"],
        serde_json::json!({
            "search": ["k", "query"],
            "similar": ["ids", "k", "not"],
            "show": ["id"],
            "info": [],
            "feed": ["k", "since", "tags"],
            "tags": [],
        })
    );
    let text = |name: &str| -> Value {
        assert_eq!(t[name]["is_error"], false, "{name}: {}", t[name]);
        serde_json::from_str(t[name]["text"][0].as_str().unwrap()).unwrap()
    };
    // search: the CLI's hits, ids and evidence included.
    let cli: Vec<Value> = papers_in(
        dir,
        &[
            "search",
            "--json",
            "-k",
            "3",
            "position encoding for long contexts",
        ],
    )
    .ok()
    .json_lines();
    assert_eq!(text("search"), Value::Array(cli.clone()));
    assert!(cli
        .iter()
        .all(|h| h["evidence"].as_str().is_some_and(|e| !e.is_empty())));
    let first = cli[0]["id"].as_str().unwrap();
    let shown: Value = papers_in(dir, &["show", "--json", first]).ok().json();
    assert_eq!(text("show"), shown);
    let similar: Vec<Value> = papers_in(dir, &["similar", "--json", "-k", "2", first])
        .ok()
        .json_lines();
    assert_eq!(text("similar"), Value::Array(similar));
    assert_eq!(text("info")["records"], 10);
    // feed: the CLI's feed, each hit saying why.
    let feed: Vec<Value> = papers_in(dir, &["feed", "--json", "-k", "3"])
        .ok()
        .json_lines();
    assert_eq!(feed.len(), 3);
    assert_eq!(text("feed"), Value::Array(feed));
    assert_eq!(text("feed")[0]["because"]["id"], liked.as_str());
    assert_eq!(text("tags")[0]["tag"], "pos");

    // Bad calls are tool errors with a message, not protocol failures.
    for (name, needle) in [
        ("show_unknown", "unknown id `ffffffff`"),
        ("search_k0", "k:"),
        ("similar_none", "ids"),
        ("feed_unknown", "no tag `nope`"),
    ] {
        assert_eq!(t[name]["is_error"], true, "{name}: {}", t[name]);
        let message = t[name]["text"][0].as_str().unwrap();
        assert!(message.contains(needle), "{name}: {message}");
    }
}
