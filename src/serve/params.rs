//! The HTTP API's query parameters, checked: every request's parameters are
//! parsed here into the same options the CLI's flags give, and a bad one is
//! a [`BadParam`] naming it (a 400 with a JSON error).

use std::collections::HashMap;

use crate::search::{DateRange, Mode, Scope, SearchOptions, Strategy};

/// The most hits one request may ask for.
pub const MAX_K: usize = 1000;
/// The longest query text one request may send, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// The most ids one `similar` request may name.
pub const MAX_IDS: usize = 100;

/// A message in the words of the HTTP API and MCP: each CLI flag (`--min-score`) is named as
/// its query parameter (`min_score`), and `--json` is dropped (every answer
/// is JSON).
pub fn parameter_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let flag = &rest[at + 2..];
        let len = flag
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(flag.len());
        let name = &flag[..len];
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            out.push_str("--");
        } else {
            out.push_str(&name.replace('-', "_"));
        }
        rest = &flag[len..];
    }
    out.push_str(rest);
    out
}

/// A parameter that is missing or wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadParam {
    /// The parameter's name.
    pub parameter: String,
    /// What is wrong with it.
    pub message: String,
}

impl BadParam {
    /// A complaint about `parameter`.
    pub fn new(parameter: &str, message: impl Into<String>) -> BadParam {
        BadParam {
            parameter: parameter.to_string(),
            message: message.into(),
        }
    }
}

/// A request's parameters: every value of every name, in order.
#[derive(Debug, Default)]
pub struct Params {
    values: HashMap<String, Vec<String>>,
}

impl Params {
    /// Parses a URL query string (`a=1&b=2&b=3`).
    pub fn parse(query: Option<&str>) -> Params {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            values
                .entry(name.into_owned())
                .or_default()
                .push(value.into_owned());
        }
        Params { values }
    }

    /// Refuses names outside `known`, so a typo is not silently ignored.
    pub fn only(&self, known: &[&str]) -> Result<(), BadParam> {
        match self.values.keys().find(|k| !known.contains(&k.as_str())) {
            Some(name) if known.is_empty() => Err(BadParam::new(
                name,
                "unknown parameter (this route takes none)",
            )),
            Some(name) => Err(BadParam::new(
                name,
                format!("unknown parameter (known: {})", known.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> &[String] {
        self.values.get(name).map_or(&[], Vec::as_slice)
    }

    /// The one value of `name`, if given; given twice is an error.
    pub fn one(&self, name: &str) -> Result<Option<&str>, BadParam> {
        match self.all(name) {
            [] => Ok(None),
            [value] => Ok(Some(value.as_str())),
            _ => Err(BadParam::new(name, "given more than once")),
        }
    }

    /// The query text `q`: required, not blank, at most [`MAX_QUERY_BYTES`].
    pub fn query(&self) -> Result<String, BadParam> {
        let q = self
            .one("q")?
            .ok_or_else(|| BadParam::new("q", "missing: the text to search for"))?;
        if q.len() > MAX_QUERY_BYTES {
            return Err(BadParam::new(
                "q",
                format!("{} bytes; at most {MAX_QUERY_BYTES}", q.len()),
            ));
        }
        if q.trim().is_empty() {
            return Err(BadParam::new("q", "empty: give words to search for"));
        }
        Ok(q.to_string())
    }

    /// A whole number from `range`, or `default`.
    pub fn number(
        &self,
        name: &str,
        default: usize,
        range: std::ops::RangeInclusive<usize>,
    ) -> Result<usize, BadParam> {
        let Some(text) = self.one(name)? else {
            return Ok(default);
        };
        match text.trim().parse::<usize>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => Err(BadParam::new(
                name,
                format!(
                    "'{text}' is not a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )),
        }
    }

    /// A number from `low` to `high`, if given.
    pub fn real(&self, name: &str, low: f32, high: f32) -> Result<Option<f32>, BadParam> {
        let Some(text) = self.one(name)? else {
            return Ok(None);
        };
        match text.trim().parse::<f32>() {
            Ok(x) if (low..=high).contains(&x) => Ok(Some(x)),
            _ => Err(BadParam::new(
                name,
                format!("'{text}' is not a number from {low} to {high}"),
            )),
        }
    }

    /// A `YYYY-MM-DD` date that is a real day, if given.
    pub fn date(&self, name: &str) -> Result<Option<u32>, BadParam> {
        let Some(text) = self.one(name)? else {
            return Ok(None);
        };
        crate::paper::parse_date(text)
            .filter(|_| text.len() == 10)
            .map(Some)
            .ok_or_else(|| {
                BadParam::new(
                    name,
                    format!("'{text}' is not a date of the form YYYY-MM-DD (a real day)"),
                )
            })
    }

    /// A boolean flag: absent, `1`/`true`, or `0`/`false`.
    pub fn flag(&self, name: &str) -> Result<bool, BadParam> {
        match self.one(name)? {
            None | Some("0") | Some("false") => Ok(false),
            Some("") | Some("1") | Some("true") => Ok(true),
            Some(other) => Err(BadParam::new(
                name,
                format!("'{other}' is not true or false"),
            )),
        }
    }

    /// What the CLI's ranking flags give: `k`, `min_score`, `strategy`,
    /// `since`, `until`, and `mode` (for text queries).
    pub fn options(&self) -> Result<SearchOptions, BadParam> {
        let mode = match self.one("mode")? {
            None | Some("hybrid") => Mode::Hybrid,
            Some("semantic") => Mode::Semantic,
            Some("lexical") => Mode::Lexical,
            Some(other) => {
                return Err(BadParam::new(
                    "mode",
                    format!("'{other}' is not one of hybrid, semantic, lexical"),
                ))
            }
        };
        let strategy = match self.one("strategy")? {
            None | Some("auto") => Strategy::Auto,
            Some("exact") => Strategy::Exact,
            Some("int8") => Strategy::Quantized,
            Some("binary") => Strategy::Binary,
            Some("graph") => Strategy::Graph,
            Some(other) => {
                return Err(BadParam::new(
                    "strategy",
                    format!("'{other}' is not one of auto, exact, int8, binary, graph"),
                ))
            }
        };
        let dates = DateRange {
            since: self.date("since")?,
            until: self.date("until")?,
        };
        if let (Some(since), Some(until)) = (dates.since, dates.until) {
            if since > until {
                return Err(BadParam::new("since", "is after until"));
            }
        }
        let listed = DateRange {
            since: self.date("listed_since")?,
            until: self.date("listed_until")?,
        };
        if let (Some(since), Some(until)) = (listed.since, listed.until) {
            if since > until {
                return Err(BadParam::new("listed_since", "is after listed_until"));
            }
        }
        let mut scope = Scope {
            sources: Vec::new(),
            listed,
            authors: self.all("author").to_vec(),
            categories: self.all("category").to_vec(),
        };
        // An input or a day: told apart against the index.
        scope.sources.extend(self.all("in").iter().cloned());
        Ok(SearchOptions {
            limit: self.number("k", 10, 1..=MAX_K)?,
            min_score: self.real("min_score", 0.0, 1.0)?,
            strategy,
            mode,
            dates,
            scope,
        })
    }

    /// The ids of `name` (at least one when `required`, at most [`MAX_IDS`]).
    pub fn ids(&self, name: &str, required: bool) -> Result<Vec<String>, BadParam> {
        let ids = self.all(name);
        if required && ids.is_empty() {
            return Err(BadParam::new(name, "missing: give at least one paper id"));
        }
        if ids.len() > MAX_IDS {
            return Err(BadParam::new(
                name,
                format!("{} ids; at most {MAX_IDS}", ids.len()),
            ));
        }
        Ok(ids.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_search_flag_is_a_parameter() {
        let p = Params::parse(Some(
            "q=a+b&k=3&mode=lexical&since=2024-02-29&until=2024-03-01&min_score=0.5&strategy=int8",
        ));
        let o = p.options().unwrap();
        assert_eq!(p.query().unwrap(), "a b");
        assert_eq!(
            (o.limit, o.mode, o.strategy),
            (3, Mode::Lexical, Strategy::Quantized)
        );
        assert_eq!(o.min_score, Some(0.5));
        assert_eq!(o.dates.since, Some(20240229));
    }

    #[test]
    fn bad_values_name_their_parameter() {
        let bad = |q: &str| Params::parse(Some(q)).options().unwrap_err().parameter;
        assert_eq!(bad("k=0"), "k");
        assert_eq!(bad("k=1001"), "k");
        assert_eq!(bad("min_score=NaN"), "min_score");
        assert_eq!(bad("since=2023-02-29"), "since");
        assert_eq!(bad("since=2024-03-02&until=2024-03-01"), "since");
        assert_eq!(bad("mode=fuzzy"), "mode");
        assert_eq!(bad("k=1&k=2"), "k");
        let p = Params::parse(Some("q=x&limit=3"));
        assert_eq!(p.only(&["q", "k"]).unwrap_err().parameter, "limit");
    }
}
