//! Output for people: a ranked table with short ids and headlines, one
//! record in full, and a summary of an index. Colour only when asked for
//! (a terminal without `NO_COLOR`).

use std::io::{self, Write};

use super::style::{paint, BOLD, DIM, GREEN, YELLOW};
use crate::paper::{headline, Paper};
use crate::search::{Info, Pair};

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
    let id = super::table::display_id(paper);
    let date = super::table::display_date(paper);
    let fixed = id.chars().count().max(8) + 2 + if date.is_empty() { 0 } else { 12 };
    let room = width.saturating_sub(fixed).max(20);
    let mut line = format!("{}  ", paint(&format!("{id:<8}"), YELLOW, color));
    if !date.is_empty() {
        line.push_str(&format!("{date}  "));
    }
    line.push_str(&paint(&headline(&paper.headline(), room), BOLD, color));
    writeln!(out, "{line}")
}

/// One paper as a page: title, authors, the line of facts (date, ids,
/// categories, upvotes), links, keywords and summary when the input gave
/// them, the abstract once, and where it was seen.
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
    let width = width.clamp(40, 100);
    let meta = paper.meta.as_ref();
    let title = meta.map(|m| m.title.as_str()).filter(|t| !t.is_empty());
    if let Some(title) = title {
        for line in super::table::wrap(title, width, 4) {
            writeln!(out, "{}", paint(&line, BOLD, color))?;
        }
    }
    if let Some(meta) = meta {
        if !meta.authors.is_empty() {
            for line in super::table::wrap(&meta.authors.join(", "), width, 3) {
                writeln!(out, "{line}")?;
            }
        }
    }
    let mut facts = Vec::new();
    if let Some(meta) = meta {
        facts.extend(meta.published.clone());
        if let Some(listed) = meta
            .listed
            .as_ref()
            .filter(|l| meta.published.as_ref() != Some(*l))
        {
            facts.push(format!("listed {listed}"));
        }
        if !meta.arxiv_id.is_empty() {
            facts.push(format!("arXiv:{}", meta.arxiv_id));
        } else if !meta.source_id.is_empty() {
            facts.push(meta.source_id.clone());
        }
        if !meta.categories.is_empty() {
            facts.push(meta.categories.join(" "));
        }
        if let Some(upvotes) = meta.upvotes {
            facts.push(format!("{upvotes} upvotes"));
        }
    }
    facts.push(format!("id {}", paper.id.hex()));
    writeln!(out, "{}", paint(&facts.join(" · "), YELLOW, color))?;
    if let Some(meta) = meta {
        let mut links = Vec::new();
        if !meta.arxiv_id.is_empty() {
            links.push(format!("https://arxiv.org/abs/{}", meta.arxiv_id));
            if meta.upvotes.is_some() || meta.listed.is_some() {
                links.push(format!("https://huggingface.co/papers/{}", meta.arxiv_id));
            }
        }
        links.extend(meta.github.clone());
        for link in links {
            writeln!(out, "{}", paint(&link, DIM, color))?;
        }
        if !meta.keywords.is_empty() {
            for line in
                super::table::wrap(&format!("Keywords: {}", meta.keywords.join(", ")), width, 3)
            {
                writeln!(out, "{}", paint(&line, DIM, color))?;
            }
        }
        if let Some(summary) = &meta.ai_summary {
            writeln!(out)?;
            for line in super::table::wrap(&format!("In one sentence (AI): {summary}"), width, 6) {
                writeln!(out, "{line}")?;
            }
        }
    }
    writeln!(out)?;
    for line in super::table::wrap(text, width, usize::MAX) {
        writeln!(out, "{line}")?;
    }
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
        "search:     {} (int8 from {} records, stored graphs from {})",
        info.strategy.name(),
        crate::search::QUANTIZED_FROM,
        crate::index::graphs::GRAPH_FROM
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
    writeln!(
        out,
        "encoder:    index and embed: {}; queries: cpu mapped f32",
        info.bulk_encoder
    )?;
    writeln!(out, "sources:")?;
    for (file, records) in &info.sources {
        writeln!(out, "  {file}: {records} records")?;
    }
    Ok(())
}
