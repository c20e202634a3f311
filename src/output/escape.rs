//! Text made safe for the program that reads an export next: a spreadsheet
//! (CSV), a Markdown renderer (notes, digests), BibTeX, a feed reader's
//! HTML. An abstract is somebody else's text: whatever it holds, it stays
//! text there, never a formula, markup, a link or a broken entry.

/// A CSV cell that a spreadsheet shows as text: a cell that would start a
/// formula (`=`, `+`, `-`, `@`, or a tab or carriage return before one) is
/// prefixed with `'`, as OWASP recommends for CSV injection; then quoted as
/// RFC 4180 says when it needs to be.
pub fn csv_cell(text: &str) -> String {
    let formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let text = if formula {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// `text` with HTML's and XML's markup characters (`&`, `<`, `>`) as
/// entities, and every other character handed to `other`, which writes it
/// to the output as it is, changed, or not at all.
fn entities(text: &str, other: impl Fn(char, &mut String)) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => other(c, &mut out),
        }
    }
    out
}

/// `text` as HTML text: `&`, `<` and `>` escaped, nothing else (quotes
/// mean nothing outside an attribute).
pub fn html_text(text: &str) -> String {
    entities(text, |c, out| out.push(c))
}

/// Text escaped for XML (and HTML) character data and attribute values:
/// markup as entities, and the control characters XML does not allow
/// dropped.
pub fn xml(text: &str) -> String {
    entities(text, |c, out| match c {
        '"' => out.push_str("&quot;"),
        '\'' => out.push_str("&apos;"),
        // Characters XML 1.0 does not allow at all.
        c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
        c => out.push(c),
    })
}

/// Text for a Markdown document that renders as the same text: HTML is
/// written as entities (so no `<script>` or `<img onerror>` runs), and the
/// characters that make links, images, emphasis or code are escaped with a
/// backslash, so the only links in an export are the ones papers writes
/// (to arXiv, over https). Line breaks become spaces: one item stays one
/// line.
pub fn markdown(text: &str) -> String {
    entities(text, |c, out| match c {
        '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '#' | '|' | '~' => {
            out.push('\\');
            out.push(c);
        }
        '\n' | '\r' | '\t' => out.push(' '),
        c if c.is_control() => {}
        c => out.push(c),
    })
}

/// A link target papers writes only when it is http(s) and has nothing a
/// Markdown or HTML reader would take as the end of the link.
pub fn web_link(url: &str) -> Option<&str> {
    let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
    let clean = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || "()<>\"'`[]\\".contains(c));
    (scheme_ok && clean).then_some(url)
}

/// Text safe inside a braced BibTeX field: LaTeX's special characters
/// escaped, and braces kept only where they pair up (BibTeX counts a
/// brace after a backslash as a brace all the same, so an unpaired one is
/// removed, never "escaped"): a field always closes where it should.
pub fn bibtex(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    // Which braces pair up, matched as a stack.
    let mut keep = vec![false; chars.len()];
    let mut open = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '{' => open.push(i),
            '}' => {
                if let Some(o) = open.pop() {
                    keep[o] = true;
                    keep[i] = true;
                }
            }
            _ => {}
        }
    }
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '{' | '}' if keep[i] => out.push(c),
            '{' | '}' => {}
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether the braces of `text` pair up, as BibTeX counts them.
pub fn balanced(text: &str) -> bool {
    let mut depth = 0i64;
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_stay_text() {
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_cell("-1+2"), "'-1+2");
        assert_eq!(csv_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_cell("plain, text"), "\"plain, text\"");
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a, \"b\""), "\"a, \"\"b\"\"\"");
        assert_eq!(bibtex("50% of {x} & $y_1$"), "50\\% of {x} \\& \\$y\\_1\\$");
    }

    #[test]
    fn markdown_has_no_markup_and_no_links() {
        let text = markdown("<script>x</script> [a](javascript:alert(1)) <img onerror=y>");
        assert!(!text.contains('<') && !text.contains("]("), "{text}");
        assert_eq!(web_link("javascript:alert(1)"), None);
        assert_eq!(web_link("https://arxiv.org/abs/2401.1)"), None);
        assert_eq!(
            web_link("https://arxiv.org/abs/2401.00001"),
            Some("https://arxiv.org/abs/2401.00001")
        );
    }

    #[test]
    fn bibtex_braces_always_pair() {
        for text in [
            "a } b { c",
            "}}{{",
            "{x} }",
            "\\}",
            "{{a}",
            "50% {x} & $y_1$",
        ] {
            let out = bibtex(text);
            assert!(balanced(&out), "{text:?} -> {out:?}");
        }
        assert_eq!(bibtex("{BERT} } x"), "{BERT}  x");
        assert_eq!(bibtex("50% & $y_1$"), "50\\% \\& \\$y\\_1\\$");
    }
}
