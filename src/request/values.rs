//! One parameter's value, read the same way whichever front end it came
//! through: clap's value parsers call these for the CLI's flags, and
//! [`super::Params`] for the HTTP API's query strings and MCP's tool
//! arguments. A refusal is a [`BadParam`] naming the parameter.

use super::{BadParam, MAX_QUERY_BYTES};
use crate::search::{Mode, Strategy};

/// A `YYYY-MM-DD` date that is a real day, as `YYYYMMDD`.
pub fn date(name: &str, text: &str) -> Result<u32, BadParam> {
    crate::paper::parse_date(text)
        .filter(|_| text.len() == 10)
        .ok_or_else(|| {
            BadParam::new(
                name,
                format!("'{text}' is not a date of the form YYYY-MM-DD (a real day)"),
            )
        })
}

/// A whole number within `range`.
pub fn count(
    name: &str,
    text: &str,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, BadParam> {
    match text.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ if *range.end() == usize::MAX => Err(BadParam::new(
            name,
            format!(
                "'{text}' is not a whole number of at least {}",
                range.start()
            ),
        )),
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

/// A number from `low` to `high`.
pub fn real(name: &str, text: &str, low: f32, high: f32) -> Result<f32, BadParam> {
    match text.trim().parse::<f32>() {
        Ok(x) if (low..=high).contains(&x) => Ok(x),
        _ => Err(BadParam::new(
            name,
            format!("'{text}' is not a number from {low} to {high}"),
        )),
    }
}

/// A search mode by name.
pub fn mode(text: &str) -> Result<Mode, BadParam> {
    match text {
        "hybrid" => Ok(Mode::Hybrid),
        "semantic" => Ok(Mode::Semantic),
        "lexical" => Ok(Mode::Lexical),
        other => Err(BadParam::new(
            "mode",
            format!("'{other}' is not one of hybrid, semantic, lexical"),
        )),
    }
}

/// A candidate strategy by name.
pub fn strategy(text: &str) -> Result<Strategy, BadParam> {
    match text {
        "auto" => Ok(Strategy::Auto),
        "exact" => Ok(Strategy::Exact),
        "int8" => Ok(Strategy::Quantized),
        "binary" => Ok(Strategy::Binary),
        "graph" => Ok(Strategy::Graph),
        other => Err(BadParam::new(
            "strategy",
            format!("'{other}' is not one of auto, exact, int8, binary, graph"),
        )),
    }
}

/// A query's text: not blank, at most [`MAX_QUERY_BYTES`].
pub fn query(name: &str, text: &str) -> Result<(), BadParam> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(BadParam::new(
            name,
            format!("{} bytes; at most {MAX_QUERY_BYTES}", text.len()),
        ));
    }
    if text.trim().is_empty() {
        return Err(BadParam::new(name, "empty: give words to search for"));
    }
    Ok(())
}
