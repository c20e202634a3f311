//! One request model for every front end. The CLI (clap's flags), the HTTP
//! API (query strings) and MCP (tool arguments) read a search's, a
//! similar's or a feed's options through the same value checks
//! ([`values`]) into one [`SearchOptions`], which is checked as a whole
//! once ([`checked`]). A refusal is a [`BadParam`]: the parameter by
//! its canonical name (`min_score`) and what is wrong, worded for each
//! front end by [`Front`] (`--min-score` on the command line, `min_score`
//! over HTTP and MCP).
//!
//! What one request may ask for is capped here too: [`MAX_K`] hits over
//! HTTP, [`MAX_QUERY_BYTES`] of query, [`MAX_IDS`] ids; MCP caps `k` lower
//! still (see [`crate::mcp`]). The CLI, run by the reader on their own
//! machine, has no cap on `-k`.

mod params;
pub mod values;

pub use params::Params;

use crate::search::SearchOptions;

/// The most hits one HTTP request may ask for.
pub const MAX_K: usize = 1000;
/// The longest query text one request may send, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// The most ids (or values of one repeatable parameter) one request may name.
pub const MAX_IDS: usize = 100;

/// The filters [`Params::options_within`] reads, by their parameter names
/// (the CLI's long flags without dashes).
pub const FILTERS: [&str; 7] = [
    "since",
    "until",
    "in",
    "listed_since",
    "listed_until",
    "author",
    "category",
];

/// `known` and the [`FILTERS`]: the parameters a ranking route takes.
pub fn with_filters(known: &[&'static str]) -> Vec<&'static str> {
    known.iter().chain(FILTERS.iter()).copied().collect()
}

/// Which front end a request came through: how its parameters are named
/// back to the one who sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    /// `papers search --min-score 0.3`.
    Cli,
    /// `GET /api/search?min_score=0.3`.
    Http,
    /// `tools/call search {"min_score": 0.3}`.
    Mcp,
}

impl Front {
    /// A parameter's name as this front end spells it.
    pub fn name(self, parameter: &str) -> String {
        match (self, parameter) {
            (Front::Cli, "k") => "-k".into(),
            (Front::Cli, "q" | "query") => "QUERY".into(),
            (Front::Cli, "id" | "ids") => "ID".into(),
            (Front::Cli, name) => format!("--{}", name.replace('_', "-")),
            (_, name) => name.into(),
        }
    }

    /// The library's error in this front end's words: an argument's name
    /// (`ID`, as the library names the ids of `tag` and `untag` for the
    /// CLI) as this front end spells that parameter (`ids`).
    pub fn error(self, error: &crate::error::Error) -> String {
        match error {
            crate::error::Error::InvalidArgument { name, reason } => {
                let parameter = if name == "ID" { "ids" } else { name.as_str() };
                format!("{}: {}", self.name(parameter), self.words(reason))
            }
            other => self.words(&other.to_string()),
        }
    }

    /// A message written with the CLI's flags (as the library words its
    /// errors), in this front end's words: each flag (`--min-score`)
    /// becomes its parameter (`min_score`), `--limit` becomes `k`, and a
    /// flag given a value (`--min-score 0`, `--since DATE`) reads as the
    /// parameter does (`min_score=0`, `since=DATE`).
    pub fn words(self, text: &str) -> String {
        if self == Front::Cli {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("--") {
            out.push_str(&rest[..at]);
            let flag = &rest[at + 2..];
            let len = flag
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(flag.len());
            let name = &flag[..len];
            match name {
                "" => out.push_str("--"),
                _ if !name.starts_with(|c: char| c.is_ascii_alphabetic()) => out.push_str("--"),
                "limit" => out.push('k'),
                name => out.push_str(&name.replace('-', "_")),
            }
            rest = &flag[len..];
            // A value after the flag: a number or a placeholder (`DATE`).
            if let Some(value) = rest.strip_prefix(' ') {
                let token = value.split([' ', ',', ';', ')']).next().unwrap_or_default();
                let is_value = token.starts_with(|c: char| c.is_ascii_digit())
                    || (token.len() > 1 && token.chars().all(|c| c.is_ascii_uppercase()));
                if is_value && !name.is_empty() {
                    out.push('=');
                    rest = value;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// A parameter that is missing or wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadParam {
    /// The parameter's canonical name (`min_score`).
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

    /// The complaint in one line, in `front`'s words.
    pub fn worded(&self, front: Front) -> String {
        format!(
            "{}: {}",
            front.name(&self.parameter),
            front.words(&self.message)
        )
    }
}

impl std::fmt::Display for BadParam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.worded(Front::Cli))
    }
}

impl std::error::Error for BadParam {}

/// A bad parameter as the library's error: [`crate::error::Error::InvalidArgument`],
/// which reads the same (`name: reason`).
impl From<BadParam> for crate::error::Error {
    fn from(bad: BadParam) -> crate::error::Error {
        crate::error::Error::InvalidArgument {
            name: bad.parameter,
            reason: bad.message,
        }
    }
}

/// The ranking options of `search` and `similar` as a front end read them
/// (each value already checked on its own, [`values`]), checked as a
/// whole: a date range must hold a day.
pub fn checked(options: SearchOptions) -> Result<SearchOptions, BadParam> {
    for (from, to, range) in [
        ("since", "until", &options.dates),
        ("listed_since", "listed_until", &options.scope.listed),
    ] {
        if let (Some(a), Some(b)) = (range.since, range.until) {
            if a > b {
                return Err(BadParam::new(
                    from,
                    format!(
                        "{} is after --{} {}: no day is in that range",
                        crate::paper::format_date(a),
                        to.replace('_', "-"),
                        crate::paper::format_date(b)
                    ),
                ));
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::DateRange;

    #[test]
    fn each_front_end_names_parameters_its_own_way() {
        let bad = BadParam::new("min_score", "'2' is not a number from 0 to 1");
        assert_eq!(
            bad.worded(Front::Cli),
            "--min-score: '2' is not a number from 0 to 1"
        );
        assert_eq!(
            bad.worded(Front::Mcp),
            "min_score: '2' is not a number from 0 to 1"
        );
        assert_eq!(
            Front::Http
                .words("use --min-score 0, or --limit 5 --json; --since DATE or --from FILE"),
            "use min_score=0, or k=5 json; since=DATE or from=FILE"
        );
        let range = SearchOptions {
            dates: DateRange {
                since: Some(20240302),
                until: Some(20240301),
            },
            ..Default::default()
        };
        let bad = checked(range).unwrap_err();
        assert_eq!(bad.parameter, "since");
        assert_eq!(
            bad.worded(Front::Http),
            "since: 2024-03-02 is after until=2024-03-01: no day is in that range"
        );
    }
}
