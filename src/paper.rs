//! A paper is one unique abstract. Its [`PaperId`] is derived from its text
//! alone, so ids are stable across runs, machines and file order, and the same
//! abstract seen in several dumps is one paper with several [`Source`]s.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::error::Error;

/// Bytes of the SHA-256 kept in an id: 64 bits, 16 hex digits. With a
/// million papers the chance of any collision is below one in 30 million.
const ID_BYTES: usize = 8;

/// The shortest id prefix accepted on the command line.
pub const MIN_PREFIX: usize = 4;

/// The number of hex digits shown for an id in human output.
pub const SHORT_LEN: usize = 8;

/// A content hash: the first 8 bytes of the SHA-256 of a paper's text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PaperId([u8; ID_BYTES]);

impl PaperId {
    /// The id of a paper with this (already normalised) text.
    pub fn of(text: &str) -> Self {
        let digest = Sha256::digest(text.as_bytes());
        let mut bytes = [0u8; ID_BYTES];
        bytes.copy_from_slice(&digest[..ID_BYTES]);
        PaperId(bytes)
    }

    /// The full id as 16 lower-case hex digits.
    pub fn hex(&self) -> String {
        self.to_string()
    }

    /// The abbreviated id shown in tables, like git's short hashes.
    pub fn short(&self) -> String {
        self.hex()[..SHORT_LEN].to_string()
    }
}

impl fmt::Display for PaperId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for PaperId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PaperId({self})")
    }
}

impl FromStr for PaperId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let invalid = |reason: &str| Error::InvalidId {
            id: s.to_string(),
            reason: reason.to_string(),
        };
        if s.len() != ID_BYTES * 2 {
            return Err(invalid("expected 16 hex digits"));
        }
        let mut bytes = [0u8; ID_BYTES];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
                .map_err(|_| invalid("expected 16 hex digits"))?;
        }
        Ok(PaperId(bytes))
    }
}

impl Serialize for PaperId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PaperId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Checks that `prefix` can be used to look an id up: hex, and long enough.
pub fn validate_prefix(prefix: &str) -> Result<String, Error> {
    let lower = prefix.trim().to_ascii_lowercase();
    let invalid = |reason: String| Error::InvalidId {
        id: prefix.to_string(),
        reason,
    };
    if !lower.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(invalid(
            "no record has it as its own id or arXiv id, and it is not a hex id \
             (16 hex digits, or a unique prefix of 4 or more)"
                .into(),
        ));
    }
    if lower.len() < MIN_PREFIX {
        return Err(invalid(format!("give at least {MIN_PREFIX} hex digits")));
    }
    if lower.len() > ID_BYTES * 2 {
        return Err(invalid("ids have 16 hex digits".into()));
    }
    Ok(lower)
}

/// One place an abstract was seen: a dump file and a paragraph in it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Source {
    /// The dump's file name, for display.
    pub file: String,
    /// The dump's path as it was given or found when indexing.
    pub path: String,
    /// 1-based paragraph number within the dump, header not counted.
    pub paragraph: usize,
}

impl Source {
    /// Whether `given` names the input this was read from: its file name,
    /// its path as recorded, or the same file on disk.
    pub fn named_by(&self, given: &str) -> bool {
        if given == self.file || given == self.path {
            return true;
        }
        match (
            std::fs::canonicalize(given),
            std::fs::canonicalize(&self.path),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

/// What a JSON record (a Hugging Face daily papers entry, a JSON Lines
/// line) says about a paper beyond its abstract.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The arXiv id without version (`2405.01234`), usable wherever an id
    /// is taken.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub arxiv_id: String,
    /// The record's own id when it is not an arXiv id (a BEIR `_id`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_id: String,
    /// The paper's title.
    #[serde(default)]
    pub title: String,
    /// Author names, in order.
    #[serde(default)]
    pub authors: Vec<String>,
    /// arXiv categories, when given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Publication date, `YYYY-MM-DD`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// The day a daily list (Hugging Face's) featured it, `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<String>,
    /// Hugging Face upvotes, when the daily list gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upvotes: Option<u64>,
    /// The paper's code repository (Hugging Face's `githubRepo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<String>,
    /// Keywords (Hugging Face's `ai_keywords`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// A one-sentence summary written by a model (Hugging Face's
    /// `ai_summary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ai_summary: Option<String>,
    /// The abstract as the input gave it, when cleaning (white space,
    /// LaTeX) changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
}

pub use crate::date::{format as format_date, parse as parse_date};

impl Meta {
    /// The publication date as a number `YYYYMMDD`, for range filters.
    pub fn date(&self) -> Option<u32> {
        self.published.as_deref().and_then(parse_date)
    }
}

/// One unique abstract and everywhere it was seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Paper {
    /// Content hash of `text`.
    pub id: PaperId,
    /// The abstract, normalised: lines trimmed and joined by single spaces.
    pub text: String,
    /// Every place the abstract was seen, sorted.
    pub sources: Vec<Source>,
    /// Title, authors, date and arXiv id, when a JSON dump gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Paper {
    /// A paper with this text, seen at `source`.
    pub fn new(text: String, source: Source) -> Self {
        Paper {
            id: PaperId::of(&text),
            text,
            sources: vec![source],
            meta: None,
        }
    }

    /// Merges what another sighting of this abstract knows: its sources,
    /// and its metadata when this record has none. Returns how many
    /// sources were new.
    pub fn merge(&mut self, other: Paper) -> usize {
        if self.meta.is_none() {
            self.meta = other.meta;
        }
        self.add_sources(other.sources)
    }

    /// The abstract as the input gave it (before white space and LaTeX
    /// were cleaned).
    pub fn original_text(&self) -> &str {
        self.meta
            .as_ref()
            .and_then(|m| m.original.as_deref())
            .unwrap_or(&self.text)
    }

    /// The arXiv id, when the record has one.
    pub fn arxiv_id(&self) -> Option<&str> {
        self.meta
            .as_ref()
            .map(|m| m.arxiv_id.as_str())
            .filter(|id| !id.is_empty())
    }

    /// What the model embeds: the title and the abstract together when
    /// there is a title (as MTEB embeds `title + " " + text`), else the
    /// abstract.
    pub fn embed_text(&self) -> std::borrow::Cow<'_, str> {
        let title = self.meta.as_ref().map_or("", |m| m.title.as_str());
        embed_text(title, &self.text)
    }

    /// The publication date as `YYYYMMDD`, when known.
    pub fn date(&self) -> Option<u32> {
        self.meta.as_ref().and_then(Meta::date)
    }

    /// Records more places this abstract was seen, keeping them sorted and
    /// unique. Returns how many were new.
    pub fn add_sources(&mut self, sources: impl IntoIterator<Item = Source>) -> usize {
        let before = self.sources.len();
        self.sources.extend(sources);
        self.sources.sort();
        self.sources.dedup();
        self.sources.len() - before
    }

    /// The title when known, else the abstract's [`key_sentence`], whole:
    /// what a table wraps to its width.
    pub fn title_or_key_sentence(&self) -> &str {
        match &self.meta {
            Some(meta) if !meta.title.is_empty() => &meta.title,
            _ => key_sentence(&self.text),
        }
    }

    /// A short display title: the real title when known, else the
    /// abstract's [`key_sentence`], cut on a word boundary.
    pub fn headline(&self) -> String {
        match &self.meta {
            Some(meta) if !meta.title.is_empty() => headline(&meta.title, HEADLINE_LEN),
            _ => headline(key_sentence(&self.text), HEADLINE_LEN),
        }
    }
}

/// Longest headline in characters, ellipsis included.
const HEADLINE_LEN: usize = 100;

/// Words after which a period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "al.", "etc.", "vs.", "cf.", "Fig.", "Eq.", "approx.",
];

/// The first sentence of `text`, at most `max` characters, cut on a word
/// boundary with an ellipsis when it is longer.
pub fn headline(text: &str, max: usize) -> String {
    let sentence = first_sentence(text);
    if sentence.chars().count() <= max {
        return sentence.to_string();
    }
    let limit = sentence
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(sentence.len(), |(i, _)| i);
    let cut = sentence[..limit]
        .rfind(' ')
        .filter(|&i| i > 0)
        .unwrap_or(limit);
    format!(
        "{}…",
        sentence[..cut].trim_end_matches([',', ';', ':', ' '])
    )
}

/// Words that open the sentence of an abstract saying what the paper does
/// ("We propose X, ..."), checked on its first words.
const CONTRIBUTION: &[&str] = &[
    "we propose",
    "we present",
    "we introduce",
    "we develop",
    "we design",
    "this paper proposes",
    "this paper presents",
    "this paper introduces",
    "this work proposes",
    "this work presents",
    "this work introduces",
    "in this paper, we",
    "in this work, we",
    "here, we",
    "here we",
];

/// The sentence of an abstract without a title that reads most like one:
/// among the first four, the first that says what the paper does ("We
/// propose X, ...", also after an opening clause: "Motivated by Y, we
/// introduce X"), else the first that is not [`boilerplate`], else the
/// first. Abstracts open with context ("Large language models have ...")
/// more often than with their subject.
pub fn key_sentence(text: &str) -> &str {
    let all = sentences(text);
    let says_what = |s: &&&str| {
        let start: String = s.chars().take(160).collect::<String>().to_lowercase();
        CONTRIBUTION.iter().any(|cue| {
            start.starts_with(cue)
                || start
                    .match_indices(cue)
                    .any(|(i, _)| start[..i].trim_end().ends_with(','))
        })
    };
    all.iter()
        .take(4)
        .find(says_what)
        .or_else(|| all.iter().find(|s| !boilerplate(s)))
        .or(all.first())
        .copied()
        .unwrap_or(text)
}

/// Openings of sentences about the paper's artefacts or venue rather than
/// its subject ("Code is available at ...", "We release two variants").
const BOILERPLATE: &[&str] = &[
    "code ",
    "our code",
    "the code",
    "code and",
    "data and code",
    "we release",
    "we open-source",
    "we make our",
    "project page",
    "the project page",
    "accepted ",
    "to appear",
    "github",
    "available at",
    "all code",
    "models and code",
];

/// Whether a sentence says nothing of the paper's subject: an artefact or
/// venue note ("Code is available at"), a link, or under four words.
pub fn boilerplate(sentence: &str) -> bool {
    let lower = sentence.trim().to_lowercase();
    BOILERPLATE.iter().any(|cue| lower.starts_with(cue))
        || lower.contains("http://")
        || lower.contains("https://")
        || lower.split_whitespace().count() < 4
}

/// The text up to the first sentence-ending punctuation followed by a space
/// and a capital letter or digit, skipping common abbreviations.
fn first_sentence(text: &str) -> &str {
    &text[..sentence_end(text)]
}

/// The sentences of `text`, split as [`headline`] splits off the first.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let end = sentence_end(rest);
        out.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    out
}

/// The byte length of the first sentence of `text` (all of it when no
/// sentence end is found).
fn sentence_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if !matches!(b, b'.' | b'?' | b'!') || bytes.get(i + 1) != Some(&b' ') {
            continue;
        }
        let next = text[i + 2..].chars().next();
        if !next.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit()) {
            continue;
        }
        let word_start = text[..i].rfind(' ').map_or(0, |s| s + 1);
        let word = &text[word_start..=i];
        if b == b'.' && ABBREVIATIONS.iter().any(|a| a.eq_ignore_ascii_case(word)) {
            continue;
        }
        return i + 1;
    }
    text.len()
}

/// The text the model embeds for a record: `title abstract` when there is
/// a title (as MTEB embeds `title + " " + text`), else the abstract. The
/// one place this rule lives: indexing and `papers embed --records` both
/// call it, so vectors made elsewhere match.
pub fn embed_text<'a>(title: &str, text: &'a str) -> std::borrow::Cow<'a, str> {
    if title.is_empty() {
        text.into()
    } else {
        format!("{title} {text}").into()
    }
}

/// Where a record goes among those kept already, by the one rule every
/// write path follows (reading the inputs, updating the index, importing
/// vectors): a record whose text is kept already is merged into it (its
/// places added); a new version of a kept arXiv paper (same arXiv id,
/// other text) replaces it and takes over the places it was seen
/// ([`Paper::add_sources`]); any other record is new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place<K> {
    /// The same text is kept at `K`.
    Merge(K),
    /// An older version of the same arXiv paper is kept at `K`.
    Replace(K),
    /// Nothing kept is this record.
    New,
}

impl<K> Place<K> {
    /// Where `paper` goes: looked up by its id, then, only when that finds
    /// nothing, by its arXiv id.
    pub fn of<E>(
        paper: &Paper,
        by_id: impl FnOnce(PaperId) -> std::result::Result<Option<K>, E>,
        by_arxiv: impl FnOnce(&str) -> std::result::Result<Option<K>, E>,
    ) -> std::result::Result<Place<K>, E> {
        if let Some(kept) = by_id(paper.id)? {
            return Ok(Place::Merge(kept));
        }
        match paper.arxiv_id() {
            Some(arxiv) => Ok(by_arxiv(arxiv)?.map_or(Place::New, Place::Replace)),
            None => Ok(Place::New),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_hex_and_round_trip() {
        let id = PaperId::of("hello");
        // First 8 bytes of sha256("hello").
        assert_eq!(id.hex(), "2cf24dba5fb0a30e");
        assert_eq!(id.short(), "2cf24dba");
        assert_eq!(id.hex().parse::<PaperId>().unwrap(), id);
        assert!("xyz".parse::<PaperId>().is_err());
    }

    #[test]
    fn prefixes_must_be_hex_and_long_enough() {
        assert_eq!(validate_prefix("2CF2").unwrap(), "2cf2");
        assert!(validate_prefix("2cf").is_err());
        assert!(validate_prefix("2cfz").is_err());
        assert!(validate_prefix("2cf24dba5fb0a30e0").is_err());
    }

    #[test]
    fn an_untitled_paper_is_headed_by_what_it_does() {
        let source = Source {
            file: "d.txt".into(),
            path: "d.txt".into(),
            paragraph: 1,
        };
        let paper = |text: &str| Paper::new(text.into(), source.clone());
        let text = "Large models are costly. Pruning helps. We propose Slim, a pruner. It works.";
        assert_eq!(paper(text).headline(), "We propose Slim, a pruner.");
        let plain = "Large models are costly. Pruning helps.";
        assert_eq!(paper(plain).headline(), "Large models are costly.");
    }

    #[test]
    fn key_sentence_finds_the_subject_after_an_opening_clause() {
        // The shape of a seed abstract whose second sentence headed a
        // search: "we introduce" follows a comma, and "We release" is an
        // artefact note.
        let text = "Motivated by demand for retrieval across modalities, we introduce \
                    Colembed, a unified text-image retriever. We release two model \
                    variants, 1B and 3B. The 3B model is best.";
        assert!(key_sentence(text).starts_with("Motivated by demand"));
        let artefacts = "Code is available at https://example.org/x. We release data. \
                         Sparse attention cuts the cost of long prompts by half.";
        assert_eq!(
            key_sentence(artefacts),
            "Sparse attention cuts the cost of long prompts by half."
        );
        // A contribution cue inside a clause that is not an opening one
        // does not count ("what we propose" is not "we propose").
        let plain = "Models forget what we propose to them. Retrieval fixes that for long inputs.";
        assert_eq!(
            key_sentence(plain),
            "Models forget what we propose to them."
        );
    }

    #[test]
    fn headline_is_first_sentence() {
        let text = "We study X, e.g. Y. It works well. More here.";
        assert_eq!(headline(text, 100), "We study X, e.g. Y.");
    }

    #[test]
    fn sentences_split_like_the_headline() {
        let text = "We study X, e.g. Y. It works well. More here";
        assert_eq!(
            sentences(text),
            ["We study X, e.g. Y.", "It works well.", "More here"]
        );
        assert!(sentences("  ").is_empty());
    }

    #[test]
    fn long_headline_is_cut_on_a_word() {
        let text = "alpha beta gamma delta epsilon zeta eta theta";
        let h = headline(text, 20);
        assert_eq!(h, "alpha beta gamma…");
        assert!(h.chars().count() <= 20);
    }

    #[test]
    fn dates_parse_strictly() {
        assert_eq!(parse_date("2024-05-04"), Some(20240504));
        assert_eq!(parse_date("2024-05-04T12:00:00.000Z"), Some(20240504));
        assert_eq!(parse_date("2024-13-04"), None);
        assert_eq!(parse_date("May 4"), None);
    }

    #[test]
    fn sources_are_deduplicated() {
        let src = |p| Source {
            file: "a.txt".into(),
            path: "d/a.txt".into(),
            paragraph: p,
        };
        let mut paper = Paper::new("text".into(), src(2));
        assert_eq!(paper.add_sources([src(1), src(2)]), 1);
        assert_eq!(paper.sources, vec![src(1), src(2)]);
    }

    #[test]
    fn a_record_is_merged_by_text_and_replaces_an_older_arxiv_version() {
        let src = Source {
            file: "a.txt".into(),
            path: "d/a.txt".into(),
            paragraph: 1,
        };
        let mut v2 = Paper::new("the second version".into(), src.clone());
        v2.meta = Some(Meta {
            arxiv_id: "2405.01234".into(),
            ..Meta::default()
        });
        let plain = Paper::new("no arXiv id".into(), src);
        let none = |_: PaperId| Ok::<_, ()>(None::<u8>);
        // The same text wins over the arXiv id, which is not looked up.
        let place = Place::of(&v2, |_| Ok::<_, ()>(Some(1u8)), |_| unreachable!());
        assert_eq!(place, Ok(Place::Merge(1)));
        assert_eq!(
            Place::of(&v2, none, |a| Ok((a == "2405.01234").then_some(7))),
            Ok(Place::Replace(7))
        );
        assert_eq!(Place::of(&v2, none, |_| Ok(None)), Ok(Place::New));
        assert_eq!(Place::of(&plain, none, |_| unreachable!()), Ok(Place::New));
    }
}
