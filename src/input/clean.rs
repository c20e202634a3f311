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

/// Symbol commands shown as the character they print (`7.68\times` reads
/// `7.68×`); spacing commands (`\,`, `\;`) are handled where they are met.
const SYMBOLS: &[(&str, &str)] = &[
    ("times", "×"),
    ("approx", "≈"),
    ("sim", "~"),
    ("simeq", "≃"),
    ("leq", "≤"),
    ("le", "≤"),
    ("geq", "≥"),
    ("ge", "≥"),
    ("neq", "≠"),
    ("ne", "≠"),
    ("pm", "±"),
    ("mp", "∓"),
    ("cdot", "·"),
    ("div", "÷"),
    ("rightarrow", "→"),
    ("to", "→"),
    ("leftarrow", "←"),
    ("Rightarrow", "⇒"),
    ("leftrightarrow", "↔"),
    ("infty", "∞"),
    ("ldots", "…"),
    ("dots", "…"),
    ("cdots", "⋯"),
    ("degree", "°"),
    ("circ", "°"),
    ("textasciitilde", "~"),
    ("textdollar", "$"),
    ("percent", "%"),
];

/// The text of a raw abstract as papers embeds, matches and shows it:
/// white space (arXiv's hard wraps) collapsed to single spaces; inline
/// maths (`$x$`, `$$x$$`, `\(x\)`) loses its delimiters and keeps its
/// content; `\textbf{x}`, `\emph{x}` and the like become `x`; symbol
/// commands become their character (`\times` is `×`, `\leq` is `≤`); escaped
/// characters (`\%`, `\&`, `\_`, `\$`, `\#`) are unescaped; a `~` tie
/// between two words is a space. Other commands (`\alpha`) are left as
/// they are, since their names are what a reader would type. Text without
/// LaTeX comes back only re-spaced.
///
/// A `$` is maths only when it pairs up as pandoc's rule has it: the
/// opening one has a non-space after it, and the next `$` has a non-space
/// before it and no digit after it (unless what they hold is plainly
/// maths: a command, `^`, `_` or a brace). So prices stay prices ("costs ~$1.5M,
/// not ~$0.03M"), and a `~` after a space is "about", kept.
pub fn clean(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    // Where the `$` that closes the maths being read is.
    let mut closing = None;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '$' if closing == Some(i - 1) => closing = None,
            '$' if chars.get(i) == Some(&'$') => i += 1,
            '$' if closing.is_none() && closing_dollar(&chars, i).is_some() => {
                closing = closing_dollar(&chars, i);
            }
            '~' if out.is_empty() || out.ends_with(char::is_whitespace) => out.push('~'),
            '~' => out.push(' '),
            '\\' => match chars.get(i).copied() {
                Some(e @ ('%' | '&' | '_' | '$' | '#' | '{' | '}')) => {
                    i += 1;
                    out.push(e);
                }
                Some('(' | ')' | '[' | ']') => i += 1,
                Some(',' | ';' | ':' | ' ') => {
                    i += 1;
                    out.push(' ');
                }
                Some('!') => i += 1,
                Some(a) if a.is_ascii_alphabetic() => {
                    let start = i;
                    while chars.get(i).is_some_and(char::is_ascii_alphabetic) {
                        i += 1;
                    }
                    let name: String = chars[start..i].iter().collect();
                    if TEXT_COMMANDS.contains(&name.as_str()) && chars.get(i) == Some(&'{') {
                        i += 1;
                        // The argument, braces balanced; it may hold more LaTeX.
                        let mut depth = 1;
                        let mut argument = String::new();
                        while let Some(&a) = chars.get(i) {
                            i += 1;
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
                    } else if let Some((_, symbol)) = SYMBOLS.iter().find(|(n, _)| *n == name) {
                        out.push_str(symbol);
                        // `{}` after a symbol only ends its name.
                        if chars.get(i) == Some(&'{') && chars.get(i + 1) == Some(&'}') {
                            i += 2;
                        }
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

/// Where the `$` that closes one opened before `at` is, if the one before
/// `at` opens maths: a non-space follows the opening `$`, and the next
/// unescaped `$` has a non-space before it and no digit after it. Maths
/// never spans another `$`, so a first `$` that cannot close means the
/// opening one was a dollar sign.
fn closing_dollar(chars: &[char], at: usize) -> Option<usize> {
    if chars.get(at).is_none_or(|c| c.is_whitespace()) {
        return None;
    }
    let mut j = at;
    // A command, a sub- or superscript or a brace makes the span maths
    // even when a digit follows it (`$\\sim$10B`).
    let mut mathy = false;
    while j < chars.len() {
        match chars[j] {
            '\\' => {
                mathy = true;
                j += 2;
            }
            '$' => {
                let before = chars[j - 1];
                let after = chars.get(j + 1);
                return (j > at
                    && !before.is_whitespace()
                    && (mathy || !after.is_some_and(char::is_ascii_digit)))
                .then_some(j);
            }
            '^' | '_' | '{' => {
                mathy = true;
                j += 1;
            }
            _ => j += 1,
        }
    }
    None
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

    #[test]
    fn prices_stay_prices_and_symbols_render() {
        // The shape of an abstract a reader met: two prices, no maths.
        assert_eq!(
            clean("re-prefilling costs ~$1.5M per day, caching ~$0.03M."),
            "re-prefilling costs ~$1.5M per day, caching ~$0.03M."
        );
        assert_eq!(clean("a $20 or $30 budget"), "a $20 or $30 budget");
        assert_eq!(
            clean("a 7.68\\times{} speed-up, $O(n \\log n)$ time, $\\leq 5\\%$ loss"),
            "a 7.68× speed-up, O(n \\log n) time, ≤ 5% loss"
        );
        assert_eq!(
            clean("$2\\times$ faster at $\\sim$10B"),
            "2× faster at ~10B"
        );
        assert_eq!(
            clean("Fig.~3 and et al.~\\cite{x}"),
            "Fig. 3 and et al. \\cite{x}"
        );
        assert_eq!(clean("a lone $ sign"), "a lone $ sign");
        assert_eq!(clean("ends with $"), "ends with $");
    }
}
