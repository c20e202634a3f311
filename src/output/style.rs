//! Terminal styles: ANSI colours and weights, applied only when colour is
//! on, and the query's words underlined in a hit's text.

use anstyle::{AnsiColor, Style};

use super::Annotations;

pub(super) const BOLD: Style = Style::new().bold();
pub(super) const DIM: Style = Style::new().dimmed();
pub(super) const YELLOW: Style = AnsiColor::Yellow.on_default();
pub(super) const GREEN: Style = AnsiColor::Green.on_default();
const UNDERLINE: Style = Style::new().underline();

/// Wraps `text` in an ANSI style when colour is on.
pub(super) fn paint(text: &str, style: Style, color: bool) -> String {
    if color {
        format!("{style}{text}{style:#}")
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
        // Underlined, then back to the bold the title is written in.
        out.push_str(&format!(
            "{UNDERLINE}{}{UNDERLINE:#}{BOLD}",
            &text[start..end]
        ));
        last = end;
    }
    out.push_str(&text[last..]);
    out
}
