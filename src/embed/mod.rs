//! Turning text into vectors. [`Embedder`] is the small trait the rest of the
//! crate sees; [`BertEmbedder`] implements it with candle. Where the model's
//! files come from is [`source`]'s business, which device runs it is
//! [`device`]'s.

pub mod bert;
pub mod device;
pub mod encoder;
mod gelu;
pub mod mapped;
mod softmax;
pub mod source;

pub use bert::BertEmbedder;
pub use device::DeviceChoice;
pub use source::{ModelFiles, ModelSpec, Origin, DEFAULT_MODEL};

use std::ops::ControlFlow;

use crate::error::Result;

/// A sentence-embedding model.
pub trait Embedder {
    /// The model's id, as recorded in an index manifest.
    fn model_id(&self) -> &str;

    /// Length of the vectors it returns.
    fn dimension(&self) -> usize;

    /// Embeds `texts`, returning one unit-length vector per text, in order.
    /// `progress` is called after each batch with the number of texts
    /// finished so far; returning `Break` stops the work with
    /// [`Error::Interrupted`](crate::Error::Interrupted).
    fn embed(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
    ) -> Result<Vec<Vec<f32>>>;

    /// The passages past the truncation point of a text too long for the
    /// model, overlapping a little, to be embedded separately so that the
    /// end of a long abstract is searchable too; empty for texts that fit.
    fn windows(&self, text: &str) -> Result<Vec<String>> {
        let _ = text;
        Ok(Vec::new())
    }

    /// Embeds one text.
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        let mut vectors = self.embed(&[text], &mut |_| ControlFlow::Continue(()))?;
        Ok(vectors.remove(0))
    }
}
