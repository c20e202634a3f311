//! Model resolution and loading for the commands that embed text, plus the
//! `embed` and `model` commands themselves.

use std::io::{BufRead, Write};

use anyhow::{Context as _, Result};
use clap::Args;

use papers::embed::{
    device, source, BertEmbedder, DeviceChoice, Embedder, ModelFiles, ModelSpec, DEFAULT_MODEL,
};

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
    /// The model to use: --model, else the index's model, else the default.
    fn spec(&self, index_model: Option<&str>) -> ModelSpec {
        ModelSpec {
            model: self
                .model
                .clone()
                .or_else(|| index_model.map(str::to_string))
                .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            model_dir: self.model_dir.clone(),
        }
    }

    fn device(&self) -> DeviceChoice {
        match self.device {
            DeviceArg::Auto => DeviceChoice::Auto,
            DeviceArg::Cpu => DeviceChoice::Cpu,
            DeviceArg::Cuda => DeviceChoice::Cuda,
            DeviceArg::Metal => DeviceChoice::Metal,
        }
    }
}

/// Finds the model's files and says on stderr where they came from.
pub fn resolve(ctx: &Context, args: &ModelArgs, index_model: Option<&str>) -> Result<ModelFiles> {
    let files = source::resolve(&args.spec(index_model))?;
    ctx.note(&files.describe());
    Ok(files)
}

/// Loads the model in `files` on the device asked for.
pub fn load(args: &ModelArgs, files: &ModelFiles) -> Result<BertEmbedder> {
    let device = device::select(args.device())?;
    Ok(BertEmbedder::load(files, &device)?)
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
    let files = resolve(ctx, &args.model, None)?;
    let model = load(&args.model, &files)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model.embed(&refs, &mut |_| std::ops::ControlFlow::Continue(()))?;
    ctx.printer().embeddings(&texts, &vectors)?;
    Ok(())
}

pub fn describe(ctx: &Context, args: ModelArgs) -> Result<()> {
    let files = resolve(ctx, &args, None)?;
    let digest = files.weights_sha256()?;
    if ctx.json {
        let value = serde_json::json!({
            "model": files.model,
            "dir": files.dir,
            "weights": files.weights,
            "weights_sha256": digest,
        });
        writeln!(std::io::stdout(), "{value}")?;
    } else {
        writeln!(std::io::stdout(), "{}", files.dir.display())?;
    }
    Ok(())
}
