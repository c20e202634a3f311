//! Hugging Face's daily papers lists, and JSON lists of records in
//! general (a `[...]` file).

use serde_json::Value;

use super::daily::ParseError;
use super::fields::Fields;
use super::{BadLine, Paragraph};

/// Reads a JSON list of records (a `[...]` file): entries shaped like
/// Hugging Face's daily papers (`{paper: {...}}`) are read as such, any
/// other object with the same fields as JSON Lines. An entry that is not a
/// record is reported with its 1-based position (`number`). Errors only
/// when the text is not a JSON list.
pub fn parse_json_list(
    text: &str,
    fields: &Fields,
) -> Result<(Vec<Paragraph>, Vec<BadLine>), String> {
    let text = super::strip_bom(text);
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON list of records: {e}"))?;
    let Value::Array(entries) = value else {
        return Err("not a JSON list of records: the top level is not a list".into());
    };
    let mut records = Vec::new();
    let mut bad = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let read = match entry.get("paper") {
            Some(Value::Object(_)) => {
                hf_entry(entry).ok_or_else(|| "no abstract (looked for paper.summary)".to_string())
            }
            _ => super::jsonl::record_value(entry, fields),
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

/// Reads a Hugging Face daily papers JSON dump: a list of entries with
/// `paper.id` (the arXiv id), `title` (or `paper.title`), `paper.summary`,
/// `paper.authors` (objects with a `name`, or strings) and `publishedAt`
/// (or `paper.publishedAt`), and when given `paper.upvotes`,
/// `paper.githubRepo`, `paper.ai_keywords` and `paper.ai_summary`. Entries
/// without a summary are left out; their
/// numbers are still counted, so `number` is the entry's 1-based position.
pub fn parse_hf_json(text: &str) -> Result<Vec<Paragraph>, ParseError> {
    let text = super::strip_bom(text);
    let value: Value = serde_json::from_str(text).map_err(|e| ParseError::Json(e.to_string()))?;
    let entries = value
        .as_array()
        .ok_or_else(|| ParseError::Json("the top level is not a list".into()))?;
    Ok(entries
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| hf_entry(entry).map(|p| Paragraph { number: i + 1, ..p }))
        .collect())
}

/// One entry of a Hugging Face daily papers list (`paper.summary` and the
/// rest, see [`parse_hf_json`]); `None` without a summary.
pub fn hf_entry(entry: &serde_json::Value) -> Option<Paragraph> {
    fn string(v: Option<&serde_json::Value>) -> &str {
        v.and_then(serde_json::Value::as_str)
            .map(str::trim)
            .unwrap_or("")
    }
    let paper = entry.get("paper").unwrap_or(entry);
    let raw = string(paper.get("summary"));
    let text = super::clean::clean(raw);
    if text.is_empty() {
        return None;
    }
    let title = match string(entry.get("title")) {
        "" => string(paper.get("title")),
        title => title,
    };
    // paper.publishedAt is the arXiv date in every layout; the
    // top-level publishedAt changed meaning between versions, so it
    // is only a fall-back.
    let published = match string(paper.get("publishedAt")) {
        "" => string(entry.get("publishedAt")),
        date => date,
    };
    let date = |text: &str| crate::paper::parse_date(text).map(crate::paper::format_date);
    let authors = super::clean::authors(paper.get("authors"));
    let id = string(paper.get("id"));
    let arxiv = crate::id::arxiv_id(id);
    // Upvotes come as a number, or as a string in older dumps.
    let upvotes = paper.get("upvotes").and_then(|v| match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    let keywords = super::clean::list(paper.get("ai_keywords"));
    let some = |text: &str| (!text.is_empty()).then(|| text.to_string());
    Some(Paragraph {
        number: 0,
        line: 0,
        embedding: None,
        meta: Some(crate::paper::Meta {
            arxiv_id: arxiv.clone().unwrap_or_default(),
            source_id: if arxiv.is_none() {
                id.to_string()
            } else {
                String::new()
            },
            title: super::clean::clean(title),
            authors,
            published: date(published),
            listed: date(string(paper.get("submittedOnDailyAt"))),
            upvotes,
            github: some(string(paper.get("githubRepo"))),
            keywords,
            ai_summary: some(&super::clean::clean(string(paper.get("ai_summary")))),
            original: (raw.split_whitespace().collect::<Vec<_>>().join(" ") != text)
                .then(|| raw.to_string()),
            ..Default::default()
        }),
        text,
    })
}
