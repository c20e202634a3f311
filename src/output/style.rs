//! Terminal styles: ANSI colours and weights, applied only when colour is
//! on, and the query's words underlined in a hit's text.

use super::Annotations;

pub(super) const BOLD: &str = "\x1b[1m";
pub(super) const DIM: &str = "\x1b[2m";
pub(super) const YELLOW: &str = "\x1b[33m";
pub(super) const GREEN: &str = "\x1b[32m";
const UNDERLINE: &str = "\x1b[4m";
const RESET: &str = "\x1b[0m";

/// Wraps `text` in an ANSI style when colour is on.
pub(super) fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// `text` with the words matching a query term underlined, when colour is on.
pub(super) fn highlight(text: &str, notes: &Annotations, color: bool) -> String {
    if !color || notes.terms.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for (start, end) in crate::evidence::matches(text, &notes.terms, notes.analysis) {
        out.push_str(&text[last..start]);
        out.push_str(UNDERLINE);
        out.push_str(&text[start..end]);
        out.push_str(RESET);
        out.push_str(BOLD);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}
