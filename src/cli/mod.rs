//! The command line: clap types, turned at once into library calls. Flags
//! are parsed here and nowhere else.

mod export;
mod feed;
mod index;
mod mark;
mod model;
mod open;
mod piped;
mod progress;
mod query;
mod serve;
mod shell;

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use papers::output::{Format, Printer};
use papers::search::{DateRange, Scope, SearchOptions, Strategy};

/// Local semantic search over Daily Papers abstract dumps.
///
/// Index dumps with `papers index DIR`, then `papers search "QUERY"`,
/// `papers similar ID` and `papers show ID`. Output is a table on a
/// terminal and JSON Lines when piped or with --json.
#[derive(Debug, Parser)]
#[command(name = "papers", version, about, max_term_width = 100)]
pub struct Cli {
    /// Index directory [default: the platform data dir, e.g. ~/.local/share/papers/index]
    #[arg(long, global = true, env = "PAPERS_INDEX", value_name = "DIR")]
    index: Option<PathBuf>,

    /// Print JSON (JSON Lines for result lists), also the default when stdout is not a
    /// terminal (but for `show`, whose page reads as text through a pager)
    #[arg(long, global = true, conflicts_with = "table")]
    json: bool,

    /// Print the human-readable table even when stdout is not a terminal
    #[arg(long, global = true)]
    table: bool,

    /// Print no progress or informational messages on stderr
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,

    /// Also say which model was loaded and from where (told anyway when
    /// it is downloaded)
    #[arg(short, long, global = true)]
    verbose: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Add the abstracts of dump files and directories to the index
    Index(index::IndexArgs),
    /// Find the papers closest in meaning to a query
    Search(query::SearchArgs),
    /// Find the papers closest to a paper of the index (no model needed)
    Similar(query::SimilarArgs),
    /// Print one paper in full
    Show(query::ShowArgs),
    /// List every paper of the index, in the order they were added, or
    /// the reading list (--saved, --read)
    List(query::ListArgs),
    /// Describe the index: records, model, dimension, sources, size
    Info,
    /// List pairs of near-duplicate papers (revised versions, reposts)
    Dupes(query::DupesArgs),
    /// Drop papers from the index for good (re-indexing does not bring them back; --undo does)
    Remove(query::RemoveArgs),
    /// Mark papers as liked in a tag (a reading profile), or --not interested
    Tag(feed::TagArgs),
    /// Take papers out of a tag
    Untag(feed::UntagArgs),
    /// List the tags, with how many papers each holds
    Tags,
    /// Rank the papers you have not marked yet (the inbox) by your tags
    Feed(feed::FeedArgs),
    /// Mark papers seen, read or saved (out of the inbox), or new (back in)
    Mark(mark::MarkArgs),
    /// Print papers as BibTeX, CSV or Markdown (by id, or a result list piped in)
    Export(export::ExportArgs),
    /// Open a paper's arXiv page in the browser (prints the URL when there is none)
    Open(open::OpenArgs),
    /// Check every file of the index for damage (reads all of it)
    Check,
    /// Convert an index of an older format in place (nothing is embedded again)
    Upgrade,
    /// Print the embeddings of texts as JSON Lines (stdin lines when no TEXT)
    Embed(model::EmbedArgs),
    /// Resolve the model (fetching it if needed) and say where it is
    Model(ModelArgs),
    /// Serve the index: a web page and an HTTP JSON API (localhost by default)
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Serve the index to AI agents: a Model Context Protocol server on stdio
    #[cfg(feature = "mcp")]
    Mcp(serve::McpArgs),
    /// Index new or changed dumps as they appear in a folder, until Ctrl-C
    Watch(serve::WatchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(shell::CompletionsArgs),
    /// Print the man page (roff: `papers man | man -l -`)
    Man,
}

/// Which model to use and where to run it.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Hugging Face model id of a BERT-family sentence-transformer
    /// [default: the index's model, else sentence-transformers/all-MiniLM-L6-v2]
    #[arg(long, value_name = "REPO_ID")]
    model: Option<String>,

    /// Load the model from this folder (Hugging Face layout) instead of the hub
    #[arg(long, env = "PAPERS_MODEL_DIR", value_name = "DIR")]
    model_dir: Option<PathBuf>,

    /// Device to run the model on
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto)]
    device: DeviceArg,

    /// Float type of the encoder: f32 gives sentence-transformers' vectors
    /// to rounding; bf16 runs the matrix products on a CPU's AMX tiles or a
    /// GPU's tensor cores, as f16 does on a GPU (f16 also runs, slowly, on
    /// a CPU) [default: bf16 for bulk work on a CPU with AMX, else f32]
    #[arg(long, value_name = "TYPE", env = "PAPERS_PRECISION")]
    precision: Option<papers::embed::Precision>,
}

/// Device choices on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum DeviceArg {
    /// A GPU if this build supports one and the machine has it, else the CPU
    Auto,
    /// The CPU
    Cpu,
    /// An NVIDIA GPU (build with --features cuda)
    Cuda,
    /// An Apple GPU (build with --features metal)
    Metal,
}

/// `--strategy` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum StrategyArg {
    Auto,
    Exact,
    Int8,
    Binary,
    Graph,
}

/// Options shared by `search` and `similar`.
#[derive(Debug, Clone, Args)]
pub struct RankArgs {
    /// Number of results
    #[arg(short = 'k', long = "limit", default_value_t = 10, value_parser = parse_count)]
    limit: u64,

    /// Only results scoring at least S (0 to 1): for search, the relevance
    /// score [default: the -k best, whatever the query's verdict]; for
    /// similar, the cosine
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_fraction)]
    min_score: Option<f32>,

    /// Score every paper with its f32 vector (same as --strategy exact)
    #[arg(long, conflicts_with_all = ["graph", "strategy"])]
    exact: bool,

    /// Walk the HNSW graph, built in memory (same as --strategy graph)
    #[arg(long, conflicts_with = "strategy")]
    graph: bool,

    /// How candidates are found: auto (by index size; `papers info` says),
    /// exact (f32 scan), int8 or binary (scan of a compact copy, best
    /// candidates rescored with f32), graph (HNSW)
    #[arg(long, value_enum, value_name = "HOW")]
    strategy: Option<StrategyArg>,

    /// Only papers published on or after this date (YYYY-MM-DD; papers
    /// without a date, from text dumps, are left out)
    #[arg(long, value_name = "DATE", value_parser = parse_date_arg)]
    since: Option<u32>,

    /// Only papers published on or before this date (YYYY-MM-DD)
    #[arg(long, value_name = "DATE", value_parser = parse_date_arg)]
    until: Option<u32>,

    /// Only papers seen in this input (a dump's file name or path, as
    /// `papers info` lists them) or listed on this day (YYYY-MM-DD: the
    /// day its daily list featured it, else the day it was indexed);
    /// repeat for several inputs
    #[arg(long = "in", value_name = "FILE|DATE")]
    within: Vec<String>,

    /// Only papers with an author whose name contains this (ignoring case;
    /// repeat to require several authors)
    #[arg(long, value_name = "NAME")]
    author: Vec<String>,

    /// Only papers in this arXiv category or one under it (`cs` takes
    /// `cs.CL`); repeat for any of several
    #[arg(long, value_name = "CATEGORY")]
    category: Vec<String>,

    /// Only papers listed on or after this day (YYYY-MM-DD; see --in)
    #[arg(long, value_name = "DATE", value_parser = parse_date_arg)]
    listed_since: Option<u32>,

    /// Only papers listed on or before this day (YYYY-MM-DD)
    #[arg(long, value_name = "DATE", value_parser = parse_date_arg)]
    listed_until: Option<u32>,
}

/// Parses a count of results: a whole number of at least 1.
pub fn parse_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{text}' is not a whole number of at least 1")),
    }
}

/// Parses a cosine similarity: a number from -1 to 1.
pub fn parse_cosine(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if (-1.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err(format!("'{text}' is not a cosine similarity from -1 to 1")),
        Err(_) => Err(format!("'{text}' is not a number")),
    }
}

/// Parses a fraction: a number from 0 to 1.
pub fn parse_fraction(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err(format!("'{text}' is not a fraction from 0 to 1")),
        Err(_) => Err(format!("'{text}' is not a number")),
    }
}

/// Parses a YYYY-MM-DD date argument.
fn parse_date_arg(text: &str) -> Result<u32, String> {
    papers::request::values::date("date", text).map_err(|bad| bad.message)
}

impl RankArgs {
    /// The options; `--since` after `--until` is an error (no day is in
    /// that range).
    fn options(&self) -> Result<SearchOptions> {
        let options = SearchOptions {
            limit: usize::try_from(self.limit).unwrap_or(usize::MAX),
            min_score: self.min_score,
            strict: false,
            as_typed: false,
            strategy: match (self.exact, self.graph, self.strategy) {
                (true, _, _) => Strategy::Exact,
                (_, true, _) => Strategy::Graph,
                (_, _, Some(StrategyArg::Exact)) => Strategy::Exact,
                (_, _, Some(StrategyArg::Int8)) => Strategy::Quantized,
                (_, _, Some(StrategyArg::Binary)) => Strategy::Binary,
                (_, _, Some(StrategyArg::Graph)) => Strategy::Graph,
                (_, _, Some(StrategyArg::Auto) | None) => Strategy::Auto,
            },
            mode: Default::default(),
            dates: DateRange {
                since: self.since,
                until: self.until,
            },
            scope: Scope {
                sources: self.within.clone(),
                listed: DateRange {
                    since: self.listed_since,
                    until: self.listed_until,
                },
                authors: self.author.clone(),
                categories: self.category.clone(),
            },
        };
        Ok(papers::request::checked(options)?)
    }
}

/// `-v`, for the model flags' view of the model choice.
pub(crate) static VERBOSE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Settings every command reads, resolved from the flags and environment.
pub struct Context {
    index_dir: PathBuf,
    json: bool,
    /// `--json` given: JSON even for a page a reader would page through.
    json_asked: bool,
    quiet: bool,
    color: bool,
    stderr_is_terminal: bool,
}

impl Context {
    fn printer(&self) -> Printer<std::io::StdoutLock<'static>> {
        self.printer_as(self.json)
    }

    /// The printer for one paper's page: the text page unless `--json`
    /// was given, also when piped (`papers show ID | less`).
    fn page_printer(&self) -> Printer<std::io::StdoutLock<'static>> {
        self.printer_as(self.json_asked)
    }

    fn printer_as(&self, json: bool) -> Printer<std::io::StdoutLock<'static>> {
        let format = if json {
            Format::Json
        } else {
            Format::Human {
                color: self.color,
                width: terminal_width(),
            }
        };
        Printer::new(std::io::stdout().lock(), format)
    }

    /// An informational line on stderr, unless --quiet.
    fn note(&self, message: &str) {
        if !self.quiet {
            eprintln!("papers: {message}");
        }
    }

    /// A warning on stderr (a skipped input line), unless --quiet, as
    /// `index` reports its bad lines.
    pub(crate) fn warn(&self, message: &str) {
        if !self.quiet {
            eprintln!("papers: warning: {message}");
        }
    }
}

/// `n` and the noun, plural unless `n` is 1 ("1 file", "2 files").
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Columns for tables: `COLUMNS` when set, else the terminal's width, else 100.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
        .filter(|&c: &usize| c >= 40)
        .unwrap_or(100)
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    let stdout_is_terminal = std::io::stdout().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let index_dir = match cli.index {
        Some(dir) => dir,
        None => papers::index::Index::default_dir().ok_or_else(|| {
            anyhow::anyhow!(
                "no data directory on this platform; pass --index DIR or set PAPERS_INDEX"
            )
        })?,
    };
    VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    let ctx = Context {
        index_dir,
        json: cli.json || (!stdout_is_terminal && !cli.table),
        json_asked: cli.json,
        quiet: cli.quiet,
        color: stdout_is_terminal && !no_color,
        stderr_is_terminal: std::io::stderr().is_terminal(),
    };
    match cli.command {
        Command::Index(args) => index::run(&ctx, args),
        Command::Search(args) => query::search(&ctx, args),
        Command::Similar(args) => query::similar(&ctx, args),
        Command::Show(args) => query::show(&ctx, args),
        Command::List(args) => query::list(&ctx, args),
        Command::Info => query::info(&ctx),
        Command::Dupes(args) => query::dupes(&ctx, args),
        Command::Remove(args) => index::remove(&ctx, args),
        Command::Tag(args) => feed::tag(&ctx, args),
        Command::Untag(args) => feed::untag(&ctx, args),
        Command::Tags => feed::tags(&ctx),
        Command::Feed(args) => feed::feed(&ctx, args),
        Command::Mark(args) => mark::mark(&ctx, args),
        Command::Export(args) => export::export(&ctx, args),
        Command::Open(args) => open::open(&ctx, args),
        Command::Check => query::check(&ctx),
        Command::Upgrade => index::upgrade(&ctx),
        Command::Embed(args) => model::embed(&ctx, args),
        Command::Model(args) => model::describe(&ctx, args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::serve(&ctx, args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => serve::mcp(&ctx, args),
        Command::Watch(args) => serve::watch(&ctx, args),
        Command::Completions(args) => shell::completions(args),
        Command::Man => shell::man(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
