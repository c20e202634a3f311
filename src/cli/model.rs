//! The commands that only need the model: `embed` and `model`.

use std::io::BufRead;

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
        }
    }
}

pub fn embed(ctx: &Context, args: EmbedArgs) -> Result<()> {
    let texts = if args.texts.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .collect::<std::io::Result<Vec<_>>>()
            .context("reading texts from stdin")?
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
