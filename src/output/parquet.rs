//! Records with their vectors as Parquet (`papers embed --records --format
//! parquet`): the columns `papers index --embeddings` reads back, in the
//! layout Spark and Ray write.
//!
//! | column | type | what |
//! |---|---|---|
//! | `id` | string | the arXiv id, else the record's own id, else null |
//! | `title` | string | the cleaned title (null when none) |
//! | `abstract` | string | the cleaned abstract |
//! | `authors` | list of string | |
//! | `categories` | list of string | |
//! | `published` | string | `YYYY-MM-DD`, null when unknown |
//! | `embedding` | fixed-size list of float32 | the model's vector |
//!
//! Compressed with Snappy (Spark's default), one row group per
//! [`GROUP_ROWS`] records.

use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{FixedSizeListBuilder, Float32Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::input::Paragraph;

/// Records per row group.
pub const GROUP_ROWS: usize = 8192;

/// Whether this build writes Parquet.
pub const AVAILABLE: bool = true;

/// The schema of the file for vectors of `dimension` floats.
pub fn schema(dimension: usize) -> Schema {
    let strings = || DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    Schema::new(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("title", DataType::Utf8, true),
        Field::new("abstract", DataType::Utf8, false),
        Field::new("authors", strings(), true),
        Field::new("categories", strings(), true),
        Field::new("published", DataType::Utf8, true),
        Field::new(
            "embedding",
            DataType::FixedSizeList(
                Arc::new(Field::new("item", DataType::Float32, false)),
                dimension as i32,
            ),
            false,
        ),
    ])
}

/// Writes `records` with `vectors` (one each, all of one length) to `out`.
pub fn write(
    out: impl Write + Send,
    records: &[Paragraph],
    vectors: &[Vec<f32>],
) -> parquet::errors::Result<()> {
    let dimension = vectors.first().map_or(0, Vec::len);
    let schema = Arc::new(schema(dimension));
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(GROUP_ROWS))
        .build();
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(properties))?;
    for (records, vectors) in records.chunks(GROUP_ROWS).zip(vectors.chunks(GROUP_ROWS)) {
        writer.write(&batch(&schema, records, vectors, dimension)?)?;
    }
    writer.close()?;
    Ok(())
}

fn batch(
    schema: &Arc<Schema>,
    records: &[Paragraph],
    vectors: &[Vec<f32>],
    dimension: usize,
) -> parquet::errors::Result<RecordBatch> {
    let (mut id, mut title, mut text, mut published) = (
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    let (mut authors, mut categories) = (
        ListBuilder::new(StringBuilder::new()),
        ListBuilder::new(StringBuilder::new()),
    );
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let mut embedding =
        FixedSizeListBuilder::new(Float32Builder::new(), dimension as i32).with_field(item);
    let nonempty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    for (record, vector) in records.iter().zip(vectors) {
        let meta = record.meta.clone().unwrap_or_default();
        let own = if meta.arxiv_id.is_empty() {
            &meta.source_id
        } else {
            &meta.arxiv_id
        };
        id.append_option(nonempty(own));
        title.append_option(nonempty(&meta.title));
        text.append_value(&record.text);
        published.append_option(meta.published.as_deref());
        for (list, values) in [
            (&mut authors, &meta.authors),
            (&mut categories, &meta.categories),
        ] {
            for v in values {
                list.values().append_value(v);
            }
            list.append(true);
        }
        embedding.values().append_slice(vector);
        embedding.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(title.finish()),
        Arc::new(text.finish()),
        Arc::new(authors.finish()),
        Arc::new(categories.finish()),
        Arc::new(published.finish()),
        Arc::new(embedding.finish()),
    ];
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}
