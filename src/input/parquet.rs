//! Parquet inputs, the format Spark and Ray write: one record per row,
//! its parts found by column name through the same [`Fields`] as JSON Lines
//! (a dotted path reaches into a struct column), and with `--embeddings` an
//! `embedding` column of float32 lists (or fixed-size lists). Read a record
//! batch at a time ([`Batches`]), so an import holds a batch, not the file.

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use serde_json::{Map, Value};

use super::fields::Fields;
use super::{BadLine, Paragraph};

/// The first bytes of every Parquet file.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// The column that carries a record's vector.
pub const EMBEDDING: &str = "embedding";

/// Rows decoded at a time.
const BATCH_ROWS: usize = 4096;

/// A Parquet file read a record batch at a time.
pub struct Batches {
    reader: ParquetRecordBatchReader,
    fields: Fields,
    /// The rows in each row group, to name the group of a row.
    groups: Vec<i64>,
    /// Rows read so far.
    rows: usize,
    /// Where the vectors are, when they are read.
    embedding: Option<usize>,
}

impl Batches {
    /// Opens `path`; a file that is not Parquet (a truncated one included:
    /// its footer is at the end) or, with `fields.embeddings`, has no usable
    /// `embedding` column is an error naming the problem.
    pub fn open(path: &Path, fields: &Fields) -> Result<Batches, String> {
        let file = File::open(path).map_err(|e| crate::error::describe_io(&e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| format!("not a readable Parquet file ({e})"))?;
        let groups = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        let schema = builder.schema().clone();
        let embedding = if fields.embeddings {
            let Some((at, field)) = schema.column_with_name(EMBEDDING) else {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(format!(
                    "no `{EMBEDDING}` column (a list of float32); its columns: {}",
                    names.join(", ")
                ));
            };
            let element = match field.data_type() {
                DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _) => {
                    e.data_type().clone()
                }
                other => other.clone(),
            };
            if !matches!(element, DataType::Float32 | DataType::Float64)
                || !matches!(
                    field.data_type(),
                    DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
                )
            {
                return Err(format!(
                    "column `{EMBEDDING}` is {}, not a list of float32",
                    field.data_type()
                ));
            }
            Some(at)
        } else {
            None
        };
        let reader = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| format!("not a readable Parquet file ({e})"))?;
        // The vectors are read from their column, not through the fields.
        let mut fields = fields.clone();
        fields.embeddings = false;
        Ok(Batches {
            reader,
            fields,
            groups,
            rows: 0,
            embedding,
        })
    }

    /// The row group (0-based) that holds the 0-based `row`.
    fn group_of(&self, row: usize) -> usize {
        let mut end = 0;
        for (g, rows) in self.groups.iter().enumerate() {
            end += *rows as usize;
            if row < end {
                return g;
            }
        }
        self.groups.len().saturating_sub(1)
    }

    /// The next batch's records and the rows that are not records (each
    /// `number` and `line` is the 1-based row); `None` at the end. A batch
    /// that cannot be decoded ends the file with an error naming its row
    /// group.
    #[allow(clippy::type_complexity)]
    pub fn next_batch(&mut self) -> Option<Result<(Vec<Paragraph>, Vec<BadLine>), String>> {
        let batch = match self.reader.next()? {
            Ok(batch) => batch,
            Err(e) => {
                let group = self.group_of(self.rows);
                return Some(Err(format!("row group {group}: cannot be decoded ({e})")));
            }
        };
        let first = self.rows;
        self.rows += batch.num_rows();
        Some(self.records(&batch, first))
    }

    fn records(
        &self,
        batch: &RecordBatch,
        first: usize,
    ) -> Result<(Vec<Paragraph>, Vec<BadLine>), String> {
        let schema = batch.schema();
        let columns: Vec<(&str, &dyn Array)> = schema
            .fields()
            .iter()
            .zip(batch.columns())
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.embedding)
            .map(|(_, (f, c))| (f.name().as_str(), c.as_ref()))
            .collect();
        let vectors = self.embedding.map(|at| batch.column(at).as_ref());
        let mut records = Vec::with_capacity(batch.num_rows());
        let mut bad = Vec::new();
        for row in 0..batch.num_rows() {
            let number = first + row + 1;
            let object: Map<String, Value> = columns
                .iter()
                .map(|(name, column)| (name.to_string(), value(*column, row)))
                .collect();
            let read = super::jsonl::record_value(&Value::Object(object), &self.fields).and_then(
                |mut paragraph| {
                    if let Some(vectors) = vectors {
                        paragraph.embedding = Some(vector(vectors, row)?);
                    }
                    Ok(paragraph)
                },
            );
            match read {
                Ok(paragraph) => records.push(Paragraph {
                    number,
                    line: number,
                    ..paragraph
                }),
                Err(reason) => bad.push(BadLine {
                    line: number,
                    reason: format!("(row group {}) {reason}", self.group_of(number - 1)),
                }),
            }
        }
        Ok((records, bad))
    }
}

/// Every record of a Parquet file, and the rows that are not records.
pub fn read(path: &Path, fields: &Fields) -> Result<(Vec<Paragraph>, Vec<BadLine>), String> {
    let mut batches = Batches::open(path, fields)?;
    let (mut records, mut bad) = (Vec::new(), Vec::new());
    while let Some(batch) = batches.next_batch() {
        let (more, worse) = batch?;
        records.extend(more);
        bad.extend(worse);
    }
    Ok((records, bad))
}

/// Row `row` of the embedding column as f32s; a null or empty list, or a
/// value that is not a finite number, is not a vector.
fn vector(column: &dyn Array, row: usize) -> Result<Vec<f32>, String> {
    if column.is_null(row) {
        return Err(format!("no embedding (`{EMBEDDING}` is null)"));
    }
    let values = match column.data_type() {
        DataType::List(_) => column.as_list::<i32>().value(row),
        DataType::LargeList(_) => column.as_list::<i64>().value(row),
        _ => column.as_fixed_size_list().value(row),
    };
    if values.is_empty() {
        return Err("empty embedding".into());
    }
    if values.null_count() > 0 {
        return Err("embedding holds a null, not a number".into());
    }
    let floats: Vec<f32> = match values.data_type() {
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .values()
            .iter()
            .map(|&x| x as f32)
            .collect(),
        _ => values.as_primitive::<Float32Type>().values().to_vec(),
    };
    match floats.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(format!("embedding holds {x}, not a finite number")),
        None => Ok(floats),
    }
}

/// One cell as JSON, so that the JSON Lines reader maps it: text, numbers,
/// booleans, lists and structs as themselves, dates and timestamps as
/// `YYYY-MM-DD`, anything else (binary, maps, ...) as absent.
fn value(column: &dyn Array, row: usize) -> Value {
    if column.is_null(row) {
        return Value::Null;
    }
    macro_rules! number {
        ($t:ty) => {
            Value::from(column.as_primitive::<$t>().value(row))
        };
    }
    match column.data_type() {
        DataType::Utf8 => column.as_string::<i32>().value(row).into(),
        DataType::LargeUtf8 => column.as_string::<i64>().value(row).into(),
        DataType::Utf8View => column.as_string_view().value(row).into(),
        // Text written without the UTF-8 annotation (Spark can).
        DataType::Binary => String::from_utf8_lossy(column.as_binary::<i32>().value(row)).into(),
        DataType::LargeBinary => {
            String::from_utf8_lossy(column.as_binary::<i64>().value(row)).into()
        }
        DataType::BinaryView => String::from_utf8_lossy(column.as_binary_view().value(row)).into(),
        DataType::Boolean => column.as_boolean().value(row).into(),
        DataType::Int8 => number!(Int8Type),
        DataType::Int16 => number!(Int16Type),
        DataType::Int32 => number!(Int32Type),
        DataType::Int64 => number!(Int64Type),
        DataType::UInt8 => number!(UInt8Type),
        DataType::UInt16 => number!(UInt16Type),
        DataType::UInt32 => number!(UInt32Type),
        DataType::UInt64 => number!(UInt64Type),
        DataType::Float32 => number!(Float32Type),
        DataType::Float64 => number!(Float64Type),
        DataType::Date32 => day(column.as_primitive::<Date32Type>().value(row) as i64),
        DataType::Timestamp(unit, _) => {
            let (raw, per_second) = match unit {
                TimeUnit::Second => (column.as_primitive::<TimestampSecondType>().value(row), 1),
                TimeUnit::Millisecond => (
                    column.as_primitive::<TimestampMillisecondType>().value(row),
                    1_000,
                ),
                TimeUnit::Microsecond => (
                    column.as_primitive::<TimestampMicrosecondType>().value(row),
                    1_000_000,
                ),
                TimeUnit::Nanosecond => (
                    column.as_primitive::<TimestampNanosecondType>().value(row),
                    1_000_000_000,
                ),
            };
            day(raw.div_euclid(per_second).div_euclid(86_400))
        }
        DataType::List(_) => list(&column.as_list::<i32>().value(row)),
        DataType::LargeList(_) => list(&column.as_list::<i64>().value(row)),
        DataType::FixedSizeList(..) => list(&column.as_fixed_size_list().value(row)),
        DataType::Struct(fields) => {
            let s = column.as_struct();
            Value::Object(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), value(c.as_ref(), row)))
                    .collect(),
            )
        }
        _ => Value::Null,
    }
}

fn list(values: &dyn Array) -> Value {
    Value::Array((0..values.len()).map(|i| value(values, i)).collect())
}

/// Days since 1970-01-01 as `YYYY-MM-DD`; null past the years -9999 to
/// 9999.
fn day(days: i64) -> Value {
    crate::date::from_days(days).map_or(Value::Null, Value::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_civil_dates() {
        assert_eq!(day(0), "1970-01-01");
        assert_eq!(day(19_875), "2024-06-01");
        assert_eq!(day(-1), "1969-12-31");
    }
}
