//! The commands that only need the model: `embed` and `model`.

use anyhow::{Context as _, Result};
use clap::Args;

use papers::embed::{source, DeviceChoice, Embedder, ModelChoice};
use papers::output::ModelInfo;

use super::{Context, DeviceArg, ModelArgs};

/// What `embed --records` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// JSON Lines.
    Jsonl,
    /// Parquet.
    Parquet,
}

/// Arguments of `papers embed`.
#[derive(Debug, Args)]
pub struct EmbedArgs {
    /// Texts to embed; without any, each line of stdin is one text
    #[arg(value_name = "TEXT")]
    texts: Vec<String>,

    /// Read JSON Lines records (the `index` input, --field mappings
    /// included) from the files given, or stdin, and write each back with
    /// its `embedding`: the input of `papers index --embeddings`
    #[arg(long)]
    records: bool,

    /// With --records: where a part of a record is, as NAME=PATH
    #[arg(long = "field", value_name = "NAME=PATH", requires = "records")]
    fields: Vec<String>,

    /// With --records: write JSON Lines (each input record with its
    /// `embedding`) or Parquet (id, title, abstract, authors, categories,
    /// published and `embedding` as a fixed-size list of float32)
    #[arg(long, value_enum, default_value = "jsonl", requires = "records")]
    format: RecordFormat,

    /// Write to this file (replaced whole, only once complete) instead of
    /// stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<std::path::PathBuf>,

    #[command(flatten)]
    model: ModelArgs,
}

/// Up to this many texts, `embed` runs the forward pass that starts
/// soonest; past it, the one that embeds fastest.
const QUERY_TEXTS: usize = 16;

impl ModelArgs {
    /// The library's view of the model flags.
    pub fn choice(&self) -> ModelChoice {
        ModelChoice {
            model: self.model.clone(),
            model_dir: self.model_dir.clone(),
            device: match self.device {
                DeviceArg::Auto => DeviceChoice::Auto,
                DeviceArg::Cpu => DeviceChoice::Cpu,
                DeviceArg::Cuda => DeviceChoice::Cuda,
                DeviceArg::Metal => DeviceChoice::Metal,
            },
            precision: self.precision,
            workload: papers::embed::Workload::Queries,
            announce: super::VERBOSE.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The model flags for a command that will embed `texts` texts: a
    /// few are queries, more are bulk work (see `Workload`).
    pub fn choice_for(&self, texts: usize) -> ModelChoice {
        let workload = if texts > QUERY_TEXTS {
            papers::embed::Workload::Bulk
        } else {
            papers::embed::Workload::Queries
        };
        ModelChoice {
            workload,
            ..self.choice()
        }
    }
}

pub fn embed(ctx: &Context, args: EmbedArgs) -> Result<()> {
    if args.records {
        return embed_records(ctx, args);
    }
    let texts = if args.texts.is_empty() {
        papers::limits::read_lines(
            std::io::stdin().lock(),
            papers::limits::RECORD_BYTES,
            papers::limits::STDIN_BYTES,
            "<stdin>",
        )?
    } else {
        args.texts
    };
    let vectors = embed_all(&args.model, &texts, ctx)?;
    ctx.printer().embeddings(&texts, &vectors)?;
    Ok(())
}

/// `embed --records`: records in, the same records with vectors out. A
/// line that is not a record is warned about and left out.
fn embed_records(ctx: &Context, args: EmbedArgs) -> Result<()> {
    let mut fields = papers::input::Fields::default();
    for spec in &args.fields {
        fields.set(spec).map_err(anyhow::Error::msg)?;
    }
    let mut inputs: Vec<(String, Vec<String>)> = Vec::new();
    // A record line carries its JSON around the abstract: four times the
    // record cap leaves room for long metadata.
    let line_limit = 4 * papers::limits::RECORD_BYTES;
    if args.texts.is_empty() {
        let lines = papers::limits::read_lines(
            std::io::stdin().lock(),
            line_limit,
            papers::limits::STDIN_BYTES,
            "<stdin>",
        )?;
        inputs.push(("<stdin>".into(), lines));
    }
    for path in &args.texts {
        let meta = std::fs::metadata(path).with_context(|| format!("{path}: cannot read"))?;
        if let Some(why) = papers::limits::not_regular(&meta) {
            anyhow::bail!("{path}: {why}");
        }
        let file = std::fs::File::open(path).with_context(|| format!("{path}: cannot read"))?;
        let lines = papers::limits::read_lines(
            std::io::BufReader::new(file),
            line_limit,
            papers::limits::FILE_BYTES,
            path,
        )?;
        inputs.push((path.clone(), lines));
    }
    let (mut records, mut parsed, mut texts) = (Vec::new(), Vec::new(), Vec::new());
    for (name, body) in &inputs {
        for (i, line) in body.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match papers::input::embed_text(line, &fields) {
                Ok((record, paragraph, text)) => {
                    records.push(record);
                    parsed.push(paragraph);
                    texts.push(text);
                }
                Err(reason) => ctx.warn(&format!("{name}: line {}: {reason}", i + 1)),
            }
        }
    }
    let parquet = args.format == RecordFormat::Parquet;
    if parquet && !papers::output::parquet::AVAILABLE {
        anyhow::bail!("--format parquet: {}", papers::output::NO_PARQUET);
    }
    if parquet && args.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!("--format parquet: Parquet is binary; give --output FILE or redirect stdout");
    }
    let vectors = embed_all(&args.model, &texts, ctx)?;
    match (&args.output, parquet) {
        (Some(path), _) => write_atomically(path, |file| {
            if parquet {
                papers::output::parquet::write(file, &parsed, &vectors)
                    .map_err(std::io::Error::other)
            } else {
                papers::output::Printer::new(file, papers::output::Format::Json)
                    .records_with_embeddings(records, &vectors)
            }
        })?,
        (None, true) => papers::output::parquet::write(
            std::io::BufWriter::new(std::io::stdout()),
            &parsed,
            &vectors,
        )
        .context("<stdout>: cannot write Parquet")?,
        (None, false) => ctx.printer().records_with_embeddings(records, &vectors)?,
    }
    Ok(())
}

/// Loads the model `args` name (sized for this many texts) and embeds `texts` with it.
fn embed_all(args: &ModelArgs, texts: &[String], ctx: &Context) -> Result<Vec<Vec<f32>>> {
    let model = args
        .choice_for(texts.len())
        .load(None, &|_| String::new(), &|m| ctx.note(m))?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    Ok(model
        .embedder
        .embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?)
}

pub fn describe(ctx: &Context, args: ModelArgs) -> Result<()> {
    let files = source::resolve(&args.choice().spec(None))?;
    ctx.note(&files.describe());
    let info = ModelInfo {
        weights_sha256: files.weights_sha256()?,
        files,
    };
    ctx.printer().model(&info)?;
    Ok(())
}

/// Writes `path` through `write`: into a temporary file beside it, renamed
/// over `path` only when complete, so a failed or stopped run leaves
/// what was there.
fn write_atomically(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let name = path
        .file_name()
        .with_context(|| format!("{}: --output is not a file name", path.display()))?;
    let temporary = path.with_file_name(format!(
        ".{}.{}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&temporary)?;
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(e).with_context(|| format!("{}: cannot write", path.display()));
    }
    Ok(())
}
