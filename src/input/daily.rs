//! Parsing one Daily Papers dump: a `Daily Papers` header line, then one
//! abstract per blank-line-separated paragraph. Pure: text in, paragraphs out.
//!
//! Tolerated: a UTF-8 byte-order mark, CRLF line ends, trailing white space,
//! blank lines before the header and several blank lines between paragraphs.
//! A paragraph wrapped over several lines is joined with single spaces.

/// The line a dump starts with.
pub const HEADER: &str = "Daily Papers";

/// The inputs papers reads, as the errors about any other file name them.
pub const ACCEPTED: &str = "Daily Papers text dumps, Hugging Face daily papers JSON, JSON \
                            Lines and Parquet, gzip-compressed or not";

use super::Paragraph;

/// Why a text is not a dump.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text has no non-blank line.
    #[error("empty file")]
    Empty,
    /// A JSON dump that is not a list of daily papers entries.
    #[error("not a daily papers JSON list: {0}")]
    Json(String),
    /// The first non-blank line is not the header.
    #[error(
        "line {line}: not an input papers reads (it reads {ACCEPTED}; a text dump starts \
         with a `{HEADER}` line)"
    )]
    MissingHeader {
        /// The line where the header should have been.
        line: usize,
    },
}

/// Splits a dump into its abstracts. A dump with a header and no paragraph is
/// valid and yields nothing.
pub fn parse_dump(text: &str) -> Result<Vec<Paragraph>, ParseError> {
    let text = super::strip_bom(text);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));

    let header = lines.by_ref().find(|(_, l)| !l.is_empty());
    match header {
        None => return Err(ParseError::Empty),
        Some((_, HEADER)) => {}
        Some((line, _)) => return Err(ParseError::MissingHeader { line }),
    }

    let mut paragraphs = Vec::new();
    let mut current: Option<Paragraph> = None;
    for (number, line) in lines {
        if line.is_empty() {
            paragraphs.extend(current.take());
            continue;
        }
        match current.as_mut() {
            Some(p) => {
                p.text.push(' ');
                p.text.push_str(line);
            }
            None => {
                current = Some(Paragraph {
                    number: paragraphs.len() + 1,
                    line: number,
                    embedding: None,
                    text: line.to_string(),
                    meta: None,
                })
            }
        }
    }
    paragraphs.extend(current);
    Ok(paragraphs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(input: &str) -> Vec<String> {
        parse_dump(input)
            .unwrap()
            .into_iter()
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn splits_on_blank_lines() {
        assert_eq!(texts("Daily Papers\n\nOne.\n\nTwo.\n"), ["One.", "Two."]);
    }

    #[test]
    fn tolerates_bom_crlf_trailing_space_and_many_blank_lines() {
        let input = "\u{feff}Daily Papers  \r\n\r\n\r\nOne.  \r\n \r\n\r\n\r\nTwo.\t\r\n";
        assert_eq!(texts(input), ["One.", "Two."]);
    }

    #[test]
    fn joins_wrapped_lines() {
        assert_eq!(
            texts("Daily Papers\n\nA wrapped\n  abstract.\n"),
            ["A wrapped abstract."]
        );
    }

    #[test]
    fn numbers_paragraphs_and_lines() {
        let p = parse_dump("\nDaily Papers\n\nOne.\n\n\nTwo.").unwrap();
        assert_eq!((p[0].number, p[0].line), (1, 4));
        assert_eq!((p[1].number, p[1].line), (2, 7));
    }

    #[test]
    fn rejects_missing_header_and_empty_text() {
        assert_eq!(parse_dump(" \n\n"), Err(ParseError::Empty));
        assert_eq!(
            parse_dump("\nHello\n\nWorld"),
            Err(ParseError::MissingHeader { line: 2 })
        );
    }

    #[test]
    fn header_only_is_an_empty_dump() {
        assert_eq!(texts("Daily Papers\n"), Vec::<String>::new());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Lines drawn from pieces that matter to the parser: the header, blank
    /// and white-space-only lines, CR, BOM, NUL and arbitrary text.
    fn dumpish() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Daily Papers".to_string()),
            Just(String::new()),
            Just("  \t".to_string()),
            Just("\r".to_string()),
            Just("\u{feff}".to_string()),
            Just("\0".to_string()),
            ".{0,40}",
        ];
        prop::collection::vec(piece, 0..40).prop_map(|lines| lines.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn never_panics_on_any_text(text in any::<String>()) {
            let _ = parse_dump(&text);
        }

        #[test]
        fn paragraphs_are_clean_numbered_and_round_trip(text in dumpish()) {
            if let Ok(paragraphs) = parse_dump(&text) {
                for (i, p) in paragraphs.iter().enumerate() {
                    prop_assert_eq!(p.number, i + 1);
                    prop_assert!(!p.text.is_empty());
                    prop_assert!(!p.text.contains('\n'));
                    prop_assert_eq!(p.text.trim(), p.text.as_str());
                }
                let rebuilt = std::iter::once(HEADER.to_string())
                    .chain(paragraphs.iter().map(|p| p.text.clone()))
                    .collect::<Vec<_>>()
                    .join("\n\n");
                let again: Vec<String> = parse_dump(&rebuilt).unwrap().into_iter().map(|p| p.text).collect();
                let texts: Vec<String> = paragraphs.into_iter().map(|p| p.text).collect();
                prop_assert_eq!(again, texts);
            }
        }
    }
}
