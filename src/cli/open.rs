//! `papers open ID`: a paper's page in the browser. The page is arXiv's
//! abstract page (every arXiv id has one; Hugging Face's daily papers are
//! arXiv papers too). The browser is `$BROWSER` when set, else the
//! desktop's opener (`xdg-open`, `open`); when there is none, or stdout is
//! not a terminal, the URL is printed instead, for a script or a click.

use std::io::IsTerminal;
use std::process::{Command, Stdio};

use anyhow::{bail, Result};
use clap::Args;

use papers::search::Searcher;

use super::Context;

/// Arguments of `papers open`.
#[derive(Debug, Args)]
pub struct OpenArgs {
    /// The paper (id, unique prefix or arXiv id)
    #[arg(value_name = "ID")]
    id: String,

    /// Print the URL instead of opening it
    #[arg(long)]
    print: bool,
}

pub fn open(ctx: &Context, args: OpenArgs) -> Result<()> {
    let paper = Searcher::open(&ctx.index_dir, &Default::default())?.show(&args.id)?;
    let Some(arxiv) = paper.arxiv_id() else {
        bail!(
            "paper {} has no arXiv id, so no page to open (seen in {}); `papers show {}` prints it",
            paper.id.short(),
            paper
                .sources
                .first()
                .map_or("an input without ids".to_string(), |s| s.file.clone()),
            paper.id.short()
        );
    };
    let url = format!("https://arxiv.org/abs/{arxiv}");
    if args.print || !std::io::stdout().is_terminal() && std::env::var_os("BROWSER").is_none() {
        println!("{url}");
        return Ok(());
    }
    if launch(&url) {
        ctx.note(&format!("opened {url}"));
    } else {
        println!("{url}");
    }
    Ok(())
}

/// Hands `url` to `$BROWSER` (the first of its `:`-separated commands that
/// runs) or the desktop's opener; whether one took it.
fn launch(url: &str) -> bool {
    let browsers = std::env::var("BROWSER").unwrap_or_default();
    let mut candidates: Vec<&str> = browsers.split(':').filter(|b| !b.is_empty()).collect();
    if candidates.is_empty() {
        candidates = if cfg!(target_os = "macos") {
            vec!["open"]
        } else if cfg!(windows) {
            vec!["explorer"]
        } else {
            vec!["xdg-open"]
        };
    }
    candidates.into_iter().any(|browser| {
        Command::new(browser)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}
