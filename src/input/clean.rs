//! The rules every input format shares: the text of an abstract
//! ([`clean`]), author names and lists. arXiv ids are normalised where a
//! record is read, by [`crate::id::arxiv_id`].

use serde_json::Value;

/// Author names from a list of strings or `{name}` objects, or from one
/// string (`"A. One, B. Two and C. Three"`).
pub fn authors(value: Option<&Value>) -> Vec<String> {
    let names: Vec<String> = match value {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|a| a.get("name").unwrap_or(a).as_str())
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) => s
            .replace(" and ", ", ")
            .split(',')
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .map(|n| n.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|n| !n.is_empty())
        .collect()
}

/// A list of strings, or one string split on white space.
pub fn list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// LaTeX commands whose argument is the text itself.
const TEXT_COMMANDS: &[&str] = &[
    "textbf",
    "textit",
    "emph",
    "texttt",
    "textsc",
    "textrm",
    "textsf",
    "underline",
    "mathrm",
    "mathbf",
    "mathit",
    "mathcal",
    "mathbb",
    "mathsf",
    "mathtt",
    "boldsymbol",
    "text",
    "url",
];

/// The text of a raw abstract as papers embeds, matches and shows it:
/// white space (arXiv's hard wraps) collapsed to single spaces; math
/// delimiters (`$`, `$$`, `\(`, `\)`) dropped with their content kept;
/// `\textbf{x}`, `\emph{x}` and the like replaced by `x`; escaped
/// characters (`\%`, `\&`, `\_`, `\$`, `\#`) unescaped; `~` a space.
/// Other commands (`\alpha`) are left as they are, since their names are
/// what a reader would type. Text without LaTeX comes back only
/// re-spaced.
pub fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {}
            '~' => out.push(' '),
            '\\' => match chars.peek().copied() {
                Some(e @ ('%' | '&' | '_' | '$' | '#' | '{' | '}')) => {
                    chars.next();
                    out.push(e);
                }
                Some('(' | ')' | '[' | ']') => {
                    chars.next();
                }
                Some(a) if a.is_ascii_alphabetic() => {
                    let mut name = String::new();
                    while let Some(&a) = chars.peek().filter(|a| a.is_ascii_alphabetic()) {
                        name.push(a);
                        chars.next();
                    }
                    if TEXT_COMMANDS.contains(&name.as_str()) && chars.peek() == Some(&'{') {
                        chars.next();
                        // The argument, braces balanced; it may hold more LaTeX.
                        let mut depth = 1;
                        let mut argument = String::new();
                        for a in chars.by_ref() {
                            match a {
                                '{' => depth += 1,
                                '}' => depth -= 1,
                                _ => {}
                            }
                            if depth == 0 {
                                break;
                            }
                            argument.push(a);
                        }
                        out.push_str(&clean(&argument));
                    } else {
                        out.push('\\');
                        out.push_str(&name);
                    }
                }
                _ => out.push('\\'),
            },
            other => out.push(other),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latex_is_cleaned_and_plain_text_only_respaced() {
        assert_eq!(
            clean("We get \\textbf{50\\%} better $F_1$ on\n  \\emph{long \\textit{hard}} tasks~\\cite"),
            "We get 50% better F_1 on long hard tasks \\cite"
        );
        assert_eq!(clean("\\(\\alpha\\) and $$x$$"), "\\alpha and x");
        assert_eq!(clean("Plain  text.\n"), "Plain text.");
        assert_eq!(clean("unbalanced \\emph{oops"), "unbalanced oops");
    }
}
