//! `papers index PATH...`: flags in, [`papers::write::index`] run with a
//! progress bar and Ctrl-C handling, the summary out.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget};

use papers::corpus::Skipped;
use papers::index::UpdateReport;
use papers::write::{self, IndexRequest, Observer};

use super::{count, Context, ModelArgs};

/// Arguments of `papers index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Dump files and directories of dumps (walked in sorted order)
    #[arg(required_unless_present = "embeddings", value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Index records that carry their vectors (`embedding`), made
    /// elsewhere, without embedding them again: JSON Lines (gzip too) or
    /// Parquet (`part-*.parquet` as Spark and Ray write them), files or
    /// folders, streamed a batch at a time. A sample of 16 is embedded to
    /// check they are this model's
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "paths")]
    embeddings: Vec<PathBuf>,

    /// With --embeddings: store the vectors without the check
    #[arg(long, requires = "embeddings")]
    no_verify: bool,

    /// Start from an empty index instead of adding to the existing one
    #[arg(long)]
    rebuild: bool,

    /// Where a part of a JSON Lines record is, as NAME=PATH with a dotted
    /// path (e.g. abstract=paper.summary); NAME is id, title, abstract,
    /// authors, categories or date. Repeatable
    #[arg(long = "field", value_name = "NAME=PATH", value_parser = parse_field)]
    fields: Vec<String>,

    /// Largest input file read, in bytes after decompression; larger
    /// files are skipped with a warning
    #[arg(long, value_name = "BYTES", default_value_t = papers::limits::FILE_BYTES)]
    max_file_bytes: u64,

    /// Largest record (abstract) indexed, in bytes; longer ones are
    /// skipped with a warning
    #[arg(long, value_name = "BYTES", default_value_t = papers::limits::RECORD_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_record_bytes: u64,

    #[command(flatten)]
    model: ModelArgs,
}

/// Checks one --field argument.
fn parse_field(spec: &str) -> Result<String, String> {
    papers::input::Fields::default().set(spec)?;
    Ok(spec.to_string())
}

/// Set by the first Ctrl-C; the embedding loop stops at the next batch.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Ctrl-C while indexing stops after the current batch, before anything is
/// written; a second Ctrl-C exits at once. Either way the index on disk is
/// the previous one, since a write is a rename of a complete generation.
pub(super) fn handle_ctrl_c() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
}

/// Messages on stderr and a progress bar on a terminal.
struct Terminal<'a> {
    ctx: &'a Context,
    bar: ProgressBar,
}

impl Observer for Terminal<'_> {
    fn note(&self, message: &str) {
        self.bar.suspend(|| self.ctx.note(message));
    }

    fn pipeline(&self, times: &papers::write::Pipeline) {
        if super::VERBOSE.load(Ordering::Relaxed) {
            self.note(&format!(
                "pipeline: first vectors {:.2} s after the start; the encoder ran {:.2} s of the {:.2} s of embedding; the commit ended {:.2} s after the last vectors",
                times.first_vectors.as_secs_f64(),
                times.encoder.as_secs_f64(),
                times.embedding.as_secs_f64(),
                times.after_vectors.as_secs_f64(),
            ));
        }
    }

    fn skipped(&self, skipped: &Skipped) {
        eprintln!(
            "papers: warning: {}: {}; skipped",
            skipped.path.display(),
            skipped.reason
        );
    }

    fn bad_line(&self, bad: &Skipped) {
        if !self.ctx.quiet {
            eprintln!("papers: warning: {}: {}", bad.path.display(), bad.reason);
        }
    }

    fn embedding(&self, records: usize) {
        self.bar.set_length(records as u64);
        self.bar.set_position(0);
    }

    fn embedded(&self, done: usize) -> ControlFlow<()> {
        self.bar.set_position(done as u64);
        if INTERRUPTED.load(Ordering::SeqCst) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

pub fn run(ctx: &Context, args: IndexArgs) -> Result<()> {
    handle_ctrl_c();
    let mut fields = papers::input::Fields::default();
    for spec in &args.fields {
        fields.set(spec).map_err(anyhow::Error::msg)?;
    }
    fields.limits = papers::limits::Limits {
        file_bytes: args.max_file_bytes,
        record_bytes: args.max_record_bytes as usize,
    };
    let given = !args.embeddings.is_empty();
    let request = IndexRequest {
        paths: if given { args.embeddings } else { args.paths },
        rebuild: args.rebuild,
        // Vectors made elsewhere are only spot-checked: a few texts.
        model: if given {
            args.model.choice()
        } else {
            args.model.choice_for(usize::MAX)
        },
        fields,
        embeddings: given,
        no_verify: args.no_verify,
        batch: 0,
    };
    let report = execute(ctx, &request)?;
    if ctx.json {
        ctx.printer().report(&report, &ctx.index_dir)?;
    }
    Ok(())
}

/// Whether Ctrl-C was pressed (see [`handle_ctrl_c`]).
pub(super) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Runs `request` on the context's index with a progress bar, and says
/// what it did on stderr. The caller sets up Ctrl-C ([`handle_ctrl_c`]).
pub(super) fn execute(ctx: &Context, request: &IndexRequest) -> Result<UpdateReport> {
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(
        None,
        if ctx.quiet || !ctx.stderr_is_terminal {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(super::progress::style());
    let observer = Terminal { ctx, bar };
    let dir = &ctx.index_dir;
    let result = write::index(dir, request, &observer);
    observer.bar.finish_and_clear();
    let report = result?;
    ctx.note(&format!(
        "{} read ({}, {} unique), {} skipped: {} added, {} already present{}; \
         {} in {} ({:.1}s)",
        count(report.files, "file"),
        count(report.paragraphs, "record"),
        report.unique,
        report.skipped,
        report.added,
        report.already_present,
        [
            (report.replaced, "replaced by a new version"),
            (
                report.kept_out,
                "kept out (removed earlier; `papers remove --undo ID` brings one back)"
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!(", {n} {what}"))
        .collect::<String>(),
        count(report.records, "record"),
        dir.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(report)
}

/// Says how many records another input also holds, which `--source` keeps.
fn kept(shared: usize) -> String {
    match shared {
        0 => String::new(),
        n => format!(
            "; {} kept: another input holds {} too",
            count(n, "record"),
            if n == 1 { "it" } else { "them" }
        ),
    }
}

/// `papers remove ID...` or `--source FILE...` (and `--dry-run`, `--undo`,
/// `--list`).
pub fn remove(ctx: &Context, mut args: super::query::RemoveArgs) -> Result<()> {
    if !args.list && args.source.is_empty() {
        args.ids = super::piped::ids_or_piped(
            std::mem::take(&mut args.ids),
            "name papers to remove (`papers remove ID...`), pipe a result list into it, \
             or pass --source FILE or --list",
            "remove",
        )?;
    }
    let observer = Terminal {
        ctx,
        bar: ProgressBar::hidden(),
    };
    let dir = &ctx.index_dir;
    let papers = if args.list {
        let index = papers::index::Index::open(dir)?;
        let removals = index.removals()?;
        ctx.note(&format!("{} removed", count(removals.len(), "paper")));
        removals.into_iter().map(|r| r.paper).collect()
    } else if args.dry_run {
        let index = papers::index::Index::open(dir)?;
        let (rows, shared) = if args.source.is_empty() {
            (write::resolve_all(&index, &args.ids)?, 0)
        } else {
            let found = write::from_sources(&index, &args.source)?;
            (found.rows, found.shared)
        };
        let papers = rows
            .iter()
            .map(|&row| index.paper(row))
            .collect::<papers::Result<Vec<_>>>()?;
        ctx.note(&format!(
            "would remove {} (dry run: nothing changed){}",
            count(papers.len(), "record"),
            kept(shared)
        ));
        papers
    } else if args.undo {
        let papers = write::unremove(dir, &args.ids, &observer)?;
        ctx.note(&format!(
            "forgot {}: the next `papers index` of their input brings them back",
            count(papers.len(), "removal")
        ));
        papers
    } else {
        // By id, or what the inputs `--source` names brought.
        let (report, papers, shared) = if args.source.is_empty() {
            let (report, papers) = write::remove(dir, &args.ids, &observer)?;
            (report, papers, 0)
        } else {
            write::remove_sources(dir, &args.source, &observer)?
        };
        ctx.note(&format!(
            "removed {}; {} left{} (they stay out when indexed again; `papers remove --undo ID` \
             forgets a removal)",
            count(report.removed, "record"),
            report.records,
            kept(shared)
        ));
        if ctx.json {
            ctx.printer().report(&report, dir)?;
            return Ok(());
        }
        papers
    };
    ctx.printer().list(|f| papers.into_iter().try_for_each(f))?;
    Ok(())
}

pub fn upgrade(ctx: &Context) -> Result<()> {
    let observer = Terminal {
        ctx,
        bar: ProgressBar::hidden(),
    };
    if write::upgrade(&ctx.index_dir, &observer)? {
        ctx.note(&format!(
            "{}: upgraded to index format {}",
            ctx.index_dir.display(),
            papers::index::FORMAT_VERSION
        ));
    } else {
        ctx.note(&format!(
            "{}: already index format {}",
            ctx.index_dir.display(),
            papers::index::FORMAT_VERSION
        ));
    }
    Ok(())
}
