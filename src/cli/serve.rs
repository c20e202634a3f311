//! The long-lived commands: `papers serve` (HTTP API and web page),
//! `papers mcp` (Model Context Protocol over stdio) and `papers watch DIR`
//! (index new dumps as they arrive).

#[cfg(feature = "serve")]
use std::net::SocketAddr;
use std::path::PathBuf;
#[cfg(feature = "mcp")]
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "serve")]
use anyhow::Context as _;
use anyhow::Result;
use clap::Args;

#[cfg(feature = "mcp")]
use papers::search::Searcher;
#[cfg(feature = "serve")]
use papers::serve::{Limits, DEFAULT_PORT};
use papers::write::watch::Watcher;
use papers::write::IndexRequest;

use super::{Context, ModelArgs};

/// Arguments of `papers serve`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. The default answers only this machine; an
    /// address such as 0.0.0.0:7474 lets every machine that can reach this
    /// one search the index and read every abstract in it
    #[arg(long, value_name = "HOST:PORT", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    addr: SocketAddr,

    /// Requests answered at once (more wait for a turn) [default: the CPU count]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    workers: Option<u64>,

    /// Seconds one request may wait and run before it gets a 503
    #[arg(long, value_name = "SECS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,

    /// A host name the server also answers to (repeatable). It answers
    /// to localhost and the address it listens on; any other name in a
    /// request's Host header is refused, so that a web page on a name that
    /// resolves here (DNS rebinding) cannot read the index
    #[arg(long = "allow-host", value_name = "NAME", value_parser = host_name)]
    allow_host: Vec<String>,

    /// Let the server change the reader's index: the page's seen / read /
    /// save buttons on feed hits (POST /api/mark) and, for MCP clients at
    /// /mcp, the `tag`, `untag` and `mark` tools; without it the server
    /// never writes the index
    #[arg(long)]
    allow_write: bool,

    #[command(flatten)]
    model: ModelArgs,
}

/// Checks an `--allow-host` name: a host name or an address, without a
/// scheme, path or port (a Host header's port is not matched: the server
/// answers on its own), so a value that could never match is refused
/// rather than kept.
#[cfg(feature = "serve")]
fn host_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    let bad = |why: &str| {
        Err(format!(
            "'{text}' {why}: give a host name such as papers.lan"
        ))
    };
    if name.contains("://") || name.contains('/') {
        return bad("is a URL");
    }
    if name.is_empty() || name.contains(char::is_whitespace) {
        return bad("is not a host name");
    }
    let bare = name.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return Ok(bare.to_string());
    }
    if name.contains(':') {
        return bad("has a port (the server matches the name only)");
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return bad("is not a host name");
    }
    Ok(name.to_ascii_lowercase())
}

/// Arguments of `papers mcp`.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Let the agent change the reader's index: its tags and reading
    /// marks (the `tag`, `untag` and `mark` tools); without it the server
    /// only reads the index
    #[arg(long)]
    allow_write: bool,

    #[command(flatten)]
    model: ModelArgs,
}

/// Arguments of `papers watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The folder to watch (and its subfolders)
    #[arg(value_name = "DIR")]
    folder: PathBuf,

    /// Seconds a file must stay unchanged before it is indexed (a file
    /// still being written keeps changing)
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_seconds)]
    settle: f64,

    /// Seconds between looks at the folder
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_seconds)]
    every: f64,

    #[command(flatten)]
    model: ModelArgs,
}

/// Parses a number of seconds from 0.05 to a day.
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if (0.05..=86_400.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "'{text}' is not a number of seconds from 0.05 to 86400"
        )),
    }
}

/// A searcher that follows the writer, with its model loaded.
#[cfg(feature = "mcp")]
fn resident(ctx: &Context, model: &ModelArgs) -> Result<Arc<Searcher>> {
    let searcher = Searcher::open(&ctx.index_dir, &model.choice())?.follow();
    searcher.load_model(&|m| ctx.note(m))?;
    Ok(Arc::new(searcher))
}

#[cfg(feature = "serve")]
pub fn serve(ctx: &Context, args: ServeArgs) -> Result<()> {
    let searcher = resident(ctx, &args.model)?;
    let mut limits = Limits {
        timeout: Duration::from_secs(args.timeout),
        ..Limits::default()
    };
    if let Some(workers) = args.workers {
        limits.workers = workers as usize;
    }
    let records = searcher.index().len();
    papers::serve::run(
        searcher,
        args.addr,
        limits,
        &args.allow_host,
        args.allow_write,
        |addr| {
            // Said even with --quiet: a script starting the server on port 0
            // reads the address from here.
            eprintln!("papers: serving {records} papers on http://{addr}/ (Ctrl-C stops)");
        },
    )
    .with_context(|| format!("serving on {}", args.addr))?;
    ctx.note("stopped");
    Ok(())
}

#[cfg(feature = "mcp")]
pub fn mcp(ctx: &Context, args: McpArgs) -> Result<()> {
    let searcher = resident(ctx, &args.model)?;
    papers::mcp::run(searcher, args.allow_write)?;
    Ok(())
}

pub fn watch(ctx: &Context, args: WatchArgs) -> Result<()> {
    if !args.folder.is_dir() {
        anyhow::bail!("{}: not a folder", args.folder.display());
    }
    super::index::handle_ctrl_c();
    let mut watcher = Watcher::new(&args.folder, Duration::from_secs_f64(args.settle));
    ctx.note(&format!(
        "watching {} for new dumps (Ctrl-C stops)",
        args.folder.display()
    ));
    let tick = Duration::from_millis(50);
    loop {
        let ready = watcher.ready();
        if !ready.is_empty() {
            let request = IndexRequest {
                paths: ready.clone(),
                model: args.model.choice_for(usize::MAX),
                ..Default::default()
            };
            match super::index::execute(ctx, &request) {
                Ok(_) => {
                    // A file indexed before and changed since: the records
                    // of its older version it no longer holds go.
                    for path in ready.iter().filter(|p| watcher.seen_before(p)) {
                        let dropped = papers::write::drop_superseded(
                            &ctx.index_dir,
                            path,
                            &request.fields,
                            &papers::write::Quiet,
                        );
                        match dropped {
                            Ok(0) => {}
                            Ok(n) => ctx.note(&format!(
                                "{}: {n} record{} of its older version dropped",
                                path.display(),
                                if n == 1 { "" } else { "s" }
                            )),
                            Err(e) => ctx.warn(&format!("{}: {e}", path.display())),
                        }
                    }
                    watcher.done(&ready)
                }
                Err(e) if super::index::interrupted() => return Err(e),
                Err(e) => match e.downcast_ref::<papers::Error>() {
                    // Another writer has the index: try again next look.
                    Some(papers::Error::Storage { .. }) | Some(papers::Error::Io { .. }) => {
                        ctx.warn(&format!("{e:#}; trying again"));
                    }
                    // The inputs themselves are refused: not again until
                    // they change.
                    _ => {
                        ctx.warn(&format!("{e:#}"));
                        watcher.done(&ready);
                    }
                },
            }
        }
        let mut slept = Duration::ZERO;
        while slept < Duration::from_secs_f64(args.every) {
            if super::index::interrupted() {
                ctx.note("stopped");
                return Ok(());
            }
            std::thread::sleep(tick);
            slept += tick;
        }
    }
}
