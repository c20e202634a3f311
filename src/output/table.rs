//! The result table people read: a header row naming every column, the
//! arXiv id (else the short id) first, the date, the title in full where
//! the width allows with the authors abbreviated (`Lovelace et al.`), and a
//! line saying what the score means.
//!
//! ```text
//!  #  SCORE  ID          DATE        TITLE
//!  1   0.93  2405.01234  2024-05-02  Length Generalization of Causal
//!                                    Transformers without Position Encoding
//! ```
//!
//! Layout by terminal width: the title wraps onto at most two lines (three
//! under 70 columns), cut on a word with an ellipsis past that; the date
//! column goes under 70 columns; a SEEN IN column (input file and
//! paragraph) comes from 140 columns. A list with no dated paper (text
//! dumps) has no date column. A list sorted by date always shows the
//! date, one sorted by upvotes an UPVOTES column. Titles get at least 20 columns, so a
//! very narrow terminal wraps rather than losing the title.

use std::io::{self, Write};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::style::{paint, BOLD, DIM, GREEN, YELLOW};
use crate::paper::Paper;
use crate::search::{Mode, Results, Sort, Verdict};

/// Narrower than this, the date column is left out.
const DATE_FROM: usize = 70;
/// The UPVOTES column's width, shown when a list is sorted by it.
const UPVOTES_W: usize = 7;
/// From this width on, the SEEN IN column is shown.
const SEEN_FROM: usize = 140;

/// The id a reader knows a paper by: its arXiv id, else the short hash.
pub fn display_id(paper: &Paper) -> String {
    match &paper.meta {
        Some(meta) if !meta.arxiv_id.is_empty() => meta.arxiv_id.clone(),
        _ => paper.id.short(),
    }
}

/// The date shown: published, else the day a daily list featured it.
pub fn display_date(paper: &Paper) -> String {
    paper
        .meta
        .as_ref()
        .and_then(|m| m.published.as_deref().or(m.listed.as_deref()))
        .map(|d| d.get(..10).unwrap_or(d).to_string())
        .unwrap_or_default()
}

/// The authors, abbreviated: `Lovelace`, `Lovelace & Turing`,
/// `Lovelace et al.` (surnames as the last word of each name).
pub fn byline(paper: &Paper) -> Option<String> {
    let authors = &paper.meta.as_ref()?.authors;
    let surname = |name: &String| name.split_whitespace().last().unwrap_or(name).to_string();
    match authors.as_slice() {
        [] => None,
        [one] => Some(surname(one)),
        [a, b] => Some(format!("{} & {}", surname(a), surname(b))),
        [a, ..] => Some(format!("{} et al.", surname(a))),
    }
}

/// The title cell: the title (or key sentence) and the abbreviated authors.
fn title_cell(paper: &Paper) -> String {
    match byline(paper) {
        Some(by) => format!("{} — {by}", paper.title_or_key_sentence()),
        None => paper.title_or_key_sentence().to_string(),
    }
}

/// Where it was seen: the first input's name and paragraph, `+N` more.
fn seen_in(paper: &Paper) -> String {
    match paper.sources.split_first() {
        Some((first, [])) => format!("{}#{}", first.file, first.paragraph),
        Some((first, rest)) => format!("{}#{} (+{} more)", first.file, first.paragraph, rest.len()),
        None => String::new(),
    }
}

/// How many terminal columns `text` takes: CJK characters and most emoji
/// take two, combining marks none.
pub fn columns(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` wrapped on words to lines of at most `width` columns, at most
/// `lines` of them, the last ending in an ellipsis when text remains. A
/// word wider than a line is cut across lines.
pub fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let width = width.max(2);
    let mut pieces: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let mut piece = String::new();
        for c in word.chars() {
            if columns(&piece) + c.width().unwrap_or(0) > width && !piece.is_empty() {
                pieces.push(std::mem::take(&mut piece));
            }
            piece.push(c);
        }
        pieces.push(piece);
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for piece in pieces {
        let len = columns(&current);
        if len > 0 && len + 1 + columns(&piece) > width {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&piece);
    }
    if !current.is_empty() {
        out.push(current);
    }
    if out.len() > lines {
        out.truncate(lines.max(1));
        let last = out.pop().unwrap_or_default();
        out.push(if columns(&last) < width {
            format!("{last}…")
        } else {
            ellipsis(&last, width)
        });
    }
    out
}

/// `line` cut to end in an ellipsis within `width` columns.
fn ellipsis(line: &str, width: usize) -> String {
    let mut keep = String::new();
    for c in line.chars() {
        if columns(&keep) + c.width().unwrap_or(0) > width.saturating_sub(1) {
            break;
        }
        keep.push(c);
    }
    let cut = match keep.rfind(' ') {
        Some(i) if i > keep.len() / 2 => &keep[..i],
        _ => keep.as_str(),
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// What the score column means, for the line under the table.
fn legend(mode: Option<Mode>) -> String {
    match mode {
        Some(mode) => format!(
            "SCORE: relevance, 0 to 1 (0.8 and up: mostly relevant; under 0.2: rarely) ({} search; see `papers search --help`)",
            mode.name()
        ),
        None => "SCORE: cosine similarity of the abstracts (0 to 1)".into(),
    }
}

/// The line above a text query's table: its verdict, and the query as
/// searched when a typo was corrected.
fn verdict_line(notes: &crate::search::Annotations) -> Option<String> {
    let verdict = notes.verdict?;
    Some(match &notes.searched {
        Some(searched) => format!("{} · searched for: {searched}", verdict.sentence()),
        None => verdict.sentence().to_string(),
    })
}

/// Writes the table of a result list, or a line saying nothing matched.
pub fn hits<W: Write>(out: &mut W, results: &Results, color: bool, width: usize) -> io::Result<()> {
    let notes = &results.notes;
    if results.found.is_empty() {
        let why = match (notes.verdict, notes.min_score) {
            (Some(_), Some(s)) if s > 0.0 => {
                format!("no paper matched: nothing scored {s} or more")
            }
            (Some(Verdict::None), _) => {
                "no paper matched: nothing in the index is about this".to_string()
            }
            _ => "no paper matched".to_string(),
        };
        return writeln!(out, "{}", paint(&why, DIM, color));
    }
    if let Some(line) = verdict_line(notes) {
        let style = if notes.verdict == Some(Verdict::Strong) {
            BOLD
        } else {
            DIM
        };
        writeln!(out, "{}", paint(&line, style, color))?;
    }
    let rank_w = results.found.len().to_string().len().max(1);
    let ids: Vec<String> = results.found.iter().map(|f| display_id(&f.paper)).collect();
    let id_w = ids.iter().map(|i| columns(i)).max().unwrap_or(2).max(2);
    // The column a list is sorted by is always shown.
    let dated = (width >= DATE_FROM || notes.sort == Sort::Date)
        && results
            .found
            .iter()
            .any(|f| !display_date(&f.paper).is_empty());
    let upvotes = notes.sort == Sort::Upvotes;
    let seen = width >= SEEN_FROM;
    let seen_w = if seen {
        results
            .found
            .iter()
            .map(|f| columns(&seen_in(&f.paper)))
            .max()
            .unwrap_or(7)
            .clamp(7, 40)
    } else {
        0
    };
    // "#", SCORE, ID, DATE and the two spaces after each.
    let fixed = rank_w
        + 2
        + 5
        + 2
        + id_w
        + 2
        + if dated { 12 } else { 0 }
        + if upvotes { UPVOTES_W + 2 } else { 0 }
        + if seen { seen_w + 2 } else { 0 };
    let title_w = width.saturating_sub(fixed).max(20);
    let lines = if width < DATE_FROM { 3 } else { 2 };

    let mut header = format!("{:>rank_w$}  SCORE  {:<id_w$}  ", "#", "ID");
    if upvotes {
        header.push_str(&format!("{:>UPVOTES_W$}  ", "UPVOTES"));
    }
    if dated {
        header.push_str(&format!("{:<10}  ", "DATE"));
    }
    if seen {
        header.push_str(&format!("{:<title_w$}  SEEN IN", "TITLE"));
    } else {
        header.push_str("TITLE");
    }
    writeln!(out, "{}", paint(header.trim_end(), BOLD, color))?;

    let indent = " ".repeat(fixed - if seen { seen_w + 2 } else { 0 });
    for (i, (found, id)) in results.found.iter().zip(&ids).enumerate() {
        let (hit, paper) = (&found.hit, &found.paper);
        let title = wrap(&title_cell(paper), title_w, lines);
        let mut row = format!(
            "{:>rank_w$}  {}  {}  ",
            i + 1,
            paint(&format!("{:>5.3}", hit.score), GREEN, color),
            paint(&format!("{id:<id_w$}"), YELLOW, color),
        );
        if upvotes {
            let count = paper
                .meta
                .as_ref()
                .and_then(|m| m.upvotes)
                .map_or_else(|| "-".to_string(), |u| u.to_string());
            row.push_str(&format!("{count:>UPVOTES_W$}  "));
        }
        if dated {
            row.push_str(&format!("{:<10}  ", display_date(paper)));
        }
        let title: Vec<String> = title
            .into_iter()
            .map(|line| super::style::highlight(&line, notes, color))
            .collect();
        let first = title.first().cloned().unwrap_or_default();
        if seen {
            let shown = wrap(&title_cell(paper), title_w, lines);
            let pad = title_w.saturating_sub(columns(&shown[0]));
            row.push_str(&paint(&first, BOLD, color));
            row.push_str(&" ".repeat(pad + 2));
            let place: String = seen_in(paper).chars().take(seen_w).collect();
            row.push_str(&paint(&place, DIM, color));
        } else {
            row.push_str(&paint(&first, BOLD, color));
        }
        writeln!(out, "{}", row.trim_end())?;
        for more in title.iter().skip(1) {
            writeln!(out, "{indent}{}", paint(more, BOLD, color))?;
        }
        if notes.explain {
            if let Some(sentence) = &found.evidence {
                for line in wrap(&format!("› {sentence}"), title_w, 3) {
                    writeln!(out, "{indent}{line}")?;
                }
            }
            let mut detail = ranks(hit);
            if let Some(p) = found.query_paragraph {
                detail.push_str(&format!(", query paragraph {p}"));
            }
            if !detail.is_empty() {
                writeln!(out, "{indent}{}", paint(&detail, DIM, color))?;
            }
        }
    }
    let mut legend = legend(notes.mode);
    match notes.sort {
        Sort::Score => {}
        Sort::Date => legend.push_str("; sorted by DATE, newest first"),
        Sort::Upvotes => {
            legend.push_str("; sorted by UPVOTES (Hugging Face), most first; - : none given")
        }
    }
    for line in wrap(&legend, width.max(20), 3) {
        writeln!(out, "{}", paint(&line, DIM, color))?;
    }
    Ok(())
}

/// The per-mode ranks of a hit, for `--explain`.
fn ranks(hit: &crate::hit::Hit) -> String {
    let mut parts = Vec::new();
    if let Some(s) = hit.semantic {
        parts.push(format!("semantic #{} {:.3}", s.rank, s.score));
    }
    if let Some(l) = hit.lexical {
        parts.push(format!("lexical #{} {:.2}", l.rank, l.score));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_words_and_cuts_the_last_line() {
        let text = "Length Generalization of Causal Transformers without Position Encoding";
        assert_eq!(wrap(text, 100, 2), [text]);
        let two = wrap(text, 30, 2);
        assert_eq!(two[0], "Length Generalization of");
        assert!(
            two[1].ends_with('…') && two[1].chars().count() <= 30,
            "{two:?}"
        );
        for line in wrap(text, 12, 9) {
            assert!(line.chars().count() <= 12, "{line}");
        }
    }

    #[test]
    fn wrap_counts_columns_not_characters() {
        // Each of these CJK characters takes two columns.
        let title = "大规模语言模型的长上下文 extrapolation 研究 🚀 done";
        for width in [6, 9, 14, 30] {
            for line in wrap(title, width, 10) {
                assert!(
                    columns(&line) <= width,
                    "{width}: {line:?} is {} columns",
                    columns(&line)
                );
            }
        }
        let cut = wrap("長い長い長い長い長い長い", 10, 1);
        assert!(cut[0].ends_with('…') && columns(&cut[0]) <= 10, "{cut:?}");
    }
}
