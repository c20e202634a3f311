//! Where the parts of a record are: `--field NAME=PATH`, and the names
//! tried when none is given. JSON Lines, JSON lists and Parquet columns
//! are read through the same mapping.

use serde_json::Value;

/// The parts of a record that papers reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The record's own id; arXiv ids (`2405.01234`) become aliases.
    Id,
    /// The title.
    Title,
    /// The abstract.
    Abstract,
    /// Authors: a list of names or `{name}` objects, or one string.
    Authors,
    /// Categories: a list, or one space-separated string.
    Categories,
    /// The publication (or last update) date, `YYYY-MM-DD...`.
    Date,
}

impl Field {
    const ALL: [Field; 6] = [
        Field::Id,
        Field::Title,
        Field::Abstract,
        Field::Authors,
        Field::Categories,
        Field::Date,
    ];

    /// The name used in `--field NAME=PATH`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Title => "title",
            Field::Abstract => "abstract",
            Field::Authors => "authors",
            Field::Categories => "categories",
            Field::Date => "date",
        }
    }

    /// The paths tried, in order, when none is given.
    pub(super) fn defaults(self) -> &'static [&'static str] {
        match self {
            Field::Id => &["id", "_id", "arxiv_id", "paper_id", "paperId", "corpusid"],
            Field::Title => &["title"],
            Field::Abstract => &["abstract", "summary", "text"],
            Field::Authors => &["authors", "author"],
            Field::Categories => &["categories", "category"],
            Field::Date => &[
                "published",
                "publishedAt",
                "update_date",
                "date",
                "publicationDate",
            ],
        }
    }
}

/// Where each part of a record is: a dotted path per field that was
/// given, the defaults for the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub(super) overrides: Vec<(Field, Vec<String>)>,
    /// Read each record's `embedding` (a list of numbers) too, and report a
    /// record without one as a bad line (`papers index --embeddings`).
    pub embeddings: bool,
    /// Caps on what one input file and one record may cost.
    pub limits: crate::limits::Limits,
}

impl Fields {
    /// Parses `NAME=PATH` (for example `abstract=paper.summary`); the error
    /// names the valid fields.
    pub fn set(&mut self, spec: &str) -> Result<(), String> {
        let (name, path) = spec
            .split_once('=')
            .ok_or_else(|| format!("`{spec}` is not NAME=PATH"))?;
        let field = Field::ALL
            .into_iter()
            .find(|f| f.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
                format!("unknown field `{name}` (fields: {})", names.join(", "))
            })?;
        let path: Vec<String> = path.trim().split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(format!("`{spec}`: empty path segment"));
        }
        self.overrides.retain(|(f, _)| *f != field);
        self.overrides.push((field, path));
        Ok(())
    }

    /// The value of `field` in `record`, if any.
    pub(super) fn get<'v>(&self, record: &'v Value, field: Field) -> Option<&'v Value> {
        let found = match self.overrides.iter().find(|(f, _)| *f == field) {
            Some((_, path)) => path.iter().try_fold(record, |v, key| v.get(key)),
            None => field.defaults().iter().find_map(|key| record.get(*key)),
        };
        found.filter(|v| !v.is_null())
    }
}
