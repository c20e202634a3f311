//! `papers index PATH...`: read dumps, embed what is new, write the index.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use papers::corpus::Corpus;
use papers::embed::Embedder;
use papers::index::{Index, IndexLock, ModelStamp, Update};
use papers::Error;

use super::{model, Context, ModelArgs};

/// Arguments of `papers index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Dump files and directories of dumps (walked in sorted order)
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Start from an empty index instead of adding to the existing one
    #[arg(long)]
    rebuild: bool,

    #[command(flatten)]
    model: ModelArgs,
}

/// Set by the first Ctrl-C; the embedding loop stops at the next batch.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Ctrl-C while indexing stops after the current batch, before anything is
/// written; a second Ctrl-C exits at once. Either way the index on disk is
/// the previous one, since a write is a rename of a complete generation.
fn handle_ctrl_c() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
}

pub fn run(ctx: &Context, args: IndexArgs) -> Result<()> {
    let started = Instant::now();
    handle_ctrl_c();
    let corpus = Corpus::load(&args.paths)?;
    for skipped in &corpus.skipped {
        eprintln!(
            "papers: warning: {}: {}; skipped",
            skipped.path.display(),
            skipped.reason
        );
    }

    let dir = &ctx.index_dir;
    let _lock = IndexLock::acquire(dir, || {
        ctx.note(&format!(
            "waiting for another `papers index` to finish with {}",
            dir.display()
        ))
    })?;
    let existing = if args.rebuild {
        None
    } else {
        match Index::open(dir) {
            Ok(index) => Some(index),
            Err(Error::IndexMissing { .. }) => None,
            Err(e) => return Err(e.into()),
        }
    };
    let index_model = existing.as_ref().map(|i| i.manifest().model.clone());
    if let (Some(index), Some(asked)) = (&existing, &args.model.model) {
        if &index.manifest().model != asked {
            return Err(Error::IndexModelMismatch {
                path: dir.clone(),
                index_model: index.manifest().model.clone(),
                model: asked.clone(),
            }
            .into());
        }
    }

    let mut update = Update::new(existing.as_ref(), &corpus);
    let stamp = if update.pending().is_empty() && existing.is_some() {
        ModelStamp::of(existing.as_ref().map(Index::manifest).expect("checked"))
    } else {
        let files = model::resolve(ctx, &args.model, index_model.as_deref())?;
        let digest = files.weights_sha256()?;
        if let Some(index) = &existing {
            if index.manifest().weights_sha256 != digest {
                return Err(Error::IndexModelMismatch {
                    path: dir.clone(),
                    index_model: format!(
                        "{} (weights {})",
                        index.manifest().model,
                        short(&index.manifest().weights_sha256)
                    ),
                    model: format!("{} (weights {})", files.model, short(&digest)),
                }
                .into());
            }
        }
        let embedder = model::load(&args.model, &files)?;
        if let Err(err) = embed_pending(ctx, &embedder, &mut update) {
            if matches!(err.downcast_ref::<Error>(), Some(Error::Interrupted)) {
                let kept = existing.as_ref().map_or(0, |i| i.papers().len());
                return Err(anyhow::Error::new(Error::Interrupted).context(format!(
                    "stopped by Ctrl-C; nothing was written and the index keeps its {kept} records \
                     (run the same command again to finish)"
                )));
            }
            return Err(err);
        }
        ModelStamp {
            model: files.model.clone(),
            weights_sha256: digest,
            dimension: embedder.dimension(),
            max_seq_length: embedder.max_seq_length(),
        }
    };

    let report = if update.is_noop() {
        let mut report = update.report().clone();
        report.records = existing.as_ref().map_or(0, |i| i.papers().len());
        report
    } else {
        update.commit(dir, &stamp)?
    };
    ctx.note(&format!(
        "{} files read ({} paragraphs, {} unique), {} skipped: {} added, {} already present; \
         {} records in {} ({:.1}s)",
        report.files,
        report.paragraphs,
        report.unique,
        report.skipped,
        report.added,
        report.already_present,
        report.records,
        dir.display(),
        started.elapsed().as_secs_f64()
    ));
    if ctx.json {
        ctx.printer().report(&report, dir)?;
    }
    Ok(())
}

fn short(digest: &str) -> &str {
    &digest[..12.min(digest.len())]
}

/// Embeds every record the update still lacks a vector for, and the
/// windows of those too long for the model, with a progress bar on a
/// terminal.
fn embed_pending(ctx: &Context, embedder: &dyn Embedder, update: &mut Update) -> Result<()> {
    let (positions, mut texts): (Vec<usize>, Vec<String>) = update
        .pending()
        .into_iter()
        .map(|(p, t)| (p, t.to_string()))
        .unzip();
    if texts.is_empty() {
        return Ok(());
    }
    // Each record's windows follow all the records' own texts.
    let mut window_counts = Vec::with_capacity(texts.len());
    let mut window_texts = Vec::new();
    for text in &texts {
        let windows = embedder.windows(text)?;
        window_counts.push(windows.len());
        window_texts.extend(windows);
    }
    let records = texts.len();
    texts.extend(window_texts);
    let bar = ProgressBar::with_draw_target(
        Some(texts.len() as u64),
        if ctx.quiet || !ctx.stderr_is_terminal {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "embedding {bar:40} {pos}/{len} passages ({per_sec}, eta {eta})",
        )
        .expect("valid template"),
    );
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let result = embedder.embed(&refs, &mut |done| {
        bar.set_position(done as u64);
        if interrupted() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    bar.finish_and_clear();
    let mut vectors = result?.into_iter();
    for &position in &positions {
        let vector = vectors.next().expect("one vector per text");
        update.set_vector(position, vector);
    }
    debug_assert_eq!(positions.len(), records);
    for (&position, count) in positions.iter().zip(window_counts) {
        update.set_windows(position, vectors.by_ref().take(count).collect());
    }
    Ok(())
}
