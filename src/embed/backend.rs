//! The forward pass behind one trait. A [`Backend`] turns batches of
//! word-piece ids into pooled, normalised vectors; which one runs is
//! decided once, when the model loads, from the device, the precision and
//! what the process is for ([`Workload`]), and it says what it is
//! ([`Backend::describe`], printed with `-v`). Nothing switches per call.
//!
//! - [`super::mapped::MappedBackend`]: the CPU, f32, weights read in place
//!   from the mapped file. Starts at once; for queries.
//! - [`super::batched::BatchedBackend`]: candle's batched encoder on the
//!   CPU, a CUDA GPU or Metal, in f32 or half precision (f16, bf16; on
//!   the CPU, bf16 runs the matrix products on AMX tiles). Copies the
//!   weights once; for bulk work, and every GPU.

use std::str::FromStr;

use crate::error::Result;

/// What a process will embed: the CPU's best forward pass differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// A few short texts (a search, a server's queries): no weights copied.
    #[default]
    Queries,
    /// Many texts (`index`, `embed`): batched, padded by length buckets.
    Bulk,
}

/// The float type of the encoder's weights and products.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// Single precision: sentence-transformers' vectors to float rounding.
    #[default]
    F32,
    /// Half precision (tensor cores on a GPU); pooling stays in f32.
    F16,
    /// bfloat16, as F16 with a wider range and fewer mantissa bits.
    Bf16,
}

impl Precision {
    /// The candle dtype of this precision.
    pub fn dtype(self) -> candle_core::DType {
        match self {
            Precision::F32 => candle_core::DType::F32,
            Precision::F16 => candle_core::DType::F16,
            Precision::Bf16 => candle_core::DType::BF16,
        }
    }

    /// Its name on the command line and in `-v` lines.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::Bf16 => "bf16",
        }
    }
}

impl Precision {
    /// The precision when none is asked for: bulk work on a CPU with a
    /// matrix unit runs its matrix products in bf16 there (its vectors
    /// rank as the f32 ones do: see the performance document); everything
    /// else, queries included, runs in f32.
    pub fn default_for(device: &candle_core::Device, workload: Workload) -> Precision {
        if device.is_cpu() && workload == Workload::Bulk && super::amx::available() {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }
}

impl FromStr for Precision {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Precision, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "f16" => Ok(Precision::F16),
            "bf16" => Ok(Precision::Bf16),
            other => Err(format!("unknown precision `{other}` (f32, f16, bf16)")),
        }
    }
}

/// How a backend wants a call's sequences grouped: sequences are sorted by
/// length (longest first) and cut into batches of at most `tokens` padded
/// word pieces and `max_batch` sequences; `streams` batches run side by
/// side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Padded word pieces per batch.
    pub tokens: usize,
    /// Sequences per batch, whatever their length.
    pub max_batch: usize,
    /// Batches in flight at once (CPU workers; 1 on a GPU).
    pub streams: usize,
    /// Records per group of a bulk run: tokenised ahead, sorted by length
    /// together, and kept whole by a stop. A GPU wants many (a group is
    /// well under a second there); a CPU takes seconds per hundred.
    pub records: usize,
}

/// Records per group on the CPU: a few seconds of work, what Ctrl-C
/// loses at most.
pub const CPU_RECORDS: usize = 256;

impl Plan {
    /// Batches over `lengths` as ranges of the returned order (indices of
    /// `lengths`, longest first), so that padding within a batch is small
    /// and batches grow as sequences get shorter.
    pub fn batches(&self, lengths: &[usize]) -> (Vec<usize>, Vec<std::ops::Range<usize>>) {
        let mut order: Vec<usize> = (0..lengths.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(lengths[i]));
        let mut batches = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let width = lengths[order[start]].max(1);
            let size = (self.tokens / width).clamp(1, self.max_batch.max(1));
            let end = (start + size).min(order.len());
            batches.push(start..end);
            start = end;
        }
        (order, batches)
    }
}

/// A forward pass: word-piece ids in, sentence vectors out.
pub trait Backend: Send + Sync {
    /// What runs, for `-v`: device, forward pass and precision.
    fn describe(&self) -> String;

    /// How calls should be batched.
    fn plan(&self) -> Plan;

    /// Unit-length sentence vectors of one batch of sequences (special
    /// tokens included, none longer than the model allows), in order.
    fn embed_batch(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_sort_by_length_and_keep_to_the_budget() {
        let plan = Plan {
            tokens: 100,
            max_batch: 4,
            streams: 1,
            records: 1,
        };
        let lengths = [10, 60, 5, 30, 30, 7, 9, 8];
        let (order, batches) = plan.batches(&lengths);
        assert_eq!(order[0], 1, "longest first");
        let mut seen = vec![false; lengths.len()];
        for range in &batches {
            let width = lengths[order[range.start]];
            assert!(range.len() <= 4);
            assert!(range.len() == 1 || range.len() * width <= 100);
            for &i in &order[range.clone()] {
                assert!(lengths[i] <= width);
                seen[i] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "every sequence in one batch");
        assert_eq!(plan.batches(&[]).1.len(), 0);
    }

    #[test]
    fn precisions_parse_and_name_themselves() {
        for p in [Precision::F32, Precision::F16, Precision::Bf16] {
            assert_eq!(p.name().parse::<Precision>().unwrap(), p);
        }
        assert!("f64".parse::<Precision>().unwrap_err().contains("f16"));
    }
}
