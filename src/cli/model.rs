//! The commands that only need the model: `embed` and `model`.

use anyhow::{Context as _, Result};
use clap::Args;

use papers::embed::{source, DeviceChoice, Embedder, ModelChoice};
use papers::output::ModelInfo;

use super::{Context, DeviceArg, ModelArgs};

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

    #[command(flatten)]
    model: ModelArgs,
}

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
            announce: super::VERBOSE.load(std::sync::atomic::Ordering::Relaxed),
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
    let model = args
        .model
        .choice()
        .load(None, &|_| String::new(), &|m| ctx.note(m))?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model
        .embedder
        .embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?;
    ctx.printer().embeddings(&texts, &vectors)?;
    Ok(())
}

/// `embed --records`: records in, the same records with vectors out. A
/// line that is not a record is warned about and left out.
fn embed_records(ctx: &Context, args: EmbedArgs) -> Result<()> {
    let mut fields = papers::records::Fields::default();
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
    let (mut records, mut texts) = (Vec::new(), Vec::new());
    for (name, body) in &inputs {
        for (i, line) in body.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match papers::records::embed_text(line, &fields) {
                Ok((record, text)) => {
                    records.push(record);
                    texts.push(text);
                }
                Err(reason) => ctx.warn(&format!("{name}: line {}: {reason}", i + 1)),
            }
        }
    }
    let model = args
        .model
        .choice()
        .load(None, &|_| String::new(), &|m| ctx.note(m))?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model
        .embedder
        .embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?;
    ctx.printer().records_with_embeddings(records, &vectors)?;
    Ok(())
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
