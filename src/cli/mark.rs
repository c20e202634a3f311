//! `papers mark STATE ID...`: the reader's reading state. Marked papers
//! (seen, read, saved) leave the inbox the feed ranks; `new` puts them
//! back. Ids come as arguments, as a result list piped in (`papers feed
//! --json | papers mark seen`), or `--all`.

use anyhow::Result;
use clap::Args;

use papers::feed::{MarkChange, Marked};
use papers::index::reading::ReadingState;

use super::Context;

/// Arguments of `papers mark`.
#[derive(Debug, Args)]
pub struct MarkArgs {
    /// The state to give the papers: seen (shown, not wanted now), read,
    /// saved (to read later), or new (back into the inbox)
    #[arg(value_name = "STATE")]
    state: String,

    /// Papers (ids, unique prefixes, arXiv ids); without any, the ids of a
    /// result list piped in (JSON Lines with "id", or one id a line)
    #[arg(value_name = "ID", conflicts_with = "all")]
    ids: Vec<String>,

    /// Every paper in the inbox (`papers mark seen --all` empties it and
    /// keeps what was saved or read); with `new`, every paper marked seen
    /// (saved and read papers stay on the reading list unless --kept)
    #[arg(long)]
    all: bool,

    /// With `new --all`: saved and read papers go back into the inbox too
    #[arg(long, requires = "all")]
    kept: bool,
}

pub fn mark(ctx: &Context, args: MarkArgs) -> Result<()> {
    let state = ReadingState::parse(&args.state)?;
    let which = if args.all && args.kept {
        Marked::AllKept
    } else if args.all {
        Marked::All
    } else {
        let usage = format!(
            "name papers to mark (`papers mark {} ID...`), pipe a result list into it \
             (`papers feed --json | papers mark seen`), or pass --all",
            state.name()
        );
        Marked::Ids(super::piped::ids_or_piped(args.ids, &usage, "mark")?)
    };
    let change = papers::write::mark(&ctx.index_dir, state, &which, &super::feed::Notes(ctx))?;
    if ctx.json {
        println!("{}", papers::output::json::mark_object(&change));
    }
    ctx.note(&said(&change));
    Ok(())
}

/// "2 papers marked seen (1 was already); 575 papers in the inbox".
fn said(change: &MarkChange) -> String {
    let papers = |n: usize| format!("{n} paper{}", if n == 1 { "" } else { "s" });
    let done = match change.state {
        ReadingState::New => "put back into the inbox".to_string(),
        state => format!("marked {}", state.name()),
    };
    let already = match change.unchanged {
        0 => String::new(),
        1 => " (1 was already)".to_string(),
        n => format!(" ({n} were already)"),
    };
    format!(
        "{} {done}{already}; {} in the inbox",
        papers(change.changed),
        papers(change.inbox)
    )
}
