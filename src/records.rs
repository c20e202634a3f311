//! Paper metadata as JSON Lines: one record per line, from arXiv's
//! metadata snapshot (`id`, `title`, `abstract`, `authors` as one string,
//! `categories`, `update_date`), daily arXiv crawls (`id`, `title`,
//! `summary`, `authors` as a list, `categories`), BEIR corpora (`_id`,
//! `title`, `text`) and exports shaped like them. [`Fields`] says where each
//! part is; the defaults recognise those layouts, and `--field NAME=PATH`
//! points a part at another (dotted) path.
//!
//! Raw arXiv text has hard line wraps and LaTeX; [`clean`] turns it into
//! the text that is embedded, matched and shown, and the record keeps the
//! original (`papers show --raw`).

use serde_json::Value;

use crate::paper::Meta;
use crate::parse::Paragraph;

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
    fn defaults(self) -> &'static [&'static str] {
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
    overrides: Vec<(Field, Vec<String>)>,
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
    fn get<'v>(&self, record: &'v Value, field: Field) -> Option<&'v Value> {
        let found = match self.overrides.iter().find(|(f, _)| *f == field) {
            Some((_, path)) => path.iter().try_fold(record, |v, key| v.get(key)),
            None => field.defaults().iter().find_map(|key| record.get(*key)),
        };
        found.filter(|v| !v.is_null())
    }
}

/// A line that was not indexed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// Why, in a few words.
    pub reason: String,
}

/// Reads JSON Lines records. Blank lines are ignored; a line that is not a
/// JSON object, or has no abstract, is reported in the second list and
/// the rest is read. `number` of each paragraph is its line.
pub fn parse_jsonl(text: &str, fields: &Fields) -> (Vec<Paragraph>, Vec<BadLine>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        match record(line, fields) {
            Ok(paragraph) => records.push(Paragraph {
                number: line_number,
                line: line_number,
                ..paragraph
            }),
            Err(reason) => bad.push(BadLine {
                line: line_number,
                reason,
            }),
        }
    }
    (records, bad)
}

/// One JSON Lines record and the text papers embeds for it (its cleaned
/// title and abstract, see [`crate::paper::Paper::embed_text`]): what
/// `papers embed --records` embeds, so that `papers index --embeddings`
/// accepts the result.
pub fn embed_text(
    line: &str,
    fields: &Fields,
) -> Result<(serde_json::Map<String, Value>, String), String> {
    let paragraph = record(line, fields)?;
    let Ok(Value::Object(object)) = serde_json::from_str(line) else {
        unreachable!("record() accepted a JSON object");
    };
    let text = match paragraph.meta.as_ref().map(|m| m.title.as_str()) {
        Some(title) if !title.is_empty() => format!("{title} {}", paragraph.text),
        _ => paragraph.text,
    };
    Ok((object, text))
}

/// One line as a record.
fn record(line: &str, fields: &Fields) -> Result<Paragraph, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    record_value(&value, fields)
}

/// Reads a JSON list of records (a `[...]` file): entries shaped like
/// Hugging Face's daily papers (`{paper: {...}}`) are read as such, any
/// other object with the same fields as JSON Lines. An entry that is not a
/// record is reported with its 1-based position (`number`). Errors only
/// when the text is not a JSON list.
pub fn parse_json_list(
    text: &str,
    fields: &Fields,
) -> Result<(Vec<Paragraph>, Vec<BadLine>), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON list of records: {e}"))?;
    let Value::Array(entries) = value else {
        return Err("not a JSON list of records: the top level is not a list".into());
    };
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let read = match entry.get("paper") {
            Some(Value::Object(_)) => crate::parse::hf_entry(entry)
                .ok_or_else(|| "no abstract (looked for paper.summary)".to_string()),
            _ => record_value(entry, fields),
        };
        match read {
            Ok(paragraph) => records.push(Paragraph {
                number: i + 1,
                line: 0,
                ..paragraph
            }),
            Err(reason) => bad.push(BadLine {
                line: i + 1,
                reason,
            }),
        }
    }
    Ok((records, bad))
}

/// One JSON value as a record.
fn record_value(value: &Value, fields: &Fields) -> Result<Paragraph, String> {
    if !value.is_object() {
        return Err("not a JSON object".into());
    }
    let string = |field| match fields.get(value, field) {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if let Some(other) = fields
        .get(value, Field::Abstract)
        .filter(|v| !v.is_string())
    {
        let kind = match other {
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Array(_) => "a list",
            _ => "an object",
        };
        return Err(format!("the abstract is {kind}, not text"));
    }
    let raw = string(Field::Abstract);
    let text = clean(&raw);
    if text.is_empty() {
        let names: Vec<String> = match fields.overrides.iter().find(|(f, _)| *f == Field::Abstract)
        {
            Some((_, path)) => vec![path.join(".")],
            None => Field::Abstract
                .defaults()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        return Err(format!("no abstract (looked for {})", names.join(", ")));
    }
    let id = string(Field::Id);
    let arxiv = arxiv_id(&id).unwrap_or_default();
    let meta = Meta {
        arxiv_id: arxiv.clone(),
        source_id: if arxiv.is_empty() { id } else { String::new() },
        title: clean(&string(Field::Title)),
        authors: authors(fields.get(value, Field::Authors)),
        categories: list(fields.get(value, Field::Categories)),
        published: crate::paper::parse_date(&string(Field::Date)).map(crate::paper::format_date),
        listed: None,
        // papers' own exports (and Hugging Face-like lines) carry these.
        upvotes: value.get("upvotes").and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        }),
        github: value
            .get("github")
            .or_else(|| value.get("githubRepo"))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        keywords: list(value.get("keywords").or_else(|| value.get("ai_keywords"))),
        ai_summary: value
            .get("ai_summary")
            .and_then(|v| v.as_str())
            .map(clean)
            .filter(|s| !s.is_empty()),
        original: (raw.split_whitespace().collect::<Vec<_>>().join(" ") != text).then_some(raw),
    };
    let embedding = if fields.embeddings {
        Some(read_embedding(value.get("embedding"))?)
    } else {
        None
    };
    Ok(Paragraph {
        number: 0,
        line: 0,
        text,
        meta: Some(meta),
        embedding,
    })
}

/// A record's `embedding`: a non-empty list of finite numbers.
fn read_embedding(value: Option<&Value>) -> Result<Vec<f32>, String> {
    let Some(Value::Array(items)) = value else {
        return Err("no embedding (a list of numbers under `embedding`)".into());
    };
    if items.is_empty() {
        return Err("empty embedding".into());
    }
    items
        .iter()
        .map(|v| match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x as f32),
            _ => Err(format!("embedding holds {v}, not a finite number")),
        })
        .collect()
}

/// The id in a paper's page address, as people paste them: arXiv's
/// abstract or PDF page (`https://arxiv.org/abs/2405.01234v2`,
/// `arxiv.org/pdf/2405.01234.pdf`) or Hugging Face's paper page; other
/// text is returned as it is.
pub fn id_in_page_url(text: &str) -> &str {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .unwrap_or(text);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    ["arxiv.org/abs/", "arxiv.org/pdf/", "huggingface.co/papers/"]
        .iter()
        .find_map(|page| rest.strip_prefix(page))
        .map(|id| {
            let id = id.trim_end_matches('/');
            id.strip_suffix(".pdf").unwrap_or(id)
        })
        .unwrap_or(text)
}

/// `2405.01234`, `2405.01234v2`, `arXiv:2405.01234` or an old-style
/// `hep-th/9901001` as the bare id without version; `None` otherwise.
pub fn arxiv_id(id: &str) -> Option<String> {
    let id = id.trim();
    let id = id
        .strip_prefix("arXiv:")
        .or_else(|| id.strip_prefix("arxiv:"))
        .unwrap_or(id);
    let unversioned = match id.rfind('v') {
        Some(at)
            if at > 0 && id[at + 1..].bytes().all(|b| b.is_ascii_digit()) && at + 1 < id.len() =>
        {
            &id[..at]
        }
        _ => id,
    };
    let new_style = unversioned.split_once('.').is_some_and(|(a, b)| {
        a.len() == 4
            && (4..=5).contains(&b.len())
            && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    });
    let old_style = unversioned.split_once('/').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.bytes()
                .all(|c| c.is_ascii_lowercase() || c == b'-' || c == b'.')
            && b.len() == 7
            && b.bytes().all(|c| c.is_ascii_digit())
    });
    (new_style || old_style).then(|| unversioned.to_string())
}

/// Author names from a list of strings or `{name}` objects, or from one
/// string (`"A. One, B. Two and C. Three"`).
fn authors(value: Option<&Value>) -> Vec<String> {
    let names: Vec<String> = match value {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|a| a.get("name").unwrap_or(a).as_str())
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) => s
            .replace(" and ", ", ")
            .split(',')
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|n| !n.is_empty())
        .collect()
}

/// A list of strings, or one string split on white space.
fn list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// LaTeX commands whose argument is the text itself.
const TEXT_COMMANDS: &[&str] = &[
    "textbf",
    "textit",
    "emph",
    "texttt",
    "textsc",
    "textrm",
    "textsf",
    "underline",
    "mathrm",
    "mathbf",
    "mathit",
    "mathcal",
    "mathbb",
    "mathsf",
    "mathtt",
    "boldsymbol",
    "text",
    "url",
];

/// The text of a raw abstract as papers embeds, matches and shows it:
/// white space (arXiv's hard wraps) collapsed to single spaces; math
/// delimiters (`$`, `$$`, `\(`, `\)`) dropped with their content kept;
/// `\textbf{x}`, `\emph{x}` and the like replaced by `x`; escaped
/// characters (`\%`, `\&`, `\_`, `\$`, `\#`) unescaped; `~` a space.
/// Other commands (`\alpha`) are left as they are, since their names are
/// what a reader would type. Text without LaTeX comes back only
/// re-spaced.
pub fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {}
            '~' => out.push(' '),
            '\\' => match chars.peek().copied() {
                Some(e @ ('%' | '&' | '_' | '$' | '#' | '{' | '}')) => {
                    chars.next();
                    out.push(e);
                }
                Some('(' | ')' | '[' | ']') => {
                    chars.next();
                }
                Some(a) if a.is_ascii_alphabetic() => {
                    let mut name = String::new();
                    while let Some(&a) = chars.peek().filter(|a| a.is_ascii_alphabetic()) {
                        name.push(a);
                        chars.next();
                    }
                    if TEXT_COMMANDS.contains(&name.as_str()) && chars.peek() == Some(&'{') {
                        chars.next();
                        // The argument, braces balanced; it may hold more LaTeX.
                        let mut depth = 1;
                        let mut argument = String::new();
                        for a in chars.by_ref() {
                            match a {
                                '{' => depth += 1,
                                '}' => depth -= 1,
                                _ => {}
                            }
                            if depth == 0 {
                                break;
                            }
                            argument.push(a);
                        }
                        out.push_str(&clean(&argument));
                    } else {
                        out.push('\\');
                        out.push_str(&name);
                    }
                }
                _ => out.push('\\'),
            },
            other => out.push(other),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_arxiv_snapshot_crawl_and_beir_layouts() {
        let text = concat!(
            r#"{"id": "0704.0001", "title": "A  title", "abstract": "  One.\n  Two.", "authors": "A. One, B. Two and C. Three", "categories": "hep-ph math.CO", "update_date": "2008-11-13"}"#,
            "\n",
            r#"{"id": "2606.28729", "summary": "Crawl.", "authors": ["X Y", "Z W"], "categories": ["cs.CL"]}"#,
            "\n\n",
            r#"{"_id": "4983", "title": "T", "text": "Beir.", "metadata": {}}"#,
            "\n",
        );
        let (records, bad) = parse_jsonl(text, &Fields::default());
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(records.len(), 3);
        let m0 = records[0].meta.as_ref().unwrap();
        assert_eq!(records[0].text, "One. Two.");
        assert_eq!(m0.arxiv_id, "0704.0001");
        assert_eq!(m0.title, "A title");
        assert_eq!(m0.authors, ["A. One", "B. Two", "C. Three"]);
        assert_eq!(m0.categories, ["hep-ph", "math.CO"]);
        assert_eq!(m0.published.as_deref(), Some("2008-11-13"));
        let m1 = records[1].meta.as_ref().unwrap();
        assert_eq!((m1.authors.len(), records[1].number), (2, 2));
        let m2 = records[2].meta.as_ref().unwrap();
        assert_eq!((m2.arxiv_id.as_str(), m2.source_id.as_str()), ("", "4983"));
        assert_eq!(records[2].number, 4, "numbered by line");
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let text = "{\"abstract\": \"ok\"}\nnot json\n[1]\n{\"title\": \"no abstract\"}\n";
        let (records, bad) = parse_jsonl(text, &Fields::default());
        assert_eq!(records.len(), 1);
        let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, [2, 3, 4]);
        assert!(bad[0].reason.starts_with("not JSON"));
        assert!(bad[2].reason.contains("no abstract"));
    }

    #[test]
    fn field_overrides_follow_dotted_paths() {
        let mut fields = Fields::default();
        fields.set("abstract=paper.summary").unwrap();
        fields.set("title=paper.title").unwrap();
        assert!(fields.set("colour=x").unwrap_err().contains("fields: id"));
        assert!(fields.set("title").is_err());
        let (records, bad) = parse_jsonl(r#"{"paper": {"summary": "S.", "title": "T"}}"#, &fields);
        assert!(bad.is_empty());
        assert_eq!(records[0].text, "S.");
        assert_eq!(records[0].meta.as_ref().unwrap().title, "T");
    }

    #[test]
    fn arxiv_ids_with_versions_and_old_style() {
        assert_eq!(arxiv_id("2405.01234v3").as_deref(), Some("2405.01234"));
        assert_eq!(arxiv_id("arXiv:0704.0001").as_deref(), Some("0704.0001"));
        assert_eq!(
            arxiv_id("hep-th/9901001v2").as_deref(),
            Some("hep-th/9901001")
        );
        assert_eq!(arxiv_id("4983"), None);
        assert_eq!(arxiv_id("W123.abc"), None);
    }

    #[test]
    fn latex_is_cleaned_and_plain_text_only_respaced() {
        assert_eq!(
            clean("We get \\textbf{50\\%} better $F_1$ on\n  \\emph{long \\textit{hard}} tasks~\\cite"),
            "We get 50% better F_1 on long hard tasks \\cite"
        );
        assert_eq!(clean("\\(\\alpha\\) and $$x$$"), "\\alpha and x");
        assert_eq!(clean("Plain  text.\n"), "Plain text.");
        assert_eq!(clean("unbalanced \\emph{oops"), "unbalanced oops");
    }
}
