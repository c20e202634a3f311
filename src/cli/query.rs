//! The commands that read an index: `search`, `similar`, `show`, `list`,
//! `info` and `dupes`. Each parses its flags, calls the library and prints.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use papers::index::reading::ReadingState;
use papers::search::{self, Mode, Query, SearchOptions, Searcher, Sort};

use super::{Context, ModelArgs, RankArgs};

/// Arguments of `papers search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for; several words are joined with spaces. A "quoted
    /// phrase" must appear in each hit and a -word must not (quote the whole
    /// query on a shell: papers search '"RoPE" scaling -survey')
    #[arg(
        required_unless_present = "file",
        conflicts_with = "file",
        value_name = "QUERY"
    )]
    query: Vec<String>,

    /// Use a text file as the query ("-" for stdin): each blank-line-separated
    /// paragraph is searched, and each hit says which paragraph it matched best
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,

    /// Which rankings to use
    #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
    mode: ModeArg,

    /// Order of the hits: score (best first), date (newest first) or
    /// upvotes (most first; Hugging Face papers); the hits are the same
    #[arg(long, value_enum, default_value_t = SortArg::Score)]
    sort: SortArg,

    /// Show why each hit matched: the closest sentence (chosen by meaning,
    /// which embeds the hits' sentences) and its rank in each mode
    #[arg(long)]
    explain: bool,

    /// Print nothing when the query's verdict is none (nothing in the index
    /// is about it) instead of the closest papers
    #[arg(long)]
    strict: bool,

    /// Search the words as typed: no spelling correction of words the
    /// index does not know
    #[arg(long)]
    as_typed: bool,

    #[command(flatten)]
    rank: RankArgs,

    #[command(flatten)]
    model: ModelArgs,
}

/// `--sort` values.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SortArg {
    Score,
    Date,
    Upvotes,
}

/// Search modes on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModeArg {
    /// Both rankings: the cosine and BM25, in one calibrated score
    Hybrid,
    /// Embedding similarity only
    Semantic,
    /// BM25 over the words only (the model, when it loads, only decides
    /// whether the query matches anything)
    Lexical,
}

/// Arguments of `papers similar`.
#[derive(Debug, Args)]
pub struct SimilarArgs {
    /// Ids of papers in the index (unique prefixes of 4 or more hex digits
    /// work); with several, papers like the whole set
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,

    /// Papers to steer away from
    #[arg(long = "not", value_name = "ID", num_args = 1..)]
    not: Vec<String>,

    #[command(flatten)]
    rank: RankArgs,
}

/// Arguments of `papers dupes`.
#[derive(Debug, Args)]
pub struct DupesArgs {
    /// Pairs with at least this cosine similarity (-1 to 1)
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0.75,
        allow_negative_numbers = true,
        value_parser = super::parse_cosine
    )]
    min_score: f32,

    /// ...that also share at least this fraction of the shorter abstract's
    /// word trigrams (0 to 1; 0 lists every pair above --min-score)
    #[arg(long, value_name = "F", default_value_t = 0.3, value_parser = super::parse_fraction)]
    min_overlap: f32,

    /// At most this many pairs, the most similar (memory grows with it,
    /// not with the index)
    #[arg(short = 'k', long = "limit", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    limit: u64,
}

/// Arguments of `papers show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Id or unique id prefix of the paper
    #[arg(value_name = "ID")]
    id: String,

    /// Print the abstract as the input gave it, before white space and
    /// LaTeX were cleaned
    #[arg(long)]
    raw: bool,
}

/// Arguments of `papers remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// Ids, unique id prefixes or arXiv ids of the papers to drop; they stay
    /// out when their input is indexed again. Without any, the ids of a
    /// result list piped in
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,

    /// Drop what this input brought instead: every record seen only in it
    /// (a file name or path, as `papers info` lists the inputs; records
    /// another input also holds are kept). Repeatable
    #[arg(long, value_name = "FILE", conflicts_with_all = ["ids", "undo", "list"])]
    pub source: Vec<String>,

    /// Print what would be removed and change nothing
    #[arg(short = 'n', long, conflicts_with_all = ["undo", "list"])]
    pub dry_run: bool,

    /// Forget these removals instead: the next `papers index` of their
    /// input brings the papers back
    #[arg(long, conflicts_with = "list")]
    pub undo: bool,

    /// List the papers removed so far (newest last)
    #[arg(long)]
    pub list: bool,
}

/// The query's text: the words given, or the contents of --file.
fn query_text(args: &SearchArgs) -> Result<String> {
    let text = match &args.file {
        None => args.query.join(" "),
        Some(path) => papers::limits::read_query(path)?,
    };
    papers::limits::check_query(&text)?;
    Ok(text)
}

pub fn search(ctx: &Context, args: SearchArgs) -> Result<()> {
    let paragraphs = search::paragraphs(&query_text(&args)?)?;
    let mode = match args.mode {
        ModeArg::Hybrid => Mode::Hybrid,
        ModeArg::Semantic => Mode::Semantic,
        ModeArg::Lexical => Mode::Lexical,
    };
    let options = SearchOptions {
        mode,
        strict: args.strict,
        as_typed: args.as_typed,
        ..args.rank.options()?
    };
    let searcher = Searcher::open_for(&ctx.index_dir, &args.model.choice(), &options, &|m| {
        ctx.note(m)
    })?;
    if options.dates.is_set() {
        let undated = searcher.index().undated()?;
        if undated > 0 {
            ctx.note(&format!(
                "--since/--until read the publication date, so {} without one (Daily Papers text, or records whose input gave none) {} left out; --in DATE and --listed-since filter by the day a paper was listed",
                super::count(undated, "paper"),
                if undated == 1 { "is" } else { "are" }
            ));
        }
    }
    // The process ends after this command: freeing the model (the
    // tokenizer's vocabulary is 60,000 strings) would only delay the exit.
    let searcher = std::mem::ManuallyDrop::new(searcher);
    let mut results = searcher.search(&Query {
        paragraphs,
        options,
        explain: args.explain,
    })?;
    results.sort(match args.sort {
        SortArg::Score => Sort::Score,
        SortArg::Date => Sort::Date,
        SortArg::Upvotes => Sort::Upvotes,
    });
    ctx.printer().hits(&results)?;
    Ok(())
}

pub fn similar(ctx: &Context, args: SimilarArgs) -> Result<()> {
    let results = open(ctx)?.similar(&args.ids, &args.not, &args.rank.options()?)?;
    ctx.printer().hits(&results)?;
    Ok(())
}

pub fn dupes(ctx: &Context, args: DupesArgs) -> Result<()> {
    let pairs = open(ctx)?.dupes(args.min_score, args.min_overlap, args.limit as usize)?;
    ctx.printer().dupes(&pairs)?;
    Ok(())
}

pub fn show(ctx: &Context, args: ShowArgs) -> Result<()> {
    let paper = open(ctx)?.show(&args.id)?;
    ctx.page_printer().paper(&paper, args.raw)?;
    Ok(())
}

/// Arguments of `papers list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only the papers marked saved (`papers mark saved`), the newest mark
    /// first
    #[arg(long, conflicts_with = "read")]
    saved: bool,

    /// Only the papers marked read, the newest mark first
    #[arg(long)]
    read: bool,
}

pub fn list(ctx: &Context, args: ListArgs) -> Result<()> {
    let searcher = open(ctx)?;
    let state = match (args.saved, args.read) {
        (true, _) => ReadingState::Saved,
        (_, true) => ReadingState::Read,
        _ => {
            ctx.printer().list(|each| searcher.for_each_paper(each))?;
            return Ok(());
        }
    };
    let papers = searcher.reading_list(state)?;
    ctx.note(&format!(
        "{} marked {}",
        super::count(papers.len(), "paper"),
        state.name()
    ));
    ctx.printer()
        .list(|each| papers.into_iter().try_for_each(each))?;
    Ok(())
}

pub fn info(ctx: &Context) -> Result<()> {
    let info = open(ctx)?.info()?;
    ctx.printer().info(&info)?;
    Ok(())
}

pub fn check(ctx: &Context) -> Result<()> {
    let records = open(ctx)?.check()?;
    ctx.note(&format!(
        "{}: {} records, every file checked, no damage found",
        ctx.index_dir.display(),
        records
    ));
    Ok(())
}

/// The searcher of the index the command names; commands without a query
/// load no model.
fn open(ctx: &Context) -> Result<Searcher> {
    Ok(Searcher::open(&ctx.index_dir, &Default::default())?)
}
