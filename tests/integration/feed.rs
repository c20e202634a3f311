//! Tags and `papers feed`: the daily loop (index a dump, feed, tag) on the
//! real model and the sample dumps of `data/`, the feed's documents, its
//! answers to bad input, and the same feed over HTTP and in a browser.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::serve::{chromium, ids, rendered, shown_ids, Server};
use crate::util::{papers_in, sample_data, small_index_copy, top_id, Run};

fn dump(day: &str) -> String {
    sample_data()
        .join(format!("daily-2024-05-0{day}.txt"))
        .display()
        .to_string()
}

fn lines(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn listed(index: &Path) -> BTreeSet<String> {
    lines(&papers_in(index, &["list", "--json"]).ok())
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

/// Fails with exit `code`, saying it in one line that holds `needles`.
fn one_line_error(index: &Path, args: &[&str], code: i32, needles: &[&str]) {
    let run = papers_in(index, args);
    assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
    assert_eq!(
        run.stderr.trim().lines().count(),
        1,
        "{args:?}: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "{args:?}: {needle:?} not in {}",
            run.stderr
        );
    }
}

/// A copy of the first day's index with tag `pos` liking the position
/// encoding paper and not interested in the diffusion one; returns the
/// liked id.
fn tagged_index() -> (tempfile::TempDir, String) {
    let index = small_index_copy();
    let liked = top_id(
        index.path(),
        &["transformers position encoding causal mask"],
    );
    let unliked = top_id(index.path(), &["diffusion image sampling"]);
    assert_ne!(liked, unliked);
    papers_in(index.path(), &["tag", "pos", &liked[..8]]).ok();
    papers_in(index.path(), &["tag", "pos", "--not", &unliked]).ok();
    (index, liked)
}

#[test]
fn the_feed_ranks_exactly_what_the_last_index_run_added() {
    let (index, liked) = tagged_index();
    let before = listed(index.path());
    papers_in(index.path(), &["index", &dump("2")]).ok();
    let new: BTreeSet<String> = listed(index.path()).difference(&before).cloned().collect();
    assert!(new.len() >= 5, "{new:?}");

    let first = papers_in(index.path(), &["feed", "pos", "-k", "1000", "--json"]).ok();
    let hits = lines(&first);
    // The second call reads the profile the first one learnt: same feed.
    let again = papers_in(index.path(), &["feed", "pos", "-k", "1000", "--json"]).ok();
    assert_eq!(first.stdout, again.stdout);
    let ranked: BTreeSet<String> = hits
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ranked, new, "the feed ranks the new records, each once");
    let mut last = f64::INFINITY;
    for (i, hit) in hits.iter().enumerate() {
        let score = hit["score"].as_f64().unwrap();
        assert!(score > 0.0 && score < 1.0 && score <= last, "{hit}");
        last = score;
        assert_eq!(hit["rank"], i + 1);
        assert_eq!(hit["tag"], "pos");
        assert_eq!(hit["because"]["id"], liked.as_str());
        let evidence = hit["evidence"].as_str().unwrap();
        assert!(hit["text"].as_str().unwrap().contains(evidence), "{hit}");
    }
    // The paper closest to the liked one is at the top (a real ranking:
    // the liked paper is about attention in transformers; so is one of
    // the new ones, and nothing else is).
    let closest = hits
        .iter()
        .max_by(|a, b| {
            let s = |h: &Value| h["because"]["similarity"].as_f64().unwrap();
            s(a).total_cmp(&s(b))
        })
        .unwrap();
    assert_eq!(hits[0]["id"], closest["id"], "{}", hits[0]);

    let table = papers_in(index.path(), &["feed", "--table", "-k", "3"]).ok();
    let mut rows = table.stdout.lines();
    assert!(
        rows.next()
            .unwrap()
            .contains("records the last `papers index` run added"),
        "{}",
        table.stdout
    );
    assert!(rows.next().unwrap().contains("score"), "{}", table.stdout);
}

#[test]
fn the_feed_writes_markdown_rss_and_atom_and_takes_other_scopes() {
    let (index, _) = tagged_index();
    papers_in(index.path(), &["index", &dump("2")]).ok();
    let dir = tempfile::tempdir().unwrap();
    let rss = dir.path().join("feed.xml");
    papers_in(
        index.path(),
        &[
            "feed",
            "--format",
            "rss",
            "-k",
            "4",
            "-o",
            rss.to_str().unwrap(),
        ],
    )
    .ok();
    let text = std::fs::read_to_string(&rss).unwrap();
    assert!(text.starts_with("<?xml") && text.contains("<rss version=\"2.0\""));
    assert_eq!(text.matches("<item>").count(), 4, "{text}");
    assert_eq!(
        text.matches("<guid isPermaLink=\"false\">papers:").count(),
        4
    );

    let atom = papers_in(index.path(), &["feed", "--format", "atom", "-k", "2"]).ok();
    assert!(atom
        .stdout
        .contains("<feed xmlns=\"http://www.w3.org/2005/Atom\">"));
    assert_eq!(atom.stdout.matches("<entry>").count(), 2);
    let markdown = papers_in(index.path(), &["feed", "--format", "markdown", "-k", "2"]).ok();
    assert!(
        markdown.stdout.starts_with("# papers feed: pos"),
        "{}",
        markdown.stdout
    );
    assert!(markdown.stdout.contains("\n## 2. "), "{}", markdown.stdout);

    // --from: the first day's records (the tagged ones left out).
    let from = lines(&papers_in(index.path(), &["feed", "--from", &dump("1"), "-k", "100"]).ok());
    assert_eq!(from.len(), 10 - 2, "10 records, 2 of them tagged");
    // --since a day before any run: everything not tagged.
    let since = lines(
        &papers_in(
            index.path(),
            &["feed", "--since", "2000-01-01", "-k", "100"],
        )
        .ok(),
    );
    assert_eq!(since.len(), listed(index.path()).len() - 2);
    // --must and --exclude filter on words.
    let must = lines(
        &papers_in(
            index.path(),
            &[
                "feed",
                "--since",
                "2000-01-01",
                "--must",
                "model",
                "--exclude",
                "language",
                "-k",
                "100",
            ],
        )
        .ok(),
    );
    assert!(!must.is_empty() && must.len() < since.len());
    for hit in &must {
        let text = hit["text"].as_str().unwrap().to_lowercase();
        assert!(
            text.contains("model") && !text.contains("language"),
            "{text}"
        );
    }
}

#[test]
fn tags_survive_a_rebuild_and_untag_and_remove_show_in_the_counts() {
    let (index, liked) = tagged_index();
    let counts = |index: &Path| lines(&papers_in(index, &["tags", "--json"]).ok());
    let before = counts(index.path());
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["tag"], "pos");
    assert_eq!(before[0]["liked"], 1);
    assert_eq!(before[0]["not_interested"], 1);
    papers_in(index.path(), &["index", "--rebuild", &dump("1")]).ok();
    assert_eq!(counts(index.path()), before, "a rebuild keeps the tags");

    let other = top_id(index.path(), &["speech recognition accents"]);
    papers_in(index.path(), &["tag", "pos", &other]).ok();
    assert_eq!(counts(index.path())[0]["liked"], 2);
    papers_in(index.path(), &["remove", &other]).ok();
    let after = counts(index.path());
    assert_eq!(
        (after[0]["liked"].clone(), after[0]["missing"].clone()),
        (1.into(), 1.into())
    );
    papers_in(index.path(), &["untag", "pos", &other]).ok();
    papers_in(index.path(), &["untag", "pos", &liked]).ok();
    let left = counts(index.path());
    assert_eq!(
        (left[0]["liked"].clone(), left[0]["missing"].clone()),
        (0.into(), 0.into())
    );
}

#[test]
fn bad_tags_and_empty_feeds_get_one_line_answers() {
    let index = small_index_copy();
    let dir = index.path();
    one_line_error(dir, &["feed"], 1, &["no tags yet", "papers tag NAME"]);
    one_line_error(
        dir,
        &["tag", "two words", "0c5bf8d0"],
        2,
        &["tag", "' ' is not allowed"],
    );
    one_line_error(dir, &["tag", "a/b", "0c5bf8d0"], 2, &["'/' is not allowed"]);
    one_line_error(dir, &["tag", "", "0c5bf8d0"], 2, &["cannot be empty"]);
    one_line_error(dir, &["tag", "pos"], 2, &["name papers to tag"]);
    one_line_error(
        dir,
        &["tag", "pos", "ffff0000"],
        1,
        &["unknown id `ffff0000`"],
    );
    let id = top_id(dir, &["diffusion image sampling"]);
    papers_in(dir, &["tag", "meh", "--not", &id]).ok();
    one_line_error(
        dir,
        &["feed", "meh"],
        1,
        &["tag `meh` has no liked paper", "papers tag meh"],
    );
    one_line_error(dir, &["feed", "nope"], 1, &["no tag `nope`", "tags: meh"]);
    one_line_error(
        dir,
        &["untag", "meh", "0c5bf8d0"],
        2,
        &["is not in tag `meh`"],
    );
    let liked = top_id(dir, &["speech recognition accents"]);
    papers_in(dir, &["tag", "pos", &liked]).ok();
    // The same dump again adds nothing: nothing new to rank.
    papers_in(dir, &["index", &dump("1")]).ok();
    one_line_error(
        dir,
        &["feed", "pos"],
        1,
        &["nothing new", "added no records", "--since"],
    );
    one_line_error(
        dir,
        &["feed", "pos", "--since", "2999-01-01"],
        1,
        &["nothing new"],
    );
}

#[test]
fn the_server_serves_the_feed_and_follows_new_tags() {
    let (index, _) = tagged_index();
    papers_in(index.path(), &["index", &dump("2")]).ok();
    let server = Server::start(index.path(), &[]);
    let cli = lines(&papers_in(index.path(), &["feed", "pos", "-k", "5", "--json"]).ok());
    let api = server.json("/api/feed?tag=pos&k=5");
    assert_eq!(
        ids(&api),
        cli.iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        "the API's feed is the CLI's"
    );
    let (status, rss) = server.get("/feed?k=3");
    assert_eq!(status, 200);
    assert_eq!(rss.matches("<item>").count(), 3, "{rss}");
    let (status, body) = server.get("/api/feed?tag=nope");
    assert_eq!(status, 404);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["parameter"], "tag", "{body}");
    let (status, body) = server.get("/api/feed?k=0");
    assert_eq!(status, 400, "{body}");

    // A tag made by another process shows within a second or so.
    let id = top_id(index.path(), &["speech recognition accents"]);
    papers_in(index.path(), &["tag", "speech", &id]).ok();
    let started = Instant::now();
    while server.json("/api/tags").as_array().unwrap().len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the new tag never showed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    if let Some(browser) = chromium() {
        let dom = rendered(browser, &format!("{}/?feed&tag=pos", server.base));
        assert_eq!(shown_ids(&dom), ids(&server.json("/api/feed?tag=pos&k=30")));
        assert!(dom.contains("class=\"why\""), "feed hits say why");
    } else {
        eprintln!("skipped the browser part: no Chromium on this machine");
    }
}

#[test]
fn the_page_and_the_api_say_nothing_new_in_their_own_words() {
    let (index, _) = tagged_index();
    // The same dump again adds nothing: the last run has nothing new.
    papers_in(index.path(), &["index", &dump("1")]).ok();
    let server = Server::start(index.path(), &[]);
    let (status, body) = server.get("/api/feed?tag=pos");
    assert_eq!(status, 404, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    let message = error["error"].as_str().unwrap();
    assert!(message.contains("since=DATE or from=FILE"), "{message}");
    assert!(!message.contains("--"), "the API speaks CLI: {message}");
    let (status, body) = server.get("/api/search?q=x&since=2024-03-02&until=2024-03-01");
    assert_eq!(status, 400);
    assert!(!body.contains("--"), "the API speaks CLI: {body}");

    let Some(browser) = chromium() else {
        eprintln!("skipped the browser part: no Chromium on this machine");
        return;
    };
    let dom = rendered(browser, &format!("{}/?feed&tag=pos", server.base));
    let status = dom
        .split("id=\"status\"")
        .nth(1)
        .and_then(|s| s.split("</div>").next())
        .unwrap_or_default()
        .to_string();
    assert!(
        status.contains("Nothing new since the last index run"),
        "{status}"
    );
    assert!(
        status.contains("last 7 days"),
        "the page offers its own way on: {status}"
    );
    assert!(
        !status.contains("--") && !status.contains("since=DATE"),
        "{status}"
    );
    // That link ranks the week's papers: the dump indexed today is in it.
    let week = status
        .split("href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    let dom = rendered(browser, &format!("{}{week}", server.base));
    assert!(!shown_ids(&dom).is_empty(), "the week's feed shows papers");
}
