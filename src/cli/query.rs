//! The commands that read an index: `search`, `similar`, `show`, `info`,
//! and `remove`, which rewrites it without some records.

use anyhow::Result;
use clap::Args;

use papers::embed::Embedder;
use papers::index::{Index, IndexLock, ModelStamp, Update};
use papers::output::InfoExtra;
use papers::Error;

use super::{model, Context, ModelArgs, RankArgs};

/// Arguments of `papers search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for; several words are joined with spaces
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,

    #[command(flatten)]
    rank: RankArgs,

    #[command(flatten)]
    model: ModelArgs,
}

/// Arguments of `papers similar`.
#[derive(Debug, Args)]
pub struct SimilarArgs {
    /// Id of a paper in the index (a unique prefix of 4 or more hex digits works)
    #[arg(value_name = "ID")]
    id: String,

    #[command(flatten)]
    rank: RankArgs,
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

pub fn search(ctx: &Context, args: SearchArgs) -> Result<()> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(Error::EmptyQuery.into());
    }
    let index = Index::open(&ctx.index_dir)?;
    let manifest = index.manifest();
    let files = model::resolve(ctx, &args.model, Some(&manifest.model))?;
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
    let embedder = model::load(&args.model, &files)?;
    let vector = embedder.embed_one(&query)?;
    let hits = index.search(&vector, &args.rank.options())?;
    ctx.printer().hits(&index, &hits)?;
    Ok(())
}

pub fn similar(ctx: &Context, args: SimilarArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let row = index.resolve(&args.id)?;
    let hits = index.similar(row, &args.rank.options())?;
    ctx.printer().hits(&index, &hits)?;
    Ok(())
}

pub fn show(ctx: &Context, args: ShowArgs) -> Result<()> {
    let index = Index::open(&ctx.index_dir)?;
    let row = index.resolve(&args.id)?;
    ctx.printer().paper(&index, row)?;
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
