//! The feed over HTTP: `GET /api/feed` (the JSON array of `papers feed
//! --json`'s hit objects), `GET /feed` (RSS 2.0, or `format=atom` /
//! `markdown`: what a feed reader subscribes to), `GET /api/tags`, and
//! `POST /api/mark` (the page's marks, with `--allow-write` only).
//!
//! Parameters, as `papers feed` takes them: `tag` (repeatable; every tag
//! when absent), `k` (default 20), `since` (YYYY-MM-DD) or `from`
//! (repeatable input file names), `must` and `exclude` (repeatable). A
//! document with nothing new is an empty feed that says so, not an error:
//! a reader polls it every day.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;

use super::app::{App, Failure};
use crate::error::Error;
use crate::feed::{Feed, FeedRequest};
use crate::output::digest::{self, Digest};
use crate::output::feed::{feed_objects, tag_objects};
use crate::output::json;
use crate::request::{BadParam, Params, MAX_K};

/// The parameters every feed route takes.
const KNOWN: [&str; 6] = ["tag", "k", "since", "from", "must", "exclude"];

fn request(p: &Params) -> Result<FeedRequest, BadParam> {
    p.feed(&["tag"], 20, MAX_K)
}

/// `GET /api/feed`.
pub async fn api(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&KNOWN)?;
        let feed = searcher.feed(&request(&p)?)?;
        Ok(json::array(&feed_objects(&feed)))
    })
    .await
}

/// The 403 a server started without `--allow-write` answers a request to
/// `verb` papers; `None` when it writes.
fn read_only(app: &App, verb: &str) -> Option<Response> {
    (!app.writes()).then(|| {
        Failure::Forbidden(format!(
            "this server does not write the index: start it with `papers serve --allow-write` \
             to {verb} papers"
        ))
        .into_response_now()
    })
}

/// `POST /api/mark?state=STATE&id=ID...`: the page's marks, when the
/// server may write ([`App`]'s `allow_write`); answers `mark --json`'s
/// object.
pub async fn mark(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    if let Some(refused) = read_only(&app, "mark") {
        return refused;
    }
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&["state", "id"])?;
        let state = p
            .one("state")?
            .ok_or_else(|| BadParam::new("state", "missing: seen, read, saved or new"))?;
        let state = crate::index::reading::ReadingState::parse(state).map_err(|_| {
            BadParam::new(
                "state",
                format!("'{state}' is not one of new, seen, read, saved"),
            )
        })?;
        let ids = p.ids("id", true)?;
        let change = crate::write::mark(
            searcher.dir(),
            state,
            &crate::feed::Marked::Ids(ids),
            &crate::write::Quiet,
        )?;
        searcher.refresh_now();
        Ok(json::mark_object(&change))
    })
    .await
}

/// `POST /api/tag?tag=NAME&id=ID...[&not_interested=1]`: the page's
/// answers to its feed (like, not interested), when the server may write;
/// the tag is trained again at once (paid here, not by the next feed).
/// Answers `{tag, liked, not_interested, missing, changed}`.
pub async fn tag(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    if let Some(refused) = read_only(&app, "tag") {
        return refused;
    }
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&["tag", "id", "not_interested"])?;
        let name = p
            .one("tag")?
            .ok_or_else(|| BadParam::new("tag", "missing: the tag's name"))?
            .to_string();
        let ids = p.ids("id", true)?;
        let change = crate::write::answer(searcher.dir(), &name, ids, p.flag("not_interested")?)?;
        searcher.refresh_now();
        let mut object: serde_json::Value =
            serde_json::from_str(&crate::output::feed::tag_objects(&[change.summary])[0])
                .unwrap_or_default();
        object["changed"] = change.changed.into();
        Ok(object.to_string())
    })
    .await
}

/// `GET /api/tags`.
pub async fn tags(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        Params::parse(query.as_deref()).only(&[])?;
        Ok(json::array(&tag_objects(&searcher.tags()?)))
    })
    .await
}

/// `GET /feed`.
pub async fn document(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let link = format!(
        "http://{host}/feed{}",
        query
            .as_deref()
            .map(|q| format!("?{q}"))
            .unwrap_or_default()
    );
    let format = match Params::parse(query.as_deref()).one("format") {
        Ok(None | Some("rss")) => Digest::Rss,
        Ok(Some("atom")) => Digest::Atom,
        Ok(Some("markdown")) => Digest::Markdown,
        Ok(Some(other)) => {
            return Failure::Param(BadParam::new(
                "format",
                format!("'{other}' is not one of rss, atom, markdown"),
            ))
            .into_response_now()
        }
        Err(bad) => return Failure::Param(bad).into_response_now(),
    };
    app.answer_as(format.content_type(), move |searcher| {
        let p = Params::parse(query.as_deref());
        let mut known = KNOWN.to_vec();
        known.push("format");
        p.only(&known)?;
        let request = request(&p)?;
        let feed = match searcher.feed(&request) {
            Ok(feed) => feed,
            // Nothing new today is an empty feed that says why.
            Err(Error::Feed(why)) => Feed {
                hits: Vec::new(),
                described: why,
                ranked: 0,
                tags: request.tags.clone(),
                skipped: Vec::new(),
                quiet: Vec::new(),
                unranked: false,
            },
            Err(e) => return Err(e.into()),
        };
        Ok(digest::render(&feed, format, &link))
    })
    .await
}
