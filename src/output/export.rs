//! Papers as a reference list: BibTeX for LaTeX, CSV for a spreadsheet,
//! Markdown for notes (`papers export`). Records with an arXiv id become
//! `@misc` entries with `eprint`/`archivePrefix` (biblatex's and
//! natbib's arXiv form). A record with neither a title nor an arXiv id
//! (a Daily Papers text dump's) cannot be cited: BibTeX gets a `%` comment
//! in its place, saying so and where it was seen, and no entry whose
//! title would be a sentence of the abstract ([`citable`]).

use std::collections::HashSet;

use super::escape;
use crate::paper::Paper;

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// BibTeX entries.
    Bibtex,
    /// CSV with a header row (RFC 4180 quoting).
    Csv,
    /// A Markdown list.
    Markdown,
}

/// `papers` in `format`.
pub fn render(papers: &[Paper], format: Export) -> String {
    match format {
        Export::Bibtex => bibtex(papers),
        Export::Csv => csv(papers),
        Export::Markdown => markdown(papers),
    }
}

fn title(paper: &Paper) -> String {
    match &paper.meta {
        Some(m) if !m.title.is_empty() => m.title.clone(),
        _ => paper.headline(),
    }
}

fn authors(paper: &Paper) -> &[String] {
    paper.meta.as_ref().map_or(&[], |m| m.authors.as_slice())
}

fn url(paper: &Paper) -> Option<String> {
    paper
        .arxiv_id()
        .map(|id| format!("https://arxiv.org/abs/{id}"))
}

fn year(paper: &Paper) -> Option<u32> {
    paper.date().map(|d| d / 10_000).or_else(|| {
        // arXiv ids start with YYMM.
        let id = paper.arxiv_id()?;
        id.get(..2)?.parse::<u32>().ok().map(|yy| 2000 + yy)
    })
}

/// `lastname` + year + first long title word, lower-case ASCII letters
/// and digits: `lovelace2025rotary`; `papers-<short id>` without authors.
fn key(paper: &Paper) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    let Some(first) = authors(paper).first() else {
        return format!("papers-{}", paper.id.short());
    };
    let last = clean(first.split_whitespace().last().unwrap_or(first));
    let word = title(paper)
        .split_whitespace()
        .map(clean)
        .find(|w| w.len() > 3)
        .unwrap_or_default();
    let year = year(paper).map(|y| y.to_string()).unwrap_or_default();
    format!("{last}{year}{word}")
}

/// Whether a paper can be cited: it has a title or an arXiv id.
pub fn citable(paper: &Paper) -> bool {
    paper.meta.as_ref().is_some_and(|m| !m.title.is_empty()) || paper.arxiv_id().is_some()
}

/// The comment that stands for a paper [`citable`] refuses.
fn not_citable(paper: &Paper) -> String {
    let seen = paper
        .sources
        .first()
        .map(|s| format!(" (seen in {} #{})", s.file, s.paragraph))
        .unwrap_or_default();
    let line = |text: &str| text.replace(['\n', '\r'], " ");
    format!(
        "% papers {}{}: not citable, left out: the record has no title, authors or arXiv id.\n\
         % Find the paper by its abstract, which opens: {}\n\n",
        paper.id.short(),
        line(&seen),
        line(&crate::paper::headline(&paper.text, 160)),
    )
}

fn bibtex(papers: &[Paper]) -> String {
    let mut used = HashSet::new();
    let mut out = String::new();
    for paper in papers {
        if !citable(paper) {
            out.push_str(&not_citable(paper));
            continue;
        }
        let base = key(paper);
        let mut key = base.clone();
        for suffix in 'a'..='z' {
            if used.insert(key.clone()) {
                break;
            }
            key = format!("{base}{suffix}");
        }
        let mut fields = vec![("title", format!("{{{}}}", escape::bibtex(&title(paper))))];
        if !authors(paper).is_empty() {
            let names: Vec<String> = authors(paper).iter().map(|a| escape::bibtex(a)).collect();
            fields.push(("author", names.join(" and ")));
        }
        if let Some(year) = year(paper) {
            fields.push(("year", year.to_string()));
        }
        if let Some(id) = paper.arxiv_id() {
            fields.push(("eprint", id.to_string()));
            fields.push(("archivePrefix", "arXiv".into()));
            if let Some(category) = paper.meta.as_ref().and_then(|m| m.categories.first()) {
                fields.push(("primaryClass", escape::bibtex(category)));
            }
        }
        if let Some(url) = url(paper) {
            fields.push(("url", url));
        } else if let Some(source) = paper.sources.first() {
            fields.push(("note", format!("Seen in {}", escape::bibtex(&source.file))));
        }
        fields.push(("abstract", escape::bibtex(&paper.text)));
        fields.push(("papers_id", paper.id.hex()));
        out.push_str(&format!("@misc{{{key},\n"));
        for (name, value) in fields {
            out.push_str(&format!("  {name} = {{{value}}},\n"));
        }
        out.push_str("}\n\n");
    }
    out
}

fn csv(papers: &[Paper]) -> String {
    let mut out = String::from("id,arxiv_id,title,authors,published,url,sources,abstract\r\n");
    for paper in papers {
        let sources: Vec<String> = paper
            .sources
            .iter()
            .map(|s| format!("{}#{}", s.file, s.paragraph))
            .collect();
        let row = [
            paper.id.hex(),
            paper.arxiv_id().unwrap_or_default().to_string(),
            title(paper),
            authors(paper).join("; "),
            paper
                .date()
                .map(crate::paper::format_date)
                .unwrap_or_default(),
            url(paper).unwrap_or_default(),
            sources.join("; "),
            paper.text.clone(),
        ];
        let row: Vec<String> = row.iter().map(|f| escape::csv_cell(f)).collect();
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

fn markdown(papers: &[Paper]) -> String {
    let mut out = String::new();
    for paper in papers {
        let heading = escape::markdown(&title(paper));
        let linked = match url(paper).as_deref().and_then(escape::web_link) {
            Some(url) => format!("[{heading}]({url})"),
            None => heading,
        };
        let mut parts = vec![linked];
        let names = authors(paper);
        match names {
            [] => {}
            [a] => parts.push(escape::markdown(a)),
            [a, b] => parts.push(format!("{}, {}", escape::markdown(a), escape::markdown(b))),
            [a, ..] => parts.push(format!("{} et al.", escape::markdown(a))),
        }
        if let Some(date) = paper.date() {
            parts.push(crate::paper::format_date(date));
        }
        parts.push(format!("`{}`", paper.id.short()));
        out.push_str(&format!("- {}\n", parts.join(" · ")));
    }
    out
}
