//! Query syntax beyond words: `"quoted phrases"` a hit must contain, and
//! `-word` exclusions it must not. The rest of the query, phrases
//! included, is what is embedded and scored; the two kinds of constraint
//! are filters on the candidates.
//!
//! ```text
//! "length generalization" transformers -rnn
//!   text      length generalization transformers
//!   phrases   length generalization
//!   excluded  rnn
//! ```
//!
//! On a shell, quote the whole query (`papers search '"RoPE" -survey'`) or
//! put it after `--`, so that `-word` is not read as a flag.

use std::collections::HashSet;

use crate::analysis::Analysis;
use crate::error::Result;
use crate::index::Index;

/// A query taken apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Syntax {
    /// What to embed and score: the words and the phrases' words.
    pub text: String,
    /// Phrases each hit must contain, as written.
    pub phrases: Vec<String>,
    /// Words no hit may contain.
    pub excluded: Vec<String>,
}

impl Syntax {
    /// Whether the query constrains its hits.
    pub fn filters(&self) -> bool {
        !self.phrases.is_empty() || !self.excluded.is_empty()
    }
}

/// A query paragraph parsed and analysed once: its syntax, and the
/// distinct terms of its text as BM25 analyses them (sorted), which the
/// lexical ranking, its bound, the score's length feature and the
/// evidence all read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The query taken apart.
    pub syntax: Syntax,
    /// The distinct analysed terms of `syntax.text`.
    pub terms: Vec<String>,
}

impl Parsed {
    /// Parses and analyses `query`.
    pub fn new(query: &str) -> Parsed {
        let syntax = parse(query);
        let terms = Analysis::CURRENT.distinct_terms(&syntax.text);
        Parsed { syntax, terms }
    }
}

/// Takes `query` apart. An unclosed quote runs to the end; a `-` starts an
/// exclusion only at the start of a word and before a letter or digit
/// (`state-of-the-art` and `-` alone are words).
pub fn parse(query: &str) -> Syntax {
    let mut syntax = Syntax::default();
    let mut words: Vec<String> = Vec::new();
    let mut rest = query;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix('"') {
            let end = after.find('"').unwrap_or(after.len());
            let phrase = after[..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if !phrase.is_empty() {
                words.push(phrase.clone());
                syntax.phrases.push(phrase);
            }
            rest = after.get(end + 1..).unwrap_or("");
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        match word.strip_prefix('-') {
            Some(excluded) if excluded.starts_with(|c: char| c.is_alphanumeric()) => {
                syntax.excluded.push(excluded.to_string());
            }
            _ => words.push(word.to_string()),
        }
        rest = &rest[end..];
    }
    syntax.text = words.join(" ");
    syntax
}

/// The rows `syntax` allows among `rows` rows, or `None` when it allows
/// all: every phrase in the record's title or abstract (ignoring case and
/// spacing), no excluded word among its terms (as BM25 analyses them).
pub fn allowed(index: &Index, syntax: &Syntax) -> Result<Option<HashSet<usize>>> {
    if !syntax.filters() {
        return Ok(None);
    }
    let lexical = index.lexical()?;
    let rows_with = |term: &str| -> Result<HashSet<usize>> {
        let mut rows = HashSet::new();
        for segment in lexical.segments() {
            segment.postings(term, |row, _, _| {
                rows.insert(row);
            })?;
        }
        Ok(rows)
    };
    // Candidates for the phrases: rows with every phrase term.
    let mut allowed: Option<HashSet<usize>> = None;
    for phrase in &syntax.phrases {
        for term in Analysis::CURRENT.terms(phrase) {
            let with = rows_with(&term)?;
            allowed = Some(match allowed {
                Some(before) => before.intersection(&with).copied().collect(),
                None => with,
            });
        }
    }
    let mut allowed = match allowed {
        Some(rows) => {
            // Then the phrases themselves, in the record's text.
            let wanted: Vec<String> = syntax.phrases.iter().map(|p| normalise(p)).collect();
            let mut kept = HashSet::new();
            for row in rows {
                let paper = index.paper(row)?;
                let title = paper.meta.as_ref().map(|m| m.title.as_str()).unwrap_or("");
                let text = normalise(&format!("{title} {}", paper.text));
                if wanted.iter().all(|w| text.contains(w.as_str())) {
                    kept.insert(row);
                }
            }
            kept
        }
        None => (0..index.rows()).collect(),
    };
    for word in &syntax.excluded {
        for term in Analysis::CURRENT.terms(word) {
            for row in rows_with(&term)? {
                allowed.remove(&row);
            }
        }
    }
    Ok(Some(allowed))
}

/// Lower case, words joined by single spaces, punctuation kept.
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_and_exclusions_are_taken_out() {
        let s = parse(r#""length generalization" transformers -rnn state-of-the-art - x"#);
        assert_eq!(s.phrases, ["length generalization"]);
        assert_eq!(s.excluded, ["rnn"]);
        assert_eq!(
            s.text,
            "length generalization transformers state-of-the-art - x"
        );
        let open = parse(r#"a "b  c"#);
        assert_eq!((open.text.as_str(), open.phrases.len()), ("a b c", 1));
        assert!(!parse("plain words").filters());
    }
}
