//! The web page at `/`: one HTML file with its styles and script inline,
//! built into the binary, so the page works offline and loads nothing from
//! elsewhere (its Content-Security-Policy says so to the browser). Its
//! links (`/?q=`, `/?similar=ID`, `/?paper=ID`) can be shared; it speaks to
//! the server only through the JSON API.

use axum::http::header;
use axum::response::IntoResponse;

/// The page.
const PAGE: &str = include_str!("page.html");

/// What the browser may load: this server's API, and the page's own inline
/// styles and script; nothing from any other origin.
const POLICY: &str = "default-src 'none'; connect-src 'self'; script-src 'unsafe-inline'; \
                      style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; \
                      form-action 'self'; frame-ancestors 'none'";

/// `GET /`.
pub async fn index() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
}
