//! Output for people: a ranked table with short ids and headlines, one
//! record in full, and a summary of an index. Colour only when asked for
//! (a terminal without `NO_COLOR`).

use std::io::{self, Write};

use super::Annotations;
use crate::paper::{headline, Paper};
use crate::search::{Found, Hit, Info, Pair, Results};

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

/// "file#paragraph", plus how many other places the abstract was seen.
fn seen_in(paper: &Paper) -> String {
    match paper.sources.split_first() {
        Some((first, [])) => format!("{}#{}", first.file, first.paragraph),
        Some((first, rest)) => format!("{}#{} +{}", first.file, first.paragraph, rest.len()),
        None => String::new(),
    }
}

/// `text` with the words matching a query term underlined, when colour is on.
fn highlight(text: &str, notes: &Annotations, color: bool) -> String {
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

/// The per-mode ranks of a hit, for `--explain`.
fn ranks(hit: &Hit) -> String {
    let mut parts = Vec::new();
    if let Some(s) = hit.semantic {
        parts.push(format!("semantic #{} {:.3}", s.rank, s.score));
    }
    if let Some(l) = hit.lexical {
        parts.push(format!("lexical #{} {:.2}", l.rank, l.score));
    }
    parts.join(", ")
}

pub(super) fn hits<W: Write>(
    out: &mut W,
    results: &Results,
    color: bool,
    width: usize,
) -> io::Result<()> {
    let notes = &results.notes;
    if results.found.is_empty() {
        return Ok(());
    }
    let rank_width = results.found.len().to_string().len();
    for (i, Found { hit, paper }) in results.found.iter().enumerate() {
        let seen = seen_in(paper);
        // Fused scores are small (two lists at rank 1 give 2/61).
        let score = if notes.mode == Some(crate::search::Mode::Hybrid) {
            format!("{:.4}", hit.score)
        } else if hit.score >= 10.0 {
            format!("{:>5.1}", hit.score)
        } else {
            format!("{:>5.3}", hit.score)
        };
        // rank, score, id and the separating spaces take this much.
        let fixed = rank_width
            + 1
            + score.len()
            + 2
            + crate::paper::SHORT_LEN
            + 2
            + 2
            + seen.chars().count();
        let room = width.saturating_sub(fixed).max(30);
        let title = highlight(&headline(&paper.headline(), room), notes, color);
        writeln!(
            out,
            "{:>rank_width$} {} {}  {}  {}",
            i + 1,
            paint(&score, GREEN, color),
            paint(&paper.id.short(), YELLOW, color),
            paint(&title, BOLD, color),
            paint(&seen, DIM, color),
        )?;
        if notes.explain {
            let indent = " ".repeat(rank_width + 1);
            if let Some(sentence) = notes.evidence.get(i) {
                let room = width.saturating_sub(indent.len() + 2).max(30);
                let sentence = headline(sentence, room.saturating_mul(2));
                writeln!(
                    out,
                    "{indent}\u{203a} {}",
                    highlight(&sentence, notes, color)
                )?;
            }
            let mut detail = ranks(hit);
            if let Some(p) = notes.query_paragraph.get(i) {
                detail.push_str(&format!(", query paragraph {p}"));
            }
            if !detail.is_empty() {
                writeln!(out, "{indent}  {}", paint(&detail, DIM, color))?;
            }
        }
    }
    Ok(())
}

pub(super) fn dupes<W: Write>(
    out: &mut W,
    pairs: &[Pair],
    color: bool,
    width: usize,
) -> io::Result<()> {
    for pair in pairs {
        let score = pair.dupe.score;
        let (a, b) = (&pair.a, &pair.b);
        let fixed = 5 + 1 + 2 * (crate::paper::SHORT_LEN + 1) + 1;
        let room = width.saturating_sub(fixed).max(30);
        writeln!(
            out,
            "{} {} {}  {}",
            paint(&format!("{score:>5.3}"), GREEN, color),
            paint(&a.id.short(), YELLOW, color),
            paint(&b.id.short(), YELLOW, color),
            paint(&headline(&a.headline(), room), BOLD, color),
        )?;
    }
    Ok(())
}

pub(super) fn list_line<W: Write>(
    out: &mut W,
    paper: &Paper,
    color: bool,
    width: usize,
) -> io::Result<()> {
    let seen = seen_in(paper);
    let fixed = crate::paper::SHORT_LEN + 2 + 2 + seen.chars().count();
    let room = width.saturating_sub(fixed).max(30);
    writeln!(
        out,
        "{}  {}  {}",
        paint(&paper.id.short(), YELLOW, color),
        paint(&headline(&paper.headline(), room), BOLD, color),
        paint(&seen, DIM, color),
    )
}

pub(super) fn paper<W: Write>(
    out: &mut W,
    paper: &Paper,
    raw: bool,
    color: bool,
    width: usize,
) -> io::Result<()> {
    let text = if raw {
        paper.original_text()
    } else {
        &paper.text
    };
    writeln!(out, "{}", paint(&paper.id.hex(), YELLOW, color))?;
    writeln!(out, "{}", paint(&paper.headline(), BOLD, color))?;
    if let Some(meta) = &paper.meta {
        let mut parts = Vec::new();
        if !meta.arxiv_id.is_empty() {
            parts.push(format!("arXiv:{}", meta.arxiv_id));
        } else if !meta.source_id.is_empty() {
            parts.push(meta.source_id.clone());
        }
        parts.extend(meta.published.clone());
        if !meta.categories.is_empty() {
            parts.push(meta.categories.join(" "));
        }
        if !meta.authors.is_empty() {
            parts.push(meta.authors.join(", "));
        }
        if !parts.is_empty() {
            writeln!(out, "{}", paint(&parts.join(", "), DIM, color))?;
        }
    }
    writeln!(out)?;
    let mut current = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        if current > 0 && current + 1 + len > width {
            writeln!(out)?;
            current = 0;
        } else if current > 0 {
            write!(out, " ")?;
            current += 1;
        }
        write!(out, "{word}")?;
        current += len;
    }
    writeln!(out)?;
    writeln!(out)?;
    for source in &paper.sources {
        writeln!(
            out,
            "{}",
            paint(
                &format!("seen in {} paragraph {}", source.path, source.paragraph),
                DIM,
                color
            )
        )?;
    }
    Ok(())
}

pub(super) fn info<W: Write>(out: &mut W, info: &Info) -> io::Result<()> {
    let m = &info.manifest;
    writeln!(out, "index:      {}", info.path.display())?;
    writeln!(out, "records:    {}", info.records)?;
    writeln!(
        out,
        "model:      {} (weights sha256 {})",
        m.model,
        &m.weights_sha256[..12.min(m.weights_sha256.len())]
    )?;
    writeln!(out, "dimension:  {}", m.dimension)?;
    writeln!(out, "truncation: {} word pieces", m.max_seq_length)?;
    let (long, windows) = info.windows;
    writeln!(
        out,
        "windows:    {long} records run past the truncation point ({windows} extra vectors)"
    )?;
    writeln!(
        out,
        "search:     {} (int8 from {} records)",
        info.strategy.name(),
        crate::search::QUANTIZED_FROM
    )?;
    writeln!(
        out,
        "format:     version {}, generation {}",
        m.format_version, info.generation
    )?;
    writeln!(
        out,
        "size:       {:.1} MiB",
        info.size_bytes as f64 / (1024.0 * 1024.0)
    )?;
    writeln!(out, "sources:")?;
    for (file, records) in &info.sources {
        writeln!(out, "  {file}: {records} records")?;
    }
    Ok(())
}
