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

use super::clean::{authors, clean, list};
use super::fields::{Field, Fields};
use super::{BadLine, Paragraph};
use crate::id::arxiv_id;
use crate::paper::Meta;

/// Reads JSON Lines records. Blank lines are ignored; a line that is not a
/// JSON object, or has no abstract, is reported in the second list and
/// the rest is read. `number` of each paragraph is its line.
pub fn parse_jsonl(text: &str, fields: &Fields) -> (Vec<Paragraph>, Vec<BadLine>) {
    use rayon::prelude::*;
    let text = super::strip_bom(text);
    // Cleaning the text is most of the work (whitespace, LaTeX): the lines
    // are read in parallel, and kept in order.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| (i + 1, line))
        .collect();
    let read: Vec<(usize, Result<Paragraph, String>)> = lines
        .par_iter()
        .map(|&(number, line)| (number, record(line, fields)))
        .collect();
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (line_number, read) in read {
        match read {
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
#[allow(clippy::type_complexity)]
pub fn embed_text(
    line: &str,
    fields: &Fields,
) -> Result<(serde_json::Map<String, Value>, Paragraph, String), String> {
    let paragraph = record(line, fields)?;
    let Ok(Value::Object(object)) = serde_json::from_str(line) else {
        unreachable!("record() accepted a JSON object");
    };
    let title = paragraph.meta.as_ref().map_or("", |m| m.title.as_str());
    let text = crate::paper::embed_text(title, &paragraph.text).into_owned();
    Ok((object, paragraph, text))
}

/// One line as a record.
pub fn record(line: &str, fields: &Fields) -> Result<Paragraph, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    record_value(&value, fields)
}

/// One JSON value as a record.
pub(super) fn record_value(value: &Value, fields: &Fields) -> Result<Paragraph, String> {
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
}
