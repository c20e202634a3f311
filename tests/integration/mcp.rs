//! MCP: the official MCP Python SDK's client (tests/mcp/client.py) drives
//! the real binary, over stdio (`papers mcp`) and over Streamable HTTP
//! (`papers serve`'s `/mcp`), in the SDK's default `auto` mode (the
//! 2026-07-28 revision) and its `legacy` mode (the `initialize`
//! handshake). The SDK itself checks every `structuredContent` against its
//! tool's `outputSchema`; the transcript is checked against the CLI's
//! answers. The SDK lives in a throwaway venv: `PAPERS_MCP_PYTHON` names
//! its python (`.ci/run` makes one); without it the tests skip.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::serve::Server;
use crate::util::{papers_in, run, small_index_copy};

/// The python that has the MCP SDK (v2), if any: `PAPERS_MCP_PYTHON`,
/// which CI sets (and then it must work), else a `python3` that has it.
fn python() -> Option<PathBuf> {
    crate::util::python_with("PAPERS_MCP_PYTHON", "from mcp import Client")
}

/// Runs the client with `args` and returns its transcript.
fn client(python: &Path, args: &[&str]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut python_cmd = std::process::Command::new(python);
    // The client passes PAPERS_*, HF_*, HOME and PATH on to a stdio server.
    for (k, v) in crate::util::papers().get_envs() {
        match v {
            Some(v) => python_cmd.env(k, v),
            None => python_cmd.env_remove(k),
        };
    }
    python_cmd.env_remove("PAPERS_INDEX");
    python_cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    let mut all = vec![script.to_str().unwrap()];
    all.extend(args);
    let transcript = run(python_cmd, &all).ok();
    eprintln!("MCP transcript ({args:?}): {}", transcript.stdout.trim());
    transcript.json()
}

/// An index of ten seed abstracts with one tag, `pos`, and the paper it likes.
fn tagged_index() -> (tempfile::TempDir, String) {
    let index = small_index_copy();
    let liked = crate::util::top_id(
        index.path(),
        &["transformers position encoding causal mask"],
    );
    papers_in(index.path(), &["tag", "pos", &liked]).ok();
    // On the reading list: the liked paper, saved.
    papers_in(index.path(), &["mark", "saved", &liked]).ok();
    (index, liked)
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect()
}

/// Checks one transcript against the CLI on `dir`.
fn check(t: &Value, dir: &Path, liked: &str, mode: &str, write: bool) {
    check_handshake(t, mode, write);
    // No call raised: every structured answer fitted its schema.
    for (name, call) in t.as_object().unwrap() {
        assert!(call.get("exception").is_none(), "{name}: {call}");
    }
    check_search(t, dir, liked);
    check_papers(t, dir, liked);
    check_errors(t);
    check_writes(t, write);
}

/// A call's structured answer, which must not be an error; its text block
/// is the same object, for older clients.
fn ok<'a>(t: &'a Value, name: &str) -> &'a Value {
    assert_eq!(t[name]["is_error"], false, "{name}: {}", t[name]);
    let text: Value = serde_json::from_str(t[name]["text"][0].as_str().unwrap()).unwrap();
    assert_eq!(text, t[name]["structured"], "{name}");
    &t[name]["structured"]
}

/// The protocol each mode negotiates, the tools (writing ones only when
/// allowed), their arguments, the prompts and the resource template.
fn check_handshake(t: &Value, mode: &str, write: bool) {
    assert_eq!(t["server"], "papers");
    let protocol = t["protocol"].as_str().unwrap();
    match mode {
        "auto" => assert_eq!(protocol, "2026-07-28"),
        _ => assert!(protocol < "2026-07-28", "legacy negotiated {protocol}"),
    }
    assert!(t["instructions"].as_str().unwrap().contains("untrusted"));

    // The tools, in a fixed order, each with an object output schema.
    let mut names = vec![
        "search",
        "similar",
        "show",
        "info",
        "feed",
        "tags",
        "reading_list",
    ];
    if write {
        names.extend(["tag", "mark", "untag"]);
    }
    let tools = t["tools"].as_array().unwrap();
    let listed: Vec<&str> = tools.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(listed, names);
    for tool in tools {
        assert_eq!(tool["output_type"], "object", "{tool}");
        assert!(tool["title"].as_str().is_some_and(|s| !s.is_empty()));
        let reads = !matches!(tool["name"].as_str(), Some("tag" | "mark" | "untag"));
        assert_eq!(tool["read_only"], reads, "{tool}");
    }
    let search_args: Vec<&str> = tools[0]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for filter in [
        "query",
        "k",
        "mode",
        "detail",
        "in",
        "since",
        "until",
        "listed_since",
        "listed_until",
        "author",
        "category",
    ] {
        assert!(search_args.contains(&filter), "search takes {filter}");
    }
    assert_eq!(
        t["prompts"],
        serde_json::json!(["digest", "literature", "compare"])
    );
    assert_eq!(t["templates"], serde_json::json!(["papers://paper/{id}"]));
}

/// search against the CLI's: hits, evidence, verdicts, the corrected typo,
/// the sizes of answers, filters; and the reading list.
fn check_search(t: &Value, dir: &Path, liked: &str) {
    // search: the CLI's hits and evidence, a link to each.
    let query = "position encoding for long contexts";
    let cli: Vec<Value> = papers_in(dir, &["search", "--json", "-k", "3", query])
        .ok()
        .json_lines();
    let hits = &ok(t, "search_k3")["hits"];
    assert_eq!(ids(hits), ids(&Value::Array(cli.clone())));
    for (hit, line) in hits.as_array().unwrap().iter().zip(&cli) {
        assert_eq!(hit["evidence"], line["evidence"]);
        let score = line["score"].as_f64().unwrap();
        assert!((hit["score"].as_f64().unwrap() - score).abs() < 1e-4);
        assert_eq!(
            hit["uri"],
            format!("papers://paper/{}", line["id"].as_str().unwrap())
        );
        assert!(
            hit.get("abstract").is_none(),
            "evidence detail has no abstract"
        );
    }
    assert_eq!(t["search_k3"]["links"].as_array().unwrap().len(), 3);
    // The verdict on every hit, as the CLI gives it; a typo corrected and
    // said; --strict's nothing for a query about nothing.
    for (hit, line) in hits.as_array().unwrap().iter().zip(&cli) {
        assert_eq!(hit["match"], line["match"]);
    }
    // The reading list, as `papers list --saved` gives it.
    let saved = ok(t, "reading_list");
    assert_eq!(saved["state"], "saved");
    let cli: Vec<Value> = papers_in(dir, &["list", "--saved", "--json"])
        .ok()
        .json_lines();
    assert_eq!(ids(&saved["papers"]), ids(&Value::Array(cli)));
    assert_eq!(saved["papers"][0]["id"], liked);
    let typo = ok(t, "search_typo");
    assert_eq!(
        typo["searched"], "position encoding for long contexts",
        "{typo}"
    );
    assert_eq!(ids(&typo["hits"]), ids(hits));
    let none = ok(t, "search_none");
    assert_eq!(none["hits"][0]["match"], "none", "{none}");
    assert_eq!(ok(t, "search_strict")["hits"], Value::Array(vec![]));
    let default = ok(t, "search");
    assert_eq!(default["detail"], "evidence");
    assert_eq!(default["total"], default["returned"]);
    assert_eq!(default["truncated"], false);
    // A default answer under 5,000 tokens, the largest under 25,000.
    let bytes = t["search"]["bytes"].as_u64().unwrap();
    assert!(bytes < 20_000, "a default search is {bytes} bytes");
    let largest = ok(t, "search_largest");
    let bytes = t["search_largest"]["bytes"].as_u64().unwrap();
    assert!(bytes < 100_000, "the largest search is {bytes} bytes");
    assert_eq!(largest["detail"], "abstract");
    let (total, returned) = (largest["total"].as_u64(), largest["returned"].as_u64());
    assert_eq!(largest["truncated"], returned < total);
    assert!(largest["hits"][0]["abstract"].as_str().is_some());

    // The CLI's filters and mode: titles only, from one input.
    let filtered = ok(t, "search_filtered");
    let file = t["info"]["structured"]["sources"][0]["file"]
        .as_str()
        .unwrap();
    let cli: Vec<Value> = papers_in(
        dir,
        &[
            "search",
            "--json",
            "-k",
            "5",
            "--mode",
            "lexical",
            "--in",
            file,
            "attention",
        ],
    )
    .ok()
    .json_lines();
    assert_eq!(ids(&filtered["hits"]), ids(&Value::Array(cli)));
    for hit in filtered["hits"].as_array().unwrap() {
        assert!(hit.get("evidence").is_none(), "titles carry no evidence");
    }
}

/// show, the resource, similar, info, feed, tags and the prompts against
/// the CLI's.
fn check_papers(t: &Value, dir: &Path, liked: &str) {
    // show, the resource, similar, info, feed and tags.
    let first = ok(t, "search_k3")["hits"][0]["id"].as_str().unwrap();
    let shown: Value = papers_in(dir, &["show", "--json", first]).ok().json();
    let show = ok(t, "show");
    assert_eq!(show["id"], first);
    assert_eq!(show["abstract"], shown["text"]);
    // A text dump's record has no title or arXiv id: BibTeX says so in a
    // comment instead of an entry titled by a sentence of its abstract.
    let bibtex = show["bibtex"].as_str().unwrap();
    assert!(
        bibtex.starts_with("% papers") && bibtex.contains("not citable") && !bibtex.contains('@'),
        "{bibtex}"
    );
    assert_eq!(t["resource"][0], *show);
    let similar: Vec<Value> = papers_in(dir, &["similar", "--json", "-k", "2", first])
        .ok()
        .json_lines();
    assert_eq!(ids(&ok(t, "similar")["hits"]), ids(&Value::Array(similar)));
    assert_eq!(ok(t, "info")["records"], 10);
    let feed: Vec<Value> = papers_in(dir, &["feed", "--json", "-k", "3"])
        .ok()
        .json_lines();
    let mcp_feed = ok(t, "feed");
    assert_eq!(ids(&mcp_feed["hits"]), ids(&Value::Array(feed.clone())));
    assert_eq!(mcp_feed["hits"][0]["because"]["id"], liked);
    // Each hit carries the feed's verdict for it, as the CLI's does.
    for (ours, theirs) in mcp_feed["hits"].as_array().unwrap().iter().zip(&feed) {
        assert_eq!(ours["match"], theirs["match"], "{ours}");
    }
    assert_eq!(ids(&ok(t, "feed_tag")["hits"]), ids(&mcp_feed["hits"]));
    assert_eq!(ok(t, "tags")["tags"][0]["tag"], "pos");

    // Prompts: compare embeds the papers; digest names the tool to call.
    assert_eq!(
        t["prompt_compare"],
        serde_json::json!(["text", "resource", "resource"])
    );
    assert!(t["prompt_digest"].as_str().unwrap().contains("feed"));
}

/// Bad calls are tool errors in MCP's words.
fn check_errors(t: &Value) {
    // Naming the argument, not protocol failures.
    for (name, needle) in [
        ("show_unknown", "unknown id `ffffffff`"),
        ("search_k0", "k: '0' is not a whole number from 1 to 50"),
        ("search_k_text", "k: 'ten'"),
        ("search_k_over", "k: '51'"),
        ("search_bad_date", "since: '2024-02-30'"),
        ("search_unknown_arg", "limit: unknown parameter"),
        ("similar_none", "ids: missing"),
        ("feed_unknown", "no tag `nope`"),
        ("feed_tag_unknown", "no tag `nope`"),
        ("detail_bad", "detail: 'everything'"),
    ] {
        let error = &t["errors"][name];
        assert_eq!(error["is_error"], true, "{name}: {error}");
        let message = error["text"][0].as_str().unwrap();
        assert!(message.contains(needle), "{name}: {message}");
        assert!(!message.contains("--"), "{name} speaks CLI: {message}");
    }
}

/// The writing tools, with --allow-write; refused without.
fn check_writes(t: &Value, write: bool) {
    if write {
        assert_eq!(ok(t, "tag")["changed"], 1);
        let after = ok(t, "tags_after")["tags"].as_array().unwrap();
        assert!(after.iter().any(|x| x["tag"] == "agent" && x["liked"] == 1));
        assert_eq!(ok(t, "untag")["changed"], 1);
        // A paper marked read (named twice, counted once) leaves the feed.
        let mark = ok(t, "mark");
        assert_eq!(
            (mark["changed"].clone(), mark["unchanged"].clone()),
            (1.into(), 0.into())
        );
        let top = &t["feed"]["structured"]["hits"][0]["id"];
        let after = ok(t, "feed_after_mark")["hits"].as_array().unwrap();
        assert!(
            after.iter().all(|h| &h["id"] != top),
            "the read paper left the feed"
        );
        assert_eq!(ok(t, "mark_new")["changed"], 1);
        let bad = &t["mark_bad"];
        assert_eq!(bad["is_error"], true, "{bad}");
        assert!(bad["text"][0]
            .as_str()
            .unwrap()
            .contains("state: 'skimmed'"));
    } else {
        let refused = &t["tag_refused"];
        assert_eq!(refused["is_error"], true);
        assert!(refused["text"][0]
            .as_str()
            .unwrap()
            .contains("--allow-write"));
    }
}

#[test]
fn a_real_mcp_client_over_stdio_in_both_protocol_modes() {
    let Some(python) = python() else {
        eprintln!("skipped: no MCP Python SDK (set PAPERS_MCP_PYTHON to a python with `mcp`)");
        return;
    };
    let (index, liked) = tagged_index();
    let dir = index.path();
    let binary = env!("CARGO_BIN_EXE_papers");
    let index_arg = dir.to_str().unwrap();
    let t = client(
        &python,
        &["stdio", "auto", binary, index_arg, "--allow-write"],
    );
    check(&t, dir, &liked, "auto", true);
    let t = client(&python, &["stdio", "legacy", binary, index_arg]);
    check(&t, dir, &liked, "legacy", false);
}

#[test]
fn a_real_mcp_client_over_http_on_the_server_in_both_protocol_modes() {
    let Some(python) = python() else {
        eprintln!("skipped: no MCP Python SDK (set PAPERS_MCP_PYTHON to a python with `mcp`)");
        return;
    };
    let (index, liked) = tagged_index();
    let server = Server::start(index.path(), &[]);
    let url = format!("{}/mcp", server.base);
    for mode in ["auto", "legacy"] {
        let t = client(&python, &["http", mode, &url]);
        check(&t, index.path(), &liked, mode, false);
    }
    // Another site's page may not call the tools; the server is up.
    let refused = ureq::post(&url)
        .set("Origin", "http://evil.example")
        .set("Content-Type", "application/json")
        .send_string(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    match refused {
        Err(ureq::Error::Status(code, _)) => assert_eq!(code, 403),
        other => panic!("another origin got {other:?}"),
    }
    assert_eq!(server.json("/healthz")["records"], 10);
}
