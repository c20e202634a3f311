//! What every route of the server shares: the searcher, the turns and
//! time limit requests wait for ([`App`]), and why a request got no
//! answer ([`Failure`], a JSON error with its status).

use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::Limits;
use crate::error::Error;
use crate::request::{BadParam, Front};
use crate::search::Searcher;
use crate::turns::{Gate, Refused};

/// What every route shares.
pub struct App {
    pub(super) searcher: Arc<Searcher>,
    /// The turns and time limit every request (API and MCP) waits for.
    pub(super) gate: Gate,
    pub(super) limits: Limits,
    /// Whether the reader let this server write the index (`serve
    /// --allow-write`): marks from the page, tags from MCP.
    pub(super) allow_write: bool,
}

impl App {
    /// The state of a server over `searcher`.
    pub fn new(searcher: Arc<Searcher>, limits: Limits, allow_write: bool) -> Arc<App> {
        Arc::new(App {
            searcher,
            gate: Gate::new(limits.workers, limits.timeout),
            limits,
            allow_write,
        })
    }

    /// Whether the reader let this server write the index.
    pub(super) fn writes(&self) -> bool {
        self.allow_write
    }

    /// Runs `work` on a blocking thread once a turn is free, within the
    /// time limit, and answers its JSON text with 200.
    pub(super) async fn answer(
        &self,
        work: impl FnOnce(&Searcher) -> Result<String, Failure> + Send + 'static,
    ) -> Response {
        self.answer_as("application/json", work).await
    }

    /// [`App::answer`] for a body of another content type.
    pub(super) async fn answer_as(
        &self,
        content_type: &'static str,
        work: impl FnOnce(&Searcher) -> Result<String, Failure> + Send + 'static,
    ) -> Response {
        match self.gate.run(Arc::clone(&self.searcher), work).await {
            Ok(Ok(body)) => ([(header::CONTENT_TYPE, content_type)], body).into_response(),
            Ok(Err(failure)) => failure.into_response(),
            Err(Refused::Busy) => Failure::Busy.into_response(),
            Err(Refused::TooSlow(secs)) => Failure::TooSlow(secs).into_response(),
            Err(Refused::Failed) => {
                Failure::Library(Error::Embed("the request's thread failed".into())).into_response()
            }
        }
    }
}

/// Why a request got no answer.
pub enum Failure {
    /// A parameter is missing or wrong (400).
    Param(BadParam),
    /// The library refused or failed.
    Library(Error),
    /// Too large for the server (400).
    Refused(String),
    /// Not allowed by how the server was started (403).
    Forbidden(String),
    /// No turn came in time (503).
    Busy,
    /// The work ran past the time limit (503).
    TooSlow(f32),
}

impl From<BadParam> for Failure {
    fn from(bad: BadParam) -> Failure {
        Failure::Param(bad)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Library(e)
    }
}

impl Failure {
    /// The response, outside a handler's `answer`.
    pub(super) fn into_response_now(self) -> Response {
        self.into_response()
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let (status, message, parameter) = match self {
            // The library words its messages for the CLI: flags become
            // this API's parameter names.
            Failure::Param(bad) => (
                StatusCode::BAD_REQUEST,
                Front::Http.words(&bad.message),
                Some(bad.parameter),
            ),
            Failure::Refused(message) => (StatusCode::BAD_REQUEST, message, None),
            Failure::Forbidden(message) => (StatusCode::FORBIDDEN, message, None),
            Failure::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "busy: every worker is answering; try again".to_string(),
                None,
            ),
            Failure::TooSlow(secs) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the request ran past the server's limit of {secs} s"),
                None,
            ),
            Failure::Library(e) => {
                let status = match &e {
                    Error::UnknownId { .. }
                    | Error::Removed { .. }
                    | Error::UnknownTag { .. }
                    | Error::Feed(_) => StatusCode::NOT_FOUND,
                    Error::AmbiguousId { .. }
                    | Error::InvalidId { .. }
                    | Error::InvalidArgument { .. }
                    | Error::EmptyQuery
                    | Error::TooLarge { .. } => StatusCode::BAD_REQUEST,
                    Error::WriterBusy { .. } => StatusCode::SERVICE_UNAVAILABLE,
                    _ => StatusCode::INTERNAL_SERVER_ERROR,
                };
                let parameter = match &e {
                    Error::UnknownId { .. }
                    | Error::Removed { .. }
                    | Error::AmbiguousId { .. }
                    | Error::InvalidId { .. } => Some("id".to_string()),
                    Error::UnknownTag { .. } => Some("tag".to_string()),
                    Error::InvalidArgument { name, .. } => Some(name.clone()),
                    _ => None,
                };
                (
                    status,
                    Front::Http.words(&e.to_string()),
                    parameter.map(|p| Front::Http.words(&p)),
                )
            }
        };
        let body = serde_json::json!({ "error": message, "parameter": parameter });
        (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}
