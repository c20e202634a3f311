//! `papers tag`, `untag`, `tags` and `feed`: reading profiles and the daily
//! feed they rank.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use papers::feed::{FeedRequest, Scope, TagChange};
use papers::output::digest::{self, Digest};
use papers::search::Searcher;
use papers::write::Observer;

use super::Context;

/// Arguments of `papers tag`.
#[derive(Debug, Args)]
pub struct TagArgs {
    /// The tag: letters, digits, '-', '_' and '.' (no spaces or slashes)
    #[arg(value_name = "NAME")]
    name: String,

    /// Papers you like (ids, unique prefixes, arXiv ids); without any and
    /// without --not, the ids of a result list piped in
    #[arg(value_name = "ID")]
    ids: Vec<String>,

    /// Papers you are not interested in
    #[arg(long = "not", value_name = "ID", num_args = 1..)]
    not: Vec<String>,
}

/// Arguments of `papers untag`.
#[derive(Debug, Args)]
pub struct UntagArgs {
    /// The tag
    #[arg(value_name = "NAME")]
    name: String,

    /// Papers to take out of it (liked or not); without any, the ids of a
    /// result list piped in
    #[arg(value_name = "ID")]
    ids: Vec<String>,
}

/// Arguments of `papers feed`.
#[derive(Debug, Args)]
pub struct FeedArgs {
    /// Tags whose profiles rank the papers [default: every tag]
    #[arg(value_name = "NAME")]
    tags: Vec<String>,

    /// Number of papers
    #[arg(short = 'k', long = "limit", default_value_t = 20, value_parser = super::parse_count)]
    limit: u64,

    /// Rank the papers added or published since this date (YYYY-MM-DD)
    /// instead of the inbox (the papers not yet marked)
    #[arg(long, value_name = "DATE", value_parser = super::parse_date_arg, conflicts_with = "from")]
    since: Option<u32>,

    /// Rank the papers of these input files instead
    #[arg(long, value_name = "FILE", num_args = 1..)]
    from: Vec<String>,

    /// Only papers containing this word or phrase (repeatable)
    #[arg(long, value_name = "WORD")]
    must: Vec<String>,

    /// Leave out papers containing this word or phrase (repeatable)
    #[arg(long, value_name = "WORD")]
    exclude: Vec<String>,

    /// Output format [default: a table on a terminal, JSON Lines otherwise]
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<FeedFormat>,

    /// Write the feed to this file (replaced whole, never half-written)
    /// instead of stdout: a feed reader can subscribe to it
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `--format` values of `papers feed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FeedFormat {
    /// The table
    Table,
    /// JSON Lines, one hit per line
    Json,
    /// A Markdown digest
    Markdown,
    /// RSS 2.0
    Rss,
    /// Atom 1.0
    Atom,
}

fn said(ctx: &Context, verb: &str, change: &TagChange) {
    let s = &change.summary;
    ctx.note(&format!(
        "{verb} {} paper{}; tag `{}` has {} liked, {} not interested{}",
        change.changed,
        if change.changed == 1 { "" } else { "s" },
        s.name,
        s.liked,
        s.disliked,
        if s.missing > 0 {
            format!(", {} no longer in the index", s.missing)
        } else {
            String::new()
        }
    ));
}

/// The library's notes (waiting for the writer lock) on stderr.
pub(super) struct Notes<'a>(pub(super) &'a Context);

impl Observer for Notes<'_> {
    fn note(&self, message: &str) {
        self.0.note(message);
    }
}

pub fn tag(ctx: &Context, args: TagArgs) -> Result<()> {
    let liked = if args.not.is_empty() {
        let usage = format!(
            "name papers to tag (`papers tag {0} ID...`, `papers tag {0} --not ID...`) \
             or pipe a result list into it (`papers feed --json | papers tag {0}`)",
            args.name
        );
        super::piped::ids_or_piped(args.ids, &usage, "tag")?
    } else {
        args.ids
    };
    let change = papers::write::tag(&ctx.index_dir, &args.name, &liked, &args.not, &Notes(ctx))?;
    said(ctx, "tagged", &change);
    Ok(())
}

pub fn untag(ctx: &Context, args: UntagArgs) -> Result<()> {
    let usage = format!(
        "name papers to untag (`papers untag {0} ID...`) or pipe a result list into it",
        args.name
    );
    let ids = super::piped::ids_or_piped(args.ids, &usage, "untag")?;
    let change = papers::write::untag(&ctx.index_dir, &args.name, &ids, &Notes(ctx))?;
    said(ctx, "untagged", &change);
    Ok(())
}

pub fn tags(ctx: &Context) -> Result<()> {
    let tags = Searcher::open(&ctx.index_dir, &Default::default())?.tags()?;
    ctx.printer().tags(&tags)?;
    Ok(())
}

pub fn feed(ctx: &Context, args: FeedArgs) -> Result<()> {
    let scope = match (args.since, args.from.is_empty()) {
        (Some(date), _) => Scope::Since(date),
        (None, false) => Scope::From(args.from.clone()),
        (None, true) => Scope::Inbox,
    };
    let request = FeedRequest {
        tags: args.tags,
        scope,
        limit: usize::try_from(args.limit).unwrap_or(usize::MAX),
        must: args.must,
        exclude: args.exclude,
    };
    let searcher = Searcher::open(&ctx.index_dir, &Default::default())?;
    let feed = searcher.feed(&request)?;
    for skipped in &feed.skipped {
        ctx.warn(skipped);
    }
    if feed.unranked {
        ctx.note(&format!(
            "{}; meanwhile, the new papers newest first",
            papers::feed::UNRANKED_HINT
        ));
    } else if feed.hits.is_empty() {
        ctx.note(&feed.described);
    }
    let format = args.format.unwrap_or(match (ctx.json, &args.output) {
        (true, _) => FeedFormat::Json,
        (false, Some(_)) => FeedFormat::Rss,
        (false, None) => FeedFormat::Table,
    });
    let document = match format {
        FeedFormat::Markdown => Some(Digest::Markdown),
        FeedFormat::Rss => Some(Digest::Rss),
        FeedFormat::Atom => Some(Digest::Atom),
        FeedFormat::Table | FeedFormat::Json => None,
    };
    let text = match document {
        Some(kind) => {
            let link = args
                .output
                .as_ref()
                .map(|p| {
                    let path = std::path::absolute(p).unwrap_or(p.clone());
                    format!("file://{}", path.display())
                })
                .unwrap_or_default();
            digest::render(&feed, kind, &link).into_bytes()
        }
        None => {
            let mut buffer = Vec::new();
            let mut printer = match format {
                FeedFormat::Json => {
                    papers::output::Printer::new(&mut buffer, papers::output::Format::Json)
                }
                _ => papers::output::Printer::new(
                    &mut buffer,
                    papers::output::Format::Human {
                        color: ctx.color && args.output.is_none(),
                        width: super::terminal_width(),
                    },
                ),
            };
            printer.feed(&feed)?;
            buffer
        }
    };
    match &args.output {
        Some(path) => {
            let path = &std::path::absolute(path).unwrap_or(path.clone());
            papers::index::files::replace_atomic(path, &text)
                .with_context(|| format!("{}: cannot write the feed", path.display()))?;
            ctx.note(&format!(
                "wrote {} to {}",
                super::count(feed.hits.len(), "paper"),
                path.display()
            ));
        }
        None => std::io::stdout().lock().write_all(&text)?,
    }
    Ok(())
}
