//! The BERT encoder's forward pass, written here on candle ops for speed
//! while computing exactly what Hugging Face's `BertModel` does (and what
//! candle-transformers' BERT does; a test compares the two):
//!
//! - query, key and value projections fused into one matmul;
//! - on the CPU in f32: attention fused per sequence and head
//!   (`super::attention`, padding skipped), dense products straight to
//!   gemm (`super::dense`), the bias, residual and layer norm in one pass
//!   (`super::residual`; the embeddings' sums and norm too), bias and
//!   exact GELU in one pass
//!   (`super::gelu`); where the CPU has a matrix unit, the dense
//!   products may run there in bf16 instead ([`Encoder::pack_bf16`]);
//! - on GPUs and in half precision the same arithmetic in candle's ops:
//!   the query scaled by 1/sqrt(head size) before QKᵀ, an additive mask
//!   and `softmax_last_dim` (`super::softmax`), candle-nn's `layer_norm`;
//! - linear layers as one 2-D matmul over every token of the batch;
//! - exact (erf) GELU, as the model was trained with (the tanh
//!   approximation breaks parity with sentence-transformers).

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{Module, Result, Tensor};
use candle_nn::{LayerNorm, VarBuilder};

use super::attention::{attention_on_tiles, fused_attention};
use super::dense::{fast, Dense};
use super::gelu::bias_gelu;
use super::product::cpu_values;
use super::residual::AddNorm;
use super::softmax::masked_softmax;

/// The config fields the encoder needs, from config.json.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct EncoderConfig {
    /// Word pieces in the vocabulary.
    pub vocab_size: usize,
    /// Token types (segments).
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// Transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads per layer.
    pub num_attention_heads: usize,
    /// Width of the feed-forward layer.
    pub intermediate_size: usize,
    /// Size of the position table.
    pub max_position_embeddings: usize,
    /// Layer norm epsilon.
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    /// Activation; only exact GELU is supported.
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// "absolute" is the only one supported.
    #[serde(default = "default_position")]
    pub position_embedding_type: String,
}

fn default_type_vocab() -> usize {
    2
}

fn default_eps() -> f64 {
    1e-12
}

fn default_act() -> String {
    "gelu".into()
}

fn default_position() -> String {
    "absolute".into()
}

fn layer_norm(vb: VarBuilder, size: usize, eps: f64) -> Result<LayerNorm> {
    Ok(LayerNorm::new(
        vb.get(size, "weight")?,
        vb.get(size, "bias")?,
        eps,
    ))
}

struct Layer {
    qkv: Dense,
    /// The attention output's product, then its bias, the residual and
    /// layer norm in one step.
    attention_out: Dense,
    attention_close: AddNorm,
    intermediate: Dense,
    /// The same for the feed-forward output.
    output: Dense,
    output_close: AddNorm,
}

/// The word-piece embedding table: half of MiniLM's weights. On the CPU it
/// stays in the memory-mapped weights file and only the rows a batch needs
/// are read, so a one-query process neither copies nor pages in the rest.
enum WordTable {
    Loaded(Tensor),
    Mapped {
        file: MmapedSafetensors,
        name: String,
        rows: usize,
        cols: usize,
    },
}

impl WordTable {
    fn lookup(&self, ids: &Tensor) -> Result<Tensor> {
        match self {
            // Candle's index_select copies one value at a time; a row at a
            // time here.
            WordTable::Loaded(table) if fast(table) => {
                let (rows, cols) = table.dims2()?;
                let (storage, layout) = table.storage_and_layout();
                let data = cpu_values(&storage, layout, "word embeddings")?;
                gather(ids, rows, cols, |id, out| {
                    out.extend_from_slice(&data[id * cols..(id + 1) * cols])
                })
            }
            WordTable::Loaded(table) => table.index_select(ids, 0),
            WordTable::Mapped {
                file,
                name,
                rows,
                cols,
            } => {
                let view = file.get(name)?;
                let data = view.data();
                gather(ids, *rows, *cols, |id, out| {
                    let row = &data[id * cols * 4..(id + 1) * cols * 4];
                    out.extend(
                        row.chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    );
                })
            }
        }
    }
}

/// The rows of a `rows` × `cols` table for `ids`, each appended by `row`,
/// as a (ids, cols) tensor; an id outside the table is an error.
fn gather(
    ids: &Tensor,
    rows: usize,
    cols: usize,
    mut row: impl FnMut(usize, &mut Vec<f32>),
) -> Result<Tensor> {
    let ids = ids.to_vec1::<u32>()?;
    let mut out = Vec::with_capacity(ids.len() * cols);
    for &id in &ids {
        let id = id as usize;
        if id >= rows {
            candle_core::bail!("token id {id} outside the vocabulary of {rows}");
        }
        row(id, &mut out);
    }
    Tensor::from_vec(out, (ids.len(), cols), &candle_core::Device::Cpu)
}

/// A BERT encoder without pooler.
pub struct Encoder {
    word_embeddings: WordTable,
    position_embeddings: Tensor,
    token_type_embedding: Tensor,
    embedding_norm: LayerNorm,
    /// The same sum and norm as one pass per row on the CPU in f32: the
    /// token type as the bias, the positions as the residual.
    embedding_close: AddNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_size: usize,
    hidden: usize,
    /// Whether attention runs on the matrix unit (after [`Encoder::pack_bf16`]).
    attention_on_tiles: bool,
}

impl Encoder {
    /// Loads the weights under `vb`, with or without a `bert.` prefix.
    pub fn load(vb: VarBuilder, config: &EncoderConfig) -> Result<Encoder> {
        Encoder::load_with(vb, config, None)
    }

    /// Like [`Encoder::load`] on the CPU, but reads word embeddings straight
    /// from the mapped weights `file` instead of copying the whole table.
    pub fn load_mapped(
        vb: VarBuilder,
        config: &EncoderConfig,
        file: MmapedSafetensors,
    ) -> Result<Encoder> {
        let name = [
            "embeddings.word_embeddings.weight",
            "bert.embeddings.word_embeddings.weight",
        ]
        .into_iter()
        .find(|n| file.get(n).is_ok())
        .ok_or_else(|| candle_core::Error::Msg("no word_embeddings.weight".into()))?;
        let view = file.get(name)?;
        if view.dtype() != safetensors::Dtype::F32
            || view.shape() != [config.vocab_size, config.hidden_size]
        {
            // Anything unusual is loaded (and converted) whole.
            let table = file
                .load(name, &candle_core::Device::Cpu)?
                .to_dtype(candle_core::DType::F32)?;
            return Encoder::load_with(vb, config, Some(WordTable::Loaded(table)));
        }
        let table = WordTable::Mapped {
            name: name.to_string(),
            rows: config.vocab_size,
            cols: config.hidden_size,
            file,
        };
        Encoder::load_with(vb, config, Some(table))
    }

    fn load_with(
        vb: VarBuilder,
        config: &EncoderConfig,
        table: Option<WordTable>,
    ) -> Result<Encoder> {
        if config.hidden_act != "gelu" {
            candle_core::bail!(
                "unsupported hidden_act {:?} (only exact gelu)",
                config.hidden_act
            );
        }
        if config.position_embedding_type != "absolute" {
            candle_core::bail!(
                "unsupported position_embedding_type {:?}",
                config.position_embedding_type
            );
        }
        let vb = if vb.contains_tensor("embeddings.position_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = config.hidden_size;
        let eps = config.layer_norm_eps;
        let emb = vb.pp("embeddings");
        let word_embeddings = match table {
            Some(table) => table,
            None => WordTable::Loaded(emb.get((config.vocab_size, h), "word_embeddings.weight")?),
        };
        let position_embeddings = emb.get(
            (config.max_position_embeddings, h),
            "position_embeddings.weight",
        )?;
        let token_types = emb.get((config.type_vocab_size, h), "token_type_embeddings.weight")?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let attention_out = Dense::load(a.pp("output.dense"), h, h)?;
            let output = Dense::load(l.pp("output.dense"), config.intermediate_size, h)?;
            layers.push(Layer {
                qkv: Dense::load_fused(
                    &[a.pp("self.query"), a.pp("self.key"), a.pp("self.value")],
                    h,
                    h,
                )?,
                attention_close: AddNorm::new(
                    attention_out.bias().clone(),
                    layer_norm(a.pp("output.LayerNorm"), h, eps)?,
                    eps,
                )?,
                intermediate: Dense::load(l.pp("intermediate.dense"), h, config.intermediate_size)?,
                output_close: AddNorm::new(
                    output.bias().clone(),
                    layer_norm(l.pp("output.LayerNorm"), h, eps)?,
                    eps,
                )?,
                attention_out,
                output,
            });
        }
        if !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
        {
            candle_core::bail!("hidden_size is not a multiple of num_attention_heads");
        }
        // Every token is of type 0, as sentence-transformers passes it.
        let token_type_embedding = token_types.narrow(0, 0, 1)?;
        let embedding_norm = layer_norm(emb.pp("LayerNorm"), h, eps)?;
        Ok(Encoder {
            word_embeddings,
            position_embeddings,
            embedding_close: AddNorm::new(
                token_type_embedding.reshape(h)?,
                embedding_norm.clone(),
                eps,
            )?,
            token_type_embedding,
            embedding_norm,
            layers,
            heads: config.num_attention_heads,
            head_size: config.hidden_size / config.num_attention_heads,
            hidden: h,
            attention_on_tiles: false,
        })
    }

    /// Runs every dense product of the layers, and attention's two
    /// products, in bf16 on the CPU's matrix unit from now on
    /// ([`super::amx`]); softmax, GELU and layer norm stay in f32. Only for
    /// an encoder loaded on the CPU in f32.
    pub fn pack_bf16(&mut self) -> Result<()> {
        for layer in &mut self.layers {
            for dense in [
                &mut layer.qkv,
                &mut layer.attention_out,
                &mut layer.intermediate,
                &mut layer.output,
            ] {
                dense.pack_bf16()?;
            }
        }
        self.attention_on_tiles = self.head_size.is_multiple_of(32);
        Ok(())
    }

    /// Hidden states (batch, length, hidden) for token ids (batch, length)
    /// and an attention mask of 1s and 0s (batch, length).
    /// `lengths` are the numbers of real tokens per sequence (the mask's row sums).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor, lengths: &[usize]) -> Result<Tensor> {
        let (batch, length) = ids.dims2()?;
        let tokens = batch * length;
        let h = self.hidden;

        let words = self.word_embeddings.lookup(&ids.flatten_all()?)?;
        let positions = self.position_embeddings.narrow(0, 0, length)?;
        // On the CPU in f32, attention runs fused per sequence and head,
        // and the embeddings' sums and norm run in one pass per row (the
        // positions repeated for each sequence as the residual).
        let fused = fast(&words);
        let mut x = if fused {
            let positions = positions.contiguous()?.flatten_all()?.to_vec1::<f32>()?;
            let repeated = positions.repeat(batch);
            let residual = Tensor::from_vec(repeated, (tokens, h), words.device())?;
            self.embedding_close.forward(words, &residual)?
        } else {
            let x = words
                .reshape((batch, length, h))?
                .broadcast_add(&positions)?
                .broadcast_add(&self.token_type_embedding)?;
            self.embedding_norm.forward(&x)?.reshape((tokens, h))?
        };

        let scale = 1.0 / (self.head_size as f64).sqrt();
        for layer in &self.layers {
            let (heads, head_size) = (self.heads, self.head_size);
            let (qkv, out) = (&layer.qkv, &layer.attention_out);
            let tiled = match self.attention_on_tiles {
                true => attention_on_tiles(qkv, out, &x, lengths, length, heads, head_size)?,
                false => None,
            };
            let projected = if let Some(projected) = tiled {
                projected
            } else if fused {
                let qkv = qkv.forward(&x)?;
                out.product(&fused_attention(&qkv, lengths, length, heads, head_size)?)?
            } else {
                let qkv = qkv
                    .forward(&x)?
                    .reshape((batch, length, 3, self.heads, self.head_size))?
                    .permute((2, 0, 3, 1, 4))?;
                let q = (qkv.get(0)? * scale)?.contiguous()?;
                let k = qkv.get(1)?.contiguous()?;
                let v = qkv.get(2)?.contiguous()?;
                let probs = masked_softmax(&q.matmul(&k.t()?)?, mask)?;
                let context = probs
                    .matmul(&v)?
                    .transpose(1, 2)?
                    .contiguous()?
                    .reshape((tokens, h))?;
                out.product(&context)?
            };
            x = layer.attention_close.forward(projected, &x)?;
            let down = match Dense::feed_forward(&layer.intermediate, &layer.output, &x)? {
                Some(down) => down,
                None => {
                    let up = layer.intermediate.product(&x)?;
                    layer
                        .output
                        .product(&bias_gelu(up, layer.intermediate.bias())?)?
                }
            };
            x = layer.output_close.forward(down, &x)?;
        }
        x.reshape((batch, length, h))
    }
}
