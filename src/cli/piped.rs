//! Papers named on the command line, else piped in: the ids of a result
//! list on standard input (`papers feed --json | papers mark seen`), as
//! `mark`, `tag`, `untag`, `remove` and `export` read them.

use std::io::IsTerminal;

use anyhow::{bail, Context as _, Result};

/// The papers a command names: `given`, else the ids of a result list
/// piped in; `usage` (how to name them) when neither comes, `verb` (what
/// the command does) when the pipe brings none.
pub(super) fn ids_or_piped(given: Vec<String>, usage: &str, verb: &str) -> Result<Vec<String>> {
    if !given.is_empty() {
        return Ok(given);
    }
    if std::io::stdin().is_terminal() {
        bail!("{usage}");
    }
    let ids = piped_ids()?;
    if ids.is_empty() {
        bail!("nothing to {verb}: no ids were given and none came on standard input");
    }
    Ok(ids)
}

/// The ids of a result list on stdin: each line's `id`, or the line itself.
fn piped_ids() -> Result<Vec<String>> {
    let bytes = papers::limits::read_capped(
        std::io::stdin().lock(),
        papers::limits::PIPED_BYTES,
        || "the result list on standard input".into(),
        "",
    )
    .context("standard input")??;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "standard input: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    let mut ids = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('{') {
            let value: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("standard input: line {}: not JSON", n + 1))?;
            match value.get("id").and_then(|v| v.as_str()) {
                Some(id) => ids.push(id.to_string()),
                None => bail!(
                    "standard input: line {}: a JSON object without \"id\"",
                    n + 1
                ),
            }
        } else {
            ids.push(line.to_string());
        }
    }
    Ok(ids)
}
