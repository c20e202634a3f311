//! The commands that read an index: `search`, `similar`, `show`, `list`,
//! `info` and `dupes`. Each parses its flags, calls the library and prints.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use papers::index::Index;
use papers::output::{Annotations, InfoExtra};
use papers::query;
use papers::search::{Mode, SearchOptions};

use super::{Context, ModelArgs, RankArgs};

/// Arguments of `papers search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for; several words are joined with spaces
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

    /// Show why each hit matched: the closest sentence (chosen by meaning,
    /// which embeds the hits' sentences) and its rank in each mode
    #[arg(long)]
    explain: bool,

    #[command(flatten)]
    rank: RankArgs,

    #[command(flatten)]
    model: ModelArgs,
}

/// Search modes on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModeArg {
    /// Fuse the semantic and lexical rankings (reciprocal rank fusion)
    Hybrid,
    /// Embedding similarity only
    Semantic,
    /// BM25 over the words only; loads no model
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
    /// Ids or unique id prefixes of the papers to drop
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
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
    let paragraphs = query::paragraphs(&query_text(&args)?)?;
    let mode = match args.mode {
        ModeArg::Hybrid => Mode::Hybrid,
        ModeArg::Semantic => Mode::Semantic,
        ModeArg::Lexical => Mode::Lexical,
    };
    let options = SearchOptions {
        mode,
        ..args.rank.options()
    };
    let (index, model) = query::open(&ctx.index_dir, &args.model.choice(), &options, &|m| {
        ctx.note(m)
    })?;
    // The process ends after this command: freeing the model (the
    // tokenizer's vocabulary is 60,000 strings) would only delay the exit.
    let model = std::mem::ManuallyDrop::new(model);
    let request = query::Query {
        paragraphs,
        options,
        explain: args.explain,
    };
    let answer = query::answer(
        &index,
        model.as_ref().map(|m| m as &dyn papers::embed::Embedder),
        &request,
    )?;
    ctx.printer().hits(&index, &answer.hits, &answer.notes)?;
    Ok(())
}

pub fn similar(ctx: &Context, args: SimilarArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let resolve = |ids: &[String]| {
        ids.iter()
            .map(|id| index.resolve(id))
            .collect::<papers::Result<Vec<_>>>()
    };
    let like = resolve(&args.ids)?;
    let unlike = resolve(&args.not)?;
    let hits = index.similar_to_set(&like, &unlike, &args.rank.options())?;
    ctx.printer().hits(&index, &hits, &Annotations::default())?;
    Ok(())
}

pub fn dupes(ctx: &Context, args: DupesArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let pairs = index.near_duplicates(args.min_score, args.min_overlap, args.limit as usize)?;
    ctx.printer().dupes(&index, &pairs)?;
    Ok(())
}

pub fn show(ctx: &Context, args: ShowArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let row = index.resolve(&args.id)?;
    ctx.printer().paper(&index, row, args.raw)?;
    Ok(())
}

pub fn list(ctx: &Context) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    ctx.printer().list(&index)?;
    Ok(())
}

pub fn info(ctx: &Context) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let extra = InfoExtra {
        strategy: index.resolve_strategy(Default::default()),
        size_bytes: index.size_on_disk(),
    };
    ctx.printer().info(&index, &extra)?;
    Ok(())
}

pub fn check(ctx: &Context) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    index.check()?;
    ctx.note(&format!(
        "{}: {} records, every file checked, no damage found",
        ctx.index_dir.display(),
        index.len()
    ));
    Ok(())
}
