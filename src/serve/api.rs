//! The HTTP API's routes: each parses its parameters, waits for a turn,
//! runs the [`Searcher`] call on a blocking thread within the time limit,
//! and answers the CLI's JSON (or a JSON error).

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use super::app::{App, Failure};
use super::{feeds, page};
use crate::error::Error;
use crate::index::reading::ReadingState;
use crate::output::json;
use crate::request::{with_filters, BadParam, Params, MAX_K};
use crate::search::{self, Query};

/// The most hits a search with `explain` may ask for: it embeds every
/// sentence of every hit.
pub const MAX_EXPLAIN_K: usize = 20;

/// The routes.
pub fn router(app: Arc<App>) -> Router {
    let mcp =
        crate::mcp::http::service(Arc::clone(&app.searcher), app.allow_write, app.gate.clone());
    Router::new()
        .route("/", get(page::index))
        .route("/healthz", get(healthz))
        .route_service("/mcp", mcp)
        .route("/api/search", get(search))
        .route("/api/similar", get(similar))
        .route("/api/papers/{id}", get(paper))
        .route("/api/list", get(list))
        .route("/api/info", get(info))
        .route("/api/dupes", get(dupes))
        .route("/api/feed", get(feeds::api))
        .route("/api/tags", get(feeds::tags))
        .route("/api/mark", post(feeds::mark))
        .route("/api/tag", post(feeds::tag))
        .route("/feed", get(feeds::document))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(app)
}

type Shared = State<Arc<App>>;

async fn not_found() -> Response {
    let mut response =
        Failure::Refused("no such route: the API is under /api/ (see /api/info)".into())
            .into_response();
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// `GET /healthz`: the server is up, and how many papers it serves.
async fn healthz(State(app): Shared) -> Response {
    let body = serde_json::json!({
        "status": "ok",
        "records": app.searcher.index().len(),
        "writable": app.allow_write,
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn not_allowed() -> Response {
    let mut response = Failure::Refused(
        "method not allowed: the API answers GET (POST for /api/mark, /api/tag and /mcp)".into(),
    )
    .into_response();
    *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
    response
}

async fn search(State(app): Shared, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&with_filters(&[
            "q",
            "k",
            "mode",
            "min_score",
            "strict",
            "as_typed",
            "strategy",
            "explain",
        ]))?;
        let question = Query {
            paragraphs: search::paragraphs(&p.query("q")?)?,
            options: p.options()?,
            explain: p.flag("explain")?,
        };
        if question.explain && question.options.limit > MAX_EXPLAIN_K {
            return Err(BadParam::new(
                "explain",
                format!(
                    "explain embeds every sentence of every hit: at most k={MAX_EXPLAIN_K} with it"
                ),
            )
            .into());
        }
        let results = searcher.search(&question)?;
        Ok(json::array(&json::hit_objects(&results)))
    })
    .await
}

async fn similar(State(app): Shared, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&with_filters(&["id", "not", "k", "min_score", "strategy"]))?;
        let (like, unlike) = (p.ids("id", true)?, p.ids("not", false)?);
        let results = searcher.similar(&like, &unlike, &p.options()?)?;
        Ok(json::array(&json::hit_objects(&results)))
    })
    .await
}

async fn paper(State(app): Shared, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&["raw"])?;
        let raw = p.flag("raw")?;
        Ok(json::paper_object(&searcher.show(&id)?, raw))
    })
    .await
}

async fn list(State(app): Shared, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&["offset", "limit", "saved", "read"])?;
        let offset = p.number("offset", 0, 0..=usize::MAX)?;
        let limit = p.number("limit", 100, 1..=MAX_K)?;
        // The reading list, as `papers list --saved` / `--read` gives it.
        let state = match (p.flag("saved")?, p.flag("read")?) {
            (true, true) => {
                return Err(BadParam::new("read", "give saved or read, not both").into())
            }
            (true, false) => Some(ReadingState::Saved),
            (false, true) => Some(ReadingState::Read),
            (false, false) => None,
        };
        if let Some(state) = state {
            let papers = searcher.reading_list(state)?;
            let objects: Vec<String> = papers
                .iter()
                .skip(offset)
                .take(limit)
                .map(|paper| json::paper_object(paper, false))
                .collect();
            return Ok(json::array(&objects));
        }
        let mut objects = Vec::new();
        let mut seen = 0;
        let walked = searcher.for_each_paper(|paper| {
            if seen >= offset {
                objects.push(json::paper_object(&paper, false));
            }
            seen += 1;
            if objects.len() == limit {
                return Err(Error::Interrupted);
            }
            Ok(())
        });
        match walked {
            Ok(()) | Err(Error::Interrupted) => Ok(json::array(&objects)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}

async fn info(State(app): Shared, RawQuery(query): RawQuery) -> Response {
    app.answer(move |searcher| {
        Params::parse(query.as_deref()).only(&[])?;
        Ok(json::info_object(&searcher.info()?))
    })
    .await
}

async fn dupes(State(app): Shared, RawQuery(query): RawQuery) -> Response {
    let most = app.limits.dupes_records;
    app.answer(move |searcher| {
        let p = Params::parse(query.as_deref());
        p.only(&["min_score", "min_overlap", "k"])?;
        let min_score = p.real("min_score", -1.0, 1.0)?.unwrap_or(0.75);
        let min_overlap = p.real("min_overlap", 0.0, 1.0)?.unwrap_or(0.3);
        let k = p.number("k", 100, 1..=MAX_K)?;
        let records = searcher.index().len();
        if records > most {
            return Err(Failure::Refused(format!(
                "dupes compares every pair of records: this index has {records}, \
                 the server's limit is {most}; run `papers dupes` instead"
            )));
        }
        let pairs = searcher.dupes(min_score, min_overlap, k)?;
        Ok(json::array(&json::pair_objects(&pairs)))
    })
    .await
}
