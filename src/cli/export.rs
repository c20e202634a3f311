//! `papers export`: papers as BibTeX, CSV or Markdown, named by id or piped
//! in as a result list (`papers search ... | papers export`).

use std::io::Write;

use anyhow::Result;
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

pub fn export(ctx: &Context, args: ExportArgs) -> Result<()> {
    let ids = super::piped::ids_or_piped(
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
