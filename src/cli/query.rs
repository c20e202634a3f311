//! The commands that read an index: `search`, `similar`, `show`, `list`, `info`,
//! and `remove`, which rewrites it without some records.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use papers::embed::{BertEmbedder, Embedder};
use papers::evidence;
use papers::index::{Index, IndexLock, Manifest, ModelStamp, Update};
use papers::output::{Annotations, InfoExtra};
use papers::paper::sentences;
use papers::search::{Hit, Mode, SearchOptions};
use papers::Error;

use super::{model, Context, ModelArgs, RankArgs};

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
    /// Pairs with at least this cosine similarity
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0.75,
        allow_negative_numbers = true
    )]
    min_score: f32,

    /// ...that also share at least this fraction of the shorter abstract's
    /// word trigrams (0 lists every pair above --min-score)
    #[arg(long, value_name = "F", default_value_t = 0.3)]
    min_overlap: f32,
}

/// Arguments of `papers show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Id or unique id prefix of the paper
    #[arg(value_name = "ID")]
    id: String,
}

/// Arguments of `papers remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// Ids or unique id prefixes of the papers to drop
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,
}

/// The query's paragraphs: the words given, or the paragraphs of --file.
fn query_paragraphs(args: &SearchArgs) -> Result<Vec<String>> {
    let text = match &args.file {
        None => args.query.join(" "),
        Some(path) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the query from stdin")?;
            text
        }
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read query file {}", path.display()))?,
    };
    let paragraphs: Vec<String> = text
        .replace("\r\n", "\n")
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    if paragraphs.is_empty() {
        return Err(Error::EmptyQuery.into());
    }
    Ok(paragraphs)
}

pub fn search(ctx: &Context, args: SearchArgs) -> Result<()> {
    let paragraphs = query_paragraphs(&args)?;
    let mode = match args.mode {
        ModeArg::Hybrid => Mode::Hybrid,
        ModeArg::Semantic => Mode::Semantic,
        ModeArg::Lexical => Mode::Lexical,
    };
    let options = SearchOptions {
        mode,
        ..args.rank.options()
    };
    let (index, embedder) = match mode {
        Mode::Lexical => (Index::open(&ctx.index_dir)?, None),
        _ => {
            let (index, model) = open_with_model(ctx, &args.model, &options)?;
            (index, Some(model))
        }
    };
    // The process ends after this command: freeing the model (the
    // tokenizer's vocabulary is 60,000 strings) would only delay the exit.
    let embedder = std::mem::ManuallyDrop::new(embedder);
    let refs: Vec<&str> = paragraphs.iter().map(String::as_str).collect();
    let vectors = match &*embedder {
        Some(model) => Some(model.embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?),
        None => None,
    };

    // Each paragraph's top hits; a record keeps its best paragraph.
    let mut best: HashMap<usize, (Hit, usize)> = HashMap::new();
    for (p, text) in paragraphs.iter().enumerate() {
        let vector = vectors.as_ref().map(|v| v[p].as_slice());
        for hit in index.search_text(text, vector, &options)? {
            let slot = best.entry(hit.row).or_insert((hit, p));
            if hit.score > slot.0.score {
                *slot = (hit, p);
            }
        }
    }
    let mut ranked: Vec<(Hit, usize)> = best.into_values().collect();
    ranked.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.row.cmp(&b.0.row)));
    ranked.truncate(options.limit);

    let terms: Vec<HashSet<String>> = paragraphs
        .iter()
        .map(|p| evidence::query_terms(p))
        .collect();
    let texts: Vec<&str> = ranked
        .iter()
        .map(|(hit, _)| index.papers()[hit.row].text.as_str())
        .collect();
    let evidence = match (&*embedder, &vectors, args.explain) {
        (Some(model), Some(vectors), true) => {
            // One model pass over every sentence of every hit.
            let sentences: Vec<Vec<&str>> = texts.iter().map(|t| sentences(t)).collect();
            let flat: Vec<&str> = sentences.iter().flatten().copied().collect();
            let mut sentence_vectors = model
                .embed(&flat, &mut |_| std::ops::ControlFlow::Continue(()))?
                .into_iter();
            sentences
                .iter()
                .zip(&ranked)
                .map(|(s, (_, p))| {
                    let v: Vec<Vec<f32>> = sentence_vectors.by_ref().take(s.len()).collect();
                    evidence::by_meaning(s, &v, &vectors[*p]).to_string()
                })
                .collect()
        }
        _ => {
            let bm25 = index.lexical()?;
            texts
                .iter()
                .zip(&ranked)
                .map(|(t, (_, p))| evidence::by_words(t, &terms[*p], bm25).to_string())
                .collect()
        }
    };
    let notes = Annotations {
        mode: Some(mode),
        evidence,
        query_paragraph: if paragraphs.len() > 1 {
            ranked.iter().map(|(_, p)| p + 1).collect()
        } else {
            Vec::new()
        },
        terms: terms.into_iter().flatten().collect(),
        explain: args.explain,
    };
    let hits: Vec<Hit> = ranked.into_iter().map(|(hit, _)| hit).collect();
    ctx.printer().hits(&index, &hits, &notes)?;
    Ok(())
}

/// Opens the index (with what a search with `options` reads) and loads the
/// model it was built with side by side: each takes milliseconds that a
/// one-query process waits for.
fn open_with_model(
    ctx: &Context,
    args: &ModelArgs,
    options: &SearchOptions,
) -> Result<(Index, BertEmbedder)> {
    let manifest = Manifest::read(&ctx.index_dir)?;
    let (index, embedder) = std::thread::scope(|scope| {
        let index = scope.spawn(|| {
            let index = Index::open(&ctx.index_dir)?;
            index.prepare(options)?;
            Ok::<_, papers::Error>(index)
        });
        let embedder = load_index_model(ctx, &manifest, args);
        let index = index
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (index, embedder)
    });
    let index = index?;
    // A writer may have replaced the index between the two reads.
    let embedder = if index.manifest().weights_sha256 == manifest.weights_sha256 {
        embedder?
    } else {
        load_index_model(ctx, index.manifest(), args)?
    };
    Ok((index, embedder))
}

/// Loads the model an index was built with, refusing one whose weights differ.
fn load_index_model(ctx: &Context, manifest: &Manifest, args: &ModelArgs) -> Result<BertEmbedder> {
    let files = model::resolve(ctx, args, Some(&manifest.model))?;
    let digest = files.weights_sha256()?;
    if digest != manifest.weights_sha256 {
        return Err(Error::IndexModelMismatch {
            path: ctx.index_dir.clone(),
            index_model: format!(
                "{} (weights {})",
                manifest.model,
                &manifest.weights_sha256[..12.min(manifest.weights_sha256.len())]
            ),
            model: format!("{} (weights {})", files.model, &digest[..12]),
        }
        .into());
    }
    model::load(args, &files)
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
    let pairs = index.near_duplicates(args.min_score, args.min_overlap);
    ctx.printer().dupes(&index, &pairs)?;
    Ok(())
}

pub fn show(ctx: &Context, args: ShowArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let row = index.resolve(&args.id)?;
    ctx.printer().paper(&index, row)?;
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

pub fn remove(ctx: &Context, args: RemoveArgs) -> Result<()> {
    let dir = &ctx.index_dir;
    let _lock = IndexLock::acquire(dir, || {
        ctx.note(&format!(
            "waiting for another `papers index` to finish with {}",
            dir.display()
        ))
    })?;
    let index = Index::open(dir)?;
    let mut rows = args
        .ids
        .iter()
        .map(|id| index.resolve(id))
        .collect::<papers::Result<Vec<_>>>()?;
    rows.sort_unstable();
    rows.dedup();
    let stamp = ModelStamp::of(index.manifest());
    let report = Update::remove(&index, &rows).commit(dir, &stamp)?;
    ctx.note(&format!(
        "removed {} records; {} left",
        report.removed, report.records
    ));
    if ctx.json {
        ctx.printer().report(&report, dir)?;
    }
    Ok(())
}
