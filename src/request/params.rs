//! A request's parameters by name, from a URL query string (the HTTP API)
//! or a JSON object (MCP's tool arguments), read into the options the
//! CLI's flags give through the same checks ([`super::values`],
//! [`super::checked`]).

use std::collections::HashMap;

use serde_json::Value;

use super::{checked, values, BadParam, MAX_IDS};
use crate::feed::{FeedRequest, Scope};
use crate::search::{DateRange, SearchOptions};

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

    /// Reads a JSON object's members (MCP's tool arguments): a string,
    /// number or boolean is one value, an array of them is every value, and
    /// `null` is absent. Anything else names its member.
    pub fn from_json(arguments: &serde_json::Map<String, Value>) -> Result<Params, BadParam> {
        fn scalar(name: &str, value: &Value) -> Result<Option<String>, BadParam> {
            match value {
                Value::Null => Ok(None),
                Value::String(text) => Ok(Some(text.clone())),
                Value::Number(n) => Ok(Some(n.to_string())),
                Value::Bool(b) => Ok(Some(b.to_string())),
                _ => Err(BadParam::new(
                    name,
                    "not a string, a number, a boolean, or a list of them",
                )),
            }
        }
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for (name, value) in arguments {
            let mut all = Vec::new();
            match value {
                Value::Array(items) => {
                    for item in items {
                        all.extend(scalar(name, item)?);
                    }
                }
                value => all.extend(scalar(name, value)?),
            }
            if !all.is_empty() {
                values.insert(name.clone(), all);
            }
        }
        Ok(Params { values })
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

    /// The query text under `name` (`q` on HTTP, `query` on MCP): required,
    /// not blank, at most [`super::MAX_QUERY_BYTES`].
    pub fn query(&self, name: &str) -> Result<String, BadParam> {
        let q = self
            .one(name)?
            .ok_or_else(|| BadParam::new(name, "missing: the text to search for"))?;
        values::query(name, q)?;
        Ok(q.to_string())
    }

    /// A whole number from `range`, or `default`.
    pub fn number(
        &self,
        name: &str,
        default: usize,
        range: std::ops::RangeInclusive<usize>,
    ) -> Result<usize, BadParam> {
        match self.one(name)? {
            None => Ok(default),
            Some(text) => values::count(name, text, range),
        }
    }

    /// A number from `low` to `high`, if given.
    pub fn real(&self, name: &str, low: f32, high: f32) -> Result<Option<f32>, BadParam> {
        self.one(name)?
            .map(|text| values::real(name, text, low, high))
            .transpose()
    }

    /// A `YYYY-MM-DD` date that is a real day, if given.
    pub fn date(&self, name: &str) -> Result<Option<u32>, BadParam> {
        self.one(name)?
            .map(|text| values::date(name, text))
            .transpose()
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

    /// What the CLI's ranking flags give: `k` (from 1 to `max_k`, default
    /// `default_k`), `min_score`, `strict`, `as_typed`, `strategy`, `since`, `until`, `in`,
    /// `listed_since`, `listed_until`, `author`, `category`, and `mode`
    /// (for text queries), checked together as [`super::checked`] checks
    /// the CLI's.
    pub fn options_within(
        &self,
        default_k: usize,
        max_k: usize,
    ) -> Result<SearchOptions, BadParam> {
        checked(SearchOptions {
            limit: self.number("k", default_k, 1..=max_k)?,
            min_score: self.real("min_score", 0.0, 1.0)?,
            strict: self.flag("strict")?,
            as_typed: self.flag("as_typed")?,
            strategy: self
                .one("strategy")?
                .map(values::strategy)
                .transpose()?
                .unwrap_or_default(),
            mode: self
                .one("mode")?
                .map(values::mode)
                .transpose()?
                .unwrap_or_default(),
            dates: DateRange {
                since: self.date("since")?,
                until: self.date("until")?,
            },
            // An input or a day: told apart against the index (see
            // `crate::search::filters`).
            scope: crate::search::Scope {
                sources: self.many("in")?,
                listed: DateRange {
                    since: self.date("listed_since")?,
                    until: self.date("listed_until")?,
                },
                authors: self.many("author")?,
                categories: self.many("category")?,
            },
        })
    }

    /// [`Params::options_within`] with the HTTP API's `k`: 10 by default,
    /// at most [`super::MAX_K`].
    pub fn options(&self) -> Result<SearchOptions, BadParam> {
        self.options_within(10, super::MAX_K)
    }

    /// A feed's request: the tags under the names `tags` (every tag when none), `k`
    /// (from 1 to `max_k`, default `default_k`), `since` (a day) or `from`
    /// (input files) for which papers are new, `must` and `exclude`.
    pub fn feed(
        &self,
        tags: &[&str],
        default_k: usize,
        max_k: usize,
    ) -> Result<FeedRequest, BadParam> {
        let scope = match (self.date("since")?, self.many("from")?) {
            (Some(_), from) if !from.is_empty() => {
                return Err(BadParam::new("from", "give --since or --from, not both"))
            }
            (Some(day), _) => Scope::Since(day),
            (None, from) if !from.is_empty() => Scope::From(from),
            _ => Scope::Inbox,
        };
        Ok(FeedRequest {
            tags: tags
                .iter()
                .map(|name| self.many(name))
                .collect::<Result<Vec<_>, _>>()?
                .concat(),
            scope,
            limit: self.number("k", default_k, 1..=max_k)?,
            must: self.many("must")?,
            exclude: self.many("exclude")?,
        })
    }

    /// Every value of `name`, at most [`MAX_IDS`] of them.
    pub fn many(&self, name: &str) -> Result<Vec<String>, BadParam> {
        self.at_most(name, "values")
    }

    /// The ids of `name` (at least one when `required`, at most [`MAX_IDS`]).
    pub fn ids(&self, name: &str, required: bool) -> Result<Vec<String>, BadParam> {
        let ids = self.at_most(name, "ids")?;
        if required && ids.is_empty() {
            return Err(BadParam::new(name, "missing: give at least one paper id"));
        }
        Ok(ids)
    }

    fn at_most(&self, name: &str, what: &str) -> Result<Vec<String>, BadParam> {
        let values = self.all(name);
        if values.len() > MAX_IDS {
            return Err(BadParam::new(
                name,
                format!("{} {what}; at most {MAX_IDS}", values.len()),
            ));
        }
        Ok(values.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Mode, Strategy};

    #[test]
    fn every_search_flag_is_a_parameter() {
        let p = Params::parse(Some(
            "q=a+b&k=3&mode=lexical&since=2024-02-29&until=2024-03-01&min_score=0.5&strategy=int8",
        ));
        let o = p.options().unwrap();
        assert_eq!(p.query("q").unwrap(), "a b");
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

    #[test]
    fn json_arguments_are_parameters_too() {
        let arguments = serde_json::json!({
            "query": "rope", "k": 5, "author": ["Su", "Lu"], "since": null, "mode": "semantic"
        });
        let p = Params::from_json(arguments.as_object().unwrap()).unwrap();
        let o = p.options_within(10, 50).unwrap();
        assert_eq!((o.limit, o.mode), (5, Mode::Semantic));
        assert_eq!(o.scope.authors, ["Su", "Lu"]);
        assert_eq!(o.dates.since, None);
        let nested = serde_json::json!({"k": {"n": 1}});
        let bad = Params::from_json(nested.as_object().unwrap()).unwrap_err();
        assert_eq!(bad.parameter, "k");
        let p = Params::from_json(serde_json::json!({"k": 51}).as_object().unwrap()).unwrap();
        assert_eq!(p.options_within(10, 50).unwrap_err().parameter, "k");
    }
}
