//! The encoder's forward pass for a few short texts on the CPU, computed
//! straight from the memory-mapped weights file.
//!
//! A query is a dozen word pieces: running it through [`super::encoder`]
//! first copies 45 MB of weights into candle tensors, and that copy with
//! its page faults took most of a cold `papers search`. Here the weights
//! are read in place (the operating system pages them in from its cache),
//! one sequence at a time, so there is no padding and no mask. The
//! arithmetic is the encoder's: the same layer order, the same erf GELU and
//! softmax ([`super::gelu`], [`super::softmax`]), gemm for every product.
//! Results agree with the batched encoder to float rounding (a test checks).

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use candle_core::Result;
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};

use super::encoder::EncoderConfig;
use super::gelu::bias_gelu_rows;
use super::softmax::softmax_in_place;

/// A BERT encoder whose weights stay in the mapped safetensors file.
pub struct MappedEncoder {
    map: memmap2::Mmap,
    /// Byte ranges in `map` of the f32 weights, by name without `bert.`.
    tensors: HashMap<String, Range<usize>>,
    config: EncoderConfig,
}

impl MappedEncoder {
    /// Maps `weights` and checks that every weight the forward pass reads
    /// is there as f32 of the right size, aligned so that it can be read in
    /// place. `Ok(None)` when it is not (another dtype, an odd layout): the
    /// caller then uses the copying encoder, which reports what is wrong.
    pub fn open(weights: &Path, config: &EncoderConfig) -> std::io::Result<Option<MappedEncoder>> {
        let file = std::fs::File::open(weights)?;
        // SAFETY: the file is mapped read-only; papers never writes model
        // files, and the slices handed out borrow from the mapping.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MappedEncoder::from_map(map, config))
    }

    fn from_map(map: memmap2::Mmap, config: &EncoderConfig) -> Option<MappedEncoder> {
        if config.hidden_act != "gelu"
            || config.position_embedding_type != "absolute"
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
            || cfg!(target_endian = "big")
        {
            return None;
        }
        let (header, metadata) = SafeTensors::read_metadata(&map).ok()?;
        let data_start = 8 + header;
        let tensors: HashMap<String, Range<usize>> = metadata
            .tensors()
            .into_iter()
            .filter(|(_, info)| info.dtype == Dtype::F32)
            .map(|(name, info)| {
                let (from, to) = info.data_offsets;
                let name = name.strip_prefix("bert.").unwrap_or(&name).to_string();
                (name, data_start + from..data_start + to)
            })
            .collect();
        let encoder = MappedEncoder {
            map,
            tensors,
            config: config.clone(),
        };
        let (h, inner) = (config.hidden_size, config.intermediate_size);
        let mut expected = vec![
            (
                "embeddings.word_embeddings.weight".to_string(),
                config.vocab_size * h,
            ),
            (
                "embeddings.position_embeddings.weight".to_string(),
                config.max_position_embeddings * h,
            ),
            (
                "embeddings.token_type_embeddings.weight".to_string(),
                config.type_vocab_size * h,
            ),
            ("embeddings.LayerNorm.weight".to_string(), h),
            ("embeddings.LayerNorm.bias".to_string(), h),
        ];
        for i in 0..config.num_hidden_layers {
            for (name, size) in layer_tensors(h, inner) {
                expected.push((format!("encoder.layer.{i}.{name}"), size));
            }
        }
        if !expected
            .iter()
            .all(|(name, size)| encoder.tensor(name).is_ok_and(|t| t.len() == *size))
        {
            return None;
        }
        Some(encoder)
    }

    /// The weight `name` (without the `bert.` prefix) as f32 values.
    fn tensor(&self, name: &str) -> Result<&[f32]> {
        let bytes = self
            .tensors
            .get(name)
            .and_then(|range| self.map.get(range.clone()))
            .ok_or_else(|| candle_core::Error::Msg(format!("no f32 weight {name}")))?;
        bytemuck::try_cast_slice(bytes).map_err(|e| candle_core::Error::Msg(format!("{name}: {e}")))
    }

    /// Hidden states (tokens × hidden, row-major) for one sequence of
    /// token ids, [CLS] and [SEP] included.
    pub fn forward(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let c = &self.config;
        let (h, t) = (c.hidden_size, ids.len());
        if t == 0 || t > c.max_position_embeddings {
            candle_core::bail!("{t} tokens for {} positions", c.max_position_embeddings);
        }
        let words = self.tensor("embeddings.word_embeddings.weight")?;
        let positions = self.tensor("embeddings.position_embeddings.weight")?;
        // Every token is of type 0, as sentence-transformers passes it.
        let token_type = &self.tensor("embeddings.token_type_embeddings.weight")?[..h];
        let mut x = vec![0f32; t * h];
        for (pos, (row, &id)) in x.chunks_exact_mut(h).zip(ids).enumerate() {
            let id = id as usize;
            if id >= c.vocab_size {
                candle_core::bail!("token id {id} outside the vocabulary of {}", c.vocab_size);
            }
            let word = &words[id * h..(id + 1) * h];
            let position = &positions[pos * h..(pos + 1) * h];
            for (((o, &w), &p), &ty) in row.iter_mut().zip(word).zip(position).zip(token_type) {
                *o = w + p + ty;
            }
        }
        self.layer_norm(&mut x, "embeddings.LayerNorm")?;
        for layer in 0..c.num_hidden_layers {
            self.layer(&mut x, t, &format!("encoder.layer.{layer}."))?;
        }
        Ok(x)
    }

    /// One transformer layer over `x` (t × hidden), in place.
    fn layer(&self, x: &mut [f32], t: usize, at: &str) -> Result<()> {
        let c = &self.config;
        let (h, heads) = (c.hidden_size, c.num_attention_heads);
        let head = h / heads;
        let w = |name: &str| self.tensor(&format!("{at}{name}"));
        let dense = |input: &[f32], name: &str| -> Result<Vec<f32>> {
            linear(
                input,
                w(&format!("{name}.weight"))?,
                w(&format!("{name}.bias"))?,
            )
        };

        // The query scaled after its bias, before QKᵀ, as the encoder does.
        let mut q = dense(x, "attention.self.query")?;
        let scale = 1.0 / (head as f32).sqrt();
        q.iter_mut().for_each(|v| *v *= scale);
        let k = dense(x, "attention.self.key")?;
        let v = dense(x, "attention.self.value")?;
        let mut context = vec![0f32; t * h];
        let mut scores = vec![0f32; t * t];
        for hd in 0..heads {
            let cols = hd * head..(hd + 1) * head;
            let (qh, kh, vh) = (
                Matrix::new(&q, t, h).column_range(cols.clone()),
                Matrix::new(&k, t, h).column_range(cols.clone()),
                Matrix::new(&v, t, h).column_range(cols.clone()),
            );
            matmul(&mut scores, t, qh, kh.transposed());
            scores.chunks_exact_mut(t).for_each(softmax_in_place);
            let mut out = vec![0f32; t * head];
            matmul(&mut out, head, Matrix::new(&scores, t, t), vh);
            for (ctx, o) in context.chunks_exact_mut(h).zip(out.chunks_exact(head)) {
                ctx[cols.clone()].copy_from_slice(o);
            }
        }
        let attended = dense(&context, "attention.output.dense")?;
        x.iter_mut().zip(&attended).for_each(|(x, a)| *x += a);
        self.layer_norm(x, &format!("{at}attention.output.LayerNorm"))?;

        let bias = w("intermediate.dense.bias")?;
        let mut inner = product(x, w("intermediate.dense.weight")?, bias.len())?;
        bias_gelu_rows(&mut inner, bias);
        let out = dense(&inner, "output.dense")?;
        x.iter_mut().zip(&out).for_each(|(x, o)| *x += o);
        self.layer_norm(x, &format!("{at}output.LayerNorm"))
    }

    /// Layer norm over each row of `x`, in place, with the weight and bias
    /// under `name` (mean and biased variance in f32, as candle computes).
    fn layer_norm(&self, x: &mut [f32], name: &str) -> Result<()> {
        let gamma = self.tensor(&format!("{name}.weight"))?;
        let beta = self.tensor(&format!("{name}.bias"))?;
        let eps = self.config.layer_norm_eps as f32;
        let n = gamma.len() as f32;
        for row in x.chunks_exact_mut(gamma.len()) {
            let mean = row.iter().sum::<f32>() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, &g), &b) in row.iter_mut().zip(gamma).zip(beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
        Ok(())
    }

    /// Hidden states for several sequences, side by side.
    pub fn forward_all(&self, sequences: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        sequences.par_iter().map(|ids| self.forward(ids)).collect()
    }
}

/// The names and sizes of one layer's weights.
fn layer_tensors(h: usize, inner: usize) -> [(&'static str, usize); 16] {
    [
        ("attention.self.query.weight", h * h),
        ("attention.self.query.bias", h),
        ("attention.self.key.weight", h * h),
        ("attention.self.key.bias", h),
        ("attention.self.value.weight", h * h),
        ("attention.self.value.bias", h),
        ("attention.output.dense.weight", h * h),
        ("attention.output.dense.bias", h),
        ("attention.output.LayerNorm.weight", h),
        ("attention.output.LayerNorm.bias", h),
        ("intermediate.dense.weight", inner * h),
        ("intermediate.dense.bias", inner),
        ("output.dense.weight", h * inner),
        ("output.dense.bias", h),
        ("output.LayerNorm.weight", h),
        ("output.LayerNorm.bias", h),
    ]
}

/// `input · weightᵀ + bias` for row-major `input` (rows × in) and a
/// PyTorch `weight` (out × in).
fn linear(input: &[f32], weight: &[f32], bias: &[f32]) -> Result<Vec<f32>> {
    let mut out = product(input, weight, bias.len())?;
    for row in out.chunks_exact_mut(bias.len()) {
        row.iter_mut().zip(bias).for_each(|(o, b)| *o += b);
    }
    Ok(out)
}

/// `input · weightᵀ` for row-major `input` (rows × in) and a PyTorch
/// `weight` (outputs × in).
fn product(input: &[f32], weight: &[f32], outputs: usize) -> Result<Vec<f32>> {
    if outputs == 0 || !weight.len().is_multiple_of(outputs) {
        candle_core::bail!("weight of {} for {outputs} outputs", weight.len());
    }
    let inputs = weight.len() / outputs;
    if inputs == 0 || !input.len().is_multiple_of(inputs) {
        candle_core::bail!("input of {} for {inputs} features", input.len());
    }
    let rows = input.len() / inputs;
    let mut out = vec![0f32; rows * outputs];
    matmul(
        &mut out,
        outputs,
        Matrix::new(input, rows, inputs),
        Matrix::new(weight, outputs, inputs).transposed(),
    );
    Ok(out)
}

/// A strided view of a matrix inside a slice: element (r, c) is at
/// `r * row_stride + c * col_stride`.
#[derive(Clone, Copy)]
struct Matrix<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// A row-major `rows × cols` matrix.
    fn new(data: &'a [f32], rows: usize, cols: usize) -> Matrix<'a> {
        Matrix {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// Columns `range` of this view.
    fn column_range(self, range: std::ops::Range<usize>) -> Matrix<'a> {
        Matrix {
            data: &self.data[(range.start * self.col_stride).min(self.data.len())..],
            cols: range.len(),
            ..self
        }
    }

    fn transposed(self) -> Matrix<'a> {
        Matrix {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element the view names lies inside its slice.
    fn in_bounds(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride
                < self.data.len()
    }
}

/// Products of at least this many multiply-adds are split by columns
/// over the rayon pool; smaller ones stay on the calling thread.
const SPLIT_WORK: usize = 1 << 20;

/// `dst = lhs · rhs`, `dst` row-major with `width` columns, by gemm.
///
/// Big products are split into column blocks, one per thread: for a query
/// the time goes to reading the weights, and each thread then reads its
/// share. gemm computes into a column-major buffer that is then transposed: for
/// a row-major destination it would swap the operands and repack the
/// whole weight matrix on every call, which for a query of a few tokens
/// costs more than the products themselves; this way it reads the weights
/// where they lie.
fn matmul(dst: &mut [f32], width: usize, lhs: Matrix, rhs: Matrix) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert!(
        rhs.rows == k && width == n && dst.len() == m * n && lhs.in_bounds() && rhs.in_bounds(),
        "matmul shapes: {m}x{k} by {}x{n} into {} values",
        rhs.rows,
        dst.len()
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        dst.fill(0.0);
        return;
    }
    let mut columns = vec![0f32; m * n];
    let blocks = if m * n * k >= SPLIT_WORK {
        rayon::current_num_threads().clamp(1, n)
    } else {
        1
    };
    let block = n.div_ceil(blocks);
    // Column-major, so each block of columns is one contiguous chunk.
    columns
        .par_chunks_mut(block * m)
        .enumerate()
        .for_each(|(b, chunk)| {
            let first = b * block;
            let rhs = rhs.column_range(first..first + chunk.len() / m);
            gemm_columns(chunk, lhs, rhs);
        });
    for (c, column) in columns.chunks_exact(m).enumerate() {
        for (r, &value) in column.iter().enumerate() {
            dst[r * n + c] = value;
        }
    }
}

/// `dst = lhs · rhs` with `dst` column-major (column stride `lhs.rows`).
fn gemm_columns(dst: &mut [f32], lhs: Matrix, rhs: Matrix) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert!(rhs.rows == k && dst.len() == m * n && lhs.in_bounds() && rhs.in_bounds());
    // SAFETY: the assertion bounds every element gemm reads through `lhs`
    // and `rhs` (their views are in bounds) and the m·n values it writes
    // to `dst` (column stride m, row stride 1), a unique borrow; with
    // `read_dst` false the old contents are not read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            m as isize,
            1,
            false,
            lhs.data.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.data.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(lhs: Matrix, rhs: Matrix) -> Vec<f32> {
        let mut out = Vec::new();
        for r in 0..lhs.rows {
            for c in 0..rhs.cols {
                let mut sum = 0f32;
                for i in 0..lhs.cols {
                    sum += lhs.data[r * lhs.row_stride + i * lhs.col_stride]
                        * rhs.data[i * rhs.row_stride + c * rhs.col_stride];
                }
                out.push(sum);
            }
        }
        out
    }

    #[test]
    fn strided_matmul_matches_the_definition() {
        let a: Vec<f32> = (0..7 * 12)
            .map(|i| ((i * 37) % 23) as f32 / 7.0 - 1.5)
            .collect();
        let b: Vec<f32> = (0..5 * 12)
            .map(|i| ((i * 11) % 17) as f32 / 5.0 - 1.0)
            .collect();
        // Columns 4..9 of a 7x12 matrix times the transpose of columns 4..9 of a 5x12 one.
        let lhs = Matrix::new(&a, 7, 12).column_range(4..9);
        let rhs = Matrix::new(&b, 5, 12).column_range(4..9).transposed();
        let mut out = vec![f32::NAN; 7 * 5];
        matmul(&mut out, 5, lhs, rhs);
        for (got, want) in out.iter().zip(naive(lhs, rhs)) {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
    }

    #[test]
    #[should_panic(expected = "matmul shapes")]
    fn out_of_bounds_views_are_refused() {
        let a = vec![1f32; 10];
        let lhs = Matrix::new(&a, 3, 4).column_range(2..4); // row 2 would end at index 11
        let mut out = vec![0f32; 3 * 3];
        matmul(&mut out, 3, lhs, Matrix::new(&a[..6], 2, 3));
    }
}
