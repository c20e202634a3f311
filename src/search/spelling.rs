//! Typos forgiven: a query word the index has never seen is replaced by
//! the nearest spelling whose term the index holds, before the query is
//! scored by its words and embedded.
//!
//! The convention of the search engines people type into every day
//! (Meilisearch, Typesense, Algolia): a word of 5 to 8 letters may be one
//! edit away, one of 9 or more two; shorter words are never touched. An
//! edit is a letter dropped, added, changed, or two neighbours swapped.
//! Candidates are spellings, not stems: each is analysed as the index
//! analyses words (`decodng` → `decoding` → `decod`) and kept when the
//! index holds that term and some record holding it writes that very
//! word (so `mixtral` is not taken for `mixtural` because `mixture`
//! shares its stem); the one in most records wins, then the first
//! found (at two edits, the first in alphabetical order; only spellings
//! whose first five letters begin some term of the index are analysed). At two edits, one of them is a drop or a swap (the other any
//! edit): two letters missing from one long word go uncorrected.
//!
//! Left alone: words the index knows, real words it does not (a word the
//! model's vocabulary holds whole, such as `actor` on an index without
//! it: never made `factor`), words inside `"quotes"` and after `-`, and
//! words that look like names rather than typos: with a digit (`qwen3`),
//! a capital after the first letter (`LoRA`, `GPTs`), or a capital first
//! letter anywhere but at the query's start (`with Mixtral`), unless the
//! query is written as a title. The lookup reads the lexical segments' term tables (a binary
//! search per segment), so it costs the same at any size for a known
//! word and a few thousand lookups for an unknown one.

use crate::analysis::Analysis;
use crate::embed::Embedder;
use crate::index::bm25::Lexical;
use crate::index::Index;

/// What spelling correction asks of an index.
pub trait Vocabulary {
    /// How many records hold an analysed term.
    fn documents(&self, term: &str) -> u64;
    /// Whether a record holding `term` writes `word` (lower-case) as a word.
    fn written(&self, term: &str, word: &str) -> bool;
    /// Whether `word` (lower-case) is a real word, though the index lacks
    /// it: a word the model's vocabulary holds whole.
    fn is_word(&self, word: &str) -> bool;
    /// Whether some analysed term starts with `prefix`.
    fn has_prefix(&self, prefix: &str) -> bool;
}

/// An index's words: its lexical segments and its records' texts, and
/// the model's vocabulary when it is at hand.
pub struct Terms<'a> {
    index: &'a Index,
    lexical: &'a Lexical,
    model: Option<&'a dyn Embedder>,
}

impl<'a> Terms<'a> {
    /// The words of `index`, and of `model`'s vocabulary.
    pub fn of(
        index: &'a Index,
        model: Option<&'a dyn Embedder>,
    ) -> crate::error::Result<Terms<'a>> {
        Ok(Terms {
            index,
            lexical: index.lexical()?,
            model,
        })
    }
}

/// How many first letters of a spelling two edits away must begin some
/// term of the index before it is analysed.
const PREFIX: usize = 5;

/// How many records holding a term are read for the word as written.
const WRITTEN_READS: usize = 16;

impl Vocabulary for Terms<'_> {
    fn documents(&self, term: &str) -> u64 {
        self.lexical.documents(term)
    }

    fn is_word(&self, word: &str) -> bool {
        self.model.is_some_and(|m| m.knows_word(word))
    }

    fn has_prefix(&self, prefix: &str) -> bool {
        self.lexical.has_prefix(prefix)
    }

    fn written(&self, term: &str, word: &str) -> bool {
        let rows = self
            .lexical
            .rows_with(term, WRITTEN_READS)
            .unwrap_or_default();
        rows.into_iter().any(|row| {
            self.index.paper(row).is_ok_and(|paper| {
                crate::analysis::word_spans(&paper.text)
                    .into_iter()
                    .any(|(s, e)| paper.text[s..e].eq_ignore_ascii_case(word))
            })
        })
    }
}

/// Letters a candidate may gain.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// A query with its unknown words corrected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spelled {
    /// The query as it will be searched.
    pub text: String,
    /// Each word replaced, and what replaced it.
    pub changes: Vec<(String, String)>,
}

/// How many edits a word of `letters` letters may be from its correction.
pub fn allowed_edits(letters: usize) -> usize {
    match letters {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }
}

/// Corrects the words of `query` that `words` does not know.
pub fn correct(query: &str, words: &dyn Vocabulary) -> Spelled {
    let mut spelled = Spelled::default();
    let titled = title_case(query);
    let mut quoted = false;
    let mut last = 0;
    let bytes = query.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' {
            quoted = !quoted;
        }
        if !c.is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] >= 0x80) {
            i += 1;
        }
        let word = &query[start..i];
        let excluded = start > 0 && bytes[start - 1] == b'-';
        let glued = start > 0 && (bytes[start - 1] >= 0x80);
        let first = titled || query[..start].trim().is_empty();
        if quoted || excluded || glued || !typed_as_word(word, first) {
            continue;
        }
        if let Some(better) = correction(word, words) {
            spelled.text.push_str(&query[last..start]);
            spelled.text.push_str(&better);
            spelled.changes.push((word.to_string(), better));
            last = i;
        }
    }
    spelled.text.push_str(&query[last..]);
    spelled
}

/// Whether most words of 4+ letters of `query` start with a capital (a
/// title): then a capital says nothing of a name.
fn title_case(query: &str) -> bool {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4)
        .collect();
    let capitals = words
        .iter()
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .count();
    !words.is_empty() && 2 * capitals > words.len()
}

/// Whether a word could be a typo rather than a name: ASCII letters only,
/// lower-case but for a capital first letter when it opens the query (or
/// the query is a title).
fn typed_as_word(word: &str, first: bool) -> bool {
    let capital = word.bytes().next().is_some_and(|b| b.is_ascii_uppercase());
    word.bytes().all(|b| b.is_ascii_alphabetic())
        && word.bytes().skip(1).all(|b| b.is_ascii_lowercase())
        && (first || !capital)
}

/// The correction of one word, if it needs one and one is near enough.
fn correction(word: &str, words: &dyn Vocabulary) -> Option<String> {
    let edits = allowed_edits(word.len());
    if edits == 0 {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let term = Analysis::CURRENT.term(&lower)?;
    if words.documents(&term) > 0 || words.is_word(&lower) {
        return None;
    }
    // The candidates the index holds, most records first; the first whose
    // spelling a record writes.
    let best = |candidates: Vec<String>| {
        let mut held: Vec<(u64, usize, String, String)> = Vec::new();
        for (i, candidate) in candidates.into_iter().enumerate() {
            let Some(term) = Analysis::CURRENT.term(&candidate) else {
                continue;
            };
            let n = words.documents(&term);
            if n > 0 {
                held.push((n, i, term, candidate));
            }
        }
        held.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        held.dedup_by(|a, b| a.3 == b.3);
        held.into_iter()
            .find(|(_, _, term, candidate)| words.written(term, candidate))
            .map(|(_, _, _, c)| c)
    };
    let near = one_edit(&lower, true);
    let found = best(near.clone()).or_else(|| {
        if edits < 2 {
            return None;
        }
        // Tens of thousands of spellings two edits away: only those whose
        // first letters begin some term of the index are analysed (a stem
        // keeps a word's first letters), each such beginning looked up once.
        let mut far = std::collections::HashSet::new();
        for candidate in &near {
            far.extend(one_edit(candidate, false));
        }
        for candidate in one_edit(&lower, false) {
            far.extend(one_edit(&candidate, true));
        }
        let mut begins: std::collections::HashMap<String, bool> = Default::default();
        let mut kept: Vec<String> = far
            .into_iter()
            .filter(|c| {
                let head = &c[..c.len().min(PREFIX)];
                *begins
                    .entry(head.to_string())
                    .or_insert_with(|| words.has_prefix(head))
            })
            .collect();
        kept.sort();
        best(kept)
    })?;
    Some(match word.chars().next() {
        Some(first) if first.is_ascii_uppercase() => {
            let mut capital = found[..1].to_ascii_uppercase();
            capital.push_str(&found[1..]);
            capital
        }
        _ => found,
    })
}

/// Every spelling one edit from `word` (lower-case ASCII) that keeps its
/// first letter (people seldom get that one wrong, and a changed first
/// letter turns real words into others: `uncultured` into `cultured`):
/// swaps and drops, and with `all` also changed and added letters.
fn one_edit(word: &str, all: bool) -> Vec<String> {
    let w = word.as_bytes();
    let mut out = Vec::new();
    let make = |bytes: Vec<u8>| String::from_utf8(bytes).expect("ASCII");
    for i in 1..w.len().saturating_sub(1) {
        if w[i] != w[i + 1] {
            let mut s = w.to_vec();
            s.swap(i, i + 1);
            out.push(make(s));
        }
    }
    for i in 1..w.len() {
        let mut s = w.to_vec();
        s.remove(i);
        out.push(make(s));
    }
    if all {
        for i in 1..=w.len() {
            for &c in LETTERS {
                let mut s = w.to_vec();
                s.insert(i, c);
                out.push(make(s));
            }
        }
        for i in 1..w.len() {
            for &c in LETTERS {
                if c != w[i] {
                    let mut s = w.to_vec();
                    s[i] = c;
                    out.push(make(s));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words as records write them, and how many records hold each.
    struct Written(Vec<(&'static str, u64)>);

    impl Vocabulary for Written {
        fn documents(&self, term: &str) -> u64 {
            self.0
                .iter()
                .filter(|(w, _)| Analysis::CURRENT.term(w).as_deref() == Some(term))
                .map(|(_, n)| n)
                .sum()
        }

        fn written(&self, _: &str, word: &str) -> bool {
            self.0.iter().any(|(w, _)| *w == word)
        }

        fn is_word(&self, word: &str) -> bool {
            ["actor", "factor"].contains(&word)
        }

        fn has_prefix(&self, prefix: &str) -> bool {
            self.0
                .iter()
                .filter_map(|(w, _)| Analysis::CURRENT.term(w))
                .any(|t| t.starts_with(prefix))
        }
    }

    fn vocabulary(words: &[(&'static str, u64)]) -> Written {
        Written(words.to_vec())
    }

    #[test]
    fn unknown_words_take_the_nearest_held_spelling() {
        let known = vocabulary(&[("speculative", 20), ("decoding", 30), ("gamma", 9)]);
        let spelled = correct("speculaitve decodng", &known);
        assert_eq!(spelled.text, "speculative decoding");
        assert_eq!(spelled.changes.len(), 2);
        // Two edits in a long word: a swap and a dropped letter.
        assert_eq!(correct("speclaitve", &known).text, "speculative");
        // Known words, short words, names and quoted or excluded words stay.
        for kept in [
            "speculative decoding",
            "decodn",
            "Qwen3 gamms",
            "LoRA",
            "\"decodng\"",
            "-decodng",
            "with Decodng",
        ] {
            let spelled = correct(kept, &known);
            assert!(
                spelled.changes.iter().all(|(w, _)| w == "gamms") || spelled.changes.is_empty(),
                "{kept}: {spelled:?}"
            );
        }
        assert_eq!(correct("Decodng", &known).text, "Decoding");
        assert_eq!(
            correct("Fast Speculaitve Decodng", &known).text,
            "Fast Speculative Decoding"
        );
        assert_eq!(correct("decodng, fast", &known).text, "decoding, fast");
    }

    #[test]
    fn a_spelling_no_record_writes_is_no_correction() {
        // `mixtural` shares `mixture`'s stem, but no record writes it.
        let known = vocabulary(&[("mixture", 40), ("mixtures", 3)]);
        assert!(correct("mixtral", &known).changes.is_empty());
        assert_eq!(correct("mixtre", &known).text, "mixture");
        // A real word the index lacks is not a typo of one it has.
        let known = vocabulary(&[("factor", 40), ("cultured", 9)]);
        assert!(correct("actor", &known).changes.is_empty());
        // Nor is the first letter changed.
        assert!(correct("uncultured", &known).changes.is_empty());
        assert!(correct("bactor", &known).changes.is_empty());
    }

    #[test]
    fn a_word_too_far_or_too_short_is_left_as_typed() {
        let known = vocabulary(&[("decoding", 30)]);
        assert!(correct("dcdng", &known).changes.is_empty());
        assert!(
            correct("decdng", &known).changes.is_empty(),
            "two edits, 6 letters"
        );
        assert_eq!(allowed_edits(4), 0);
        assert_eq!(allowed_edits(9), 2);
    }
}
