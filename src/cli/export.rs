//! `papers export`: papers as BibTeX, CSV or Markdown, named by id or piped
//! in as a result list (`papers search ... | papers export`).

use std::io::{IsTerminal, Write};

use anyhow::{bail, Context as _, Result};
use clap::{Args, ValueEnum};

use papers::output::export::{citable, render, Export};
use papers::search::Searcher;

use super::Context;

/// Arguments of `papers export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Papers to export (ids, unique prefixes, arXiv ids); without any,
    /// the papers of the JSON Lines on stdin (what search, similar, list and
    /// feed print) or of its lines of ids
    #[arg(value_name = "ID")]
    ids: Vec<String>,

    /// The format
    #[arg(long, value_enum, default_value_t = ExportFormat::Bibtex)]
    format: ExportFormat,
}

/// `--format` values of `papers export`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// BibTeX entries (arXiv papers with eprint and archivePrefix)
    Bibtex,
    /// CSV with a header row
    Csv,
    /// A Markdown list with links
    Markdown,
}

/// The papers a command names: `given`, else the ids of a result list
/// piped in; `usage` (how to name them) when neither comes, `verb` (what
/// the command does) when the pipe brings none.
pub(super) fn ids_or_piped(given: Vec<String>, usage: &str, verb: &str) -> Result<Vec<String>> {
    if !given.is_empty() {
        return Ok(given);
    }
    if std::io::stdin().is_terminal() {
        bail!("{usage}");
    }
    let ids = piped_ids()?;
    if ids.is_empty() {
        bail!("nothing to {verb}: no ids were given and none came on standard input");
    }
    Ok(ids)
}

/// The ids of a result list on stdin: each line's `id`, or the line itself.
fn piped_ids() -> Result<Vec<String>> {
    let bytes = papers::limits::read_capped(
        std::io::stdin().lock(),
        papers::limits::PIPED_BYTES,
        || "the result list on standard input".into(),
        "",
    )
    .context("standard input")??;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "standard input: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let mut ids = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('{') {
            let value: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("standard input: line {}: not JSON", n + 1))?;
            match value.get("id").and_then(|v| v.as_str()) {
                Some(id) => ids.push(id.to_string()),
                None => bail!(
                    "standard input: line {}: a JSON object without \"id\"",
                    n + 1
                ),
            }
        } else {
            ids.push(line.to_string());
        }
    }
    Ok(ids)
}

pub fn export(ctx: &Context, args: ExportArgs) -> Result<()> {
    let ids = ids_or_piped(
        args.ids,
        "name papers to export (`papers export ID...`) or pipe a result list into it (`papers search ... | papers export`)",
        "export",
    )?;
    let searcher = Searcher::open(&ctx.index_dir, &Default::default())?;
    let mut seen = std::collections::HashSet::new();
    let mut papers = Vec::new();
    for id in &ids {
        let paper = searcher.show(id)?;
        if seen.insert(paper.id) {
            papers.push(paper);
        }
    }
    let format = match args.format {
        ExportFormat::Bibtex => Export::Bibtex,
        ExportFormat::Csv => Export::Csv,
        ExportFormat::Markdown => Export::Markdown,
    };
    let uncited = papers.iter().filter(|p| !citable(p)).count();
    if format == Export::Bibtex && uncited > 0 {
        ctx.note(&format!(
            "BibTeX: {} left out as a `%` comment, with no title or arXiv id to cite (Daily \
             Papers text); index the paper's arXiv record (JSON Lines or Hugging Face JSON) to \
             cite it",
            super::count(uncited, "paper")
        ));
    }
    std::io::stdout()
        .lock()
        .write_all(render(&papers, format).as_bytes())?;
    Ok(())
}
