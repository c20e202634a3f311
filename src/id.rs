//! How a reader names a paper, parsed once before any lookup: an id or a
//! unique prefix of one, an arXiv id (with or without `arXiv:` and a
//! version), an input's own id, or the address of the paper's page.

/// The id in a paper's page address, as people paste them: arXiv's
/// abstract or PDF page (`https://arxiv.org/abs/2405.01234v2`,
/// `arxiv.org/pdf/2405.01234.pdf`) or Hugging Face's paper page; other
/// text is returned as it is.
pub fn id_in_page_url(text: &str) -> &str {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .unwrap_or(text);
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    ["arxiv.org/abs/", "arxiv.org/pdf/", "huggingface.co/papers/"]
        .iter()
        .find_map(|page| rest.strip_prefix(page))
        .map(|id| {
            let id = id.trim_end_matches('/');
            id.strip_suffix(".pdf").unwrap_or(id)
        })
        .unwrap_or(text)
}

/// `2405.01234`, `2405.01234v2`, `arXiv:2405.01234` or an old-style
/// `hep-th/9901001` as the bare id without version; `None` otherwise.
pub fn arxiv_id(id: &str) -> Option<String> {
    let id = id.trim();
    let id = id
        .strip_prefix("arXiv:")
        .or_else(|| id.strip_prefix("arxiv:"))
        .unwrap_or(id);
    let unversioned = match id.rfind('v') {
        Some(at)
            if at > 0 && id[at + 1..].bytes().all(|b| b.is_ascii_digit()) && at + 1 < id.len() =>
        {
            &id[..at]
        }
        _ => id,
    };
    let new_style = unversioned.split_once('.').is_some_and(|(a, b)| {
        a.len() == 4
            && (4..=5).contains(&b.len())
            && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
    });
    let old_style = unversioned.split_once('/').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.bytes()
                .all(|c| c.is_ascii_lowercase() || c == b'-' || c == b'.')
            && b.len() == 7
            && b.bytes().all(|c| c.is_ascii_digit())
    });
    (new_style || old_style).then(|| unversioned.to_string())
}

/// A paper as a reader named it: the text (a page address reduced to the
/// id in it) and the arXiv id it spells, if any. What
/// [`Index::resolve`](crate::index::Index::resolve) looks up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The text as typed, or the id in the page address typed.
    pub text: String,
    /// The arXiv id it spells, without version.
    pub arxiv: Option<String>,
}

impl Wanted {
    /// Parses what a reader typed.
    pub fn parse(text: &str) -> Wanted {
        let text = id_in_page_url(text);
        Wanted {
            text: text.to_string(),
            arxiv: arxiv_id(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arxiv_ids_with_versions_and_old_style() {
        assert_eq!(arxiv_id("2405.01234v3").as_deref(), Some("2405.01234"));
        assert_eq!(arxiv_id("arXiv:0704.0001").as_deref(), Some("0704.0001"));
        assert_eq!(
            arxiv_id("hep-th/9901001v2").as_deref(),
            Some("hep-th/9901001")
        );
        assert_eq!(arxiv_id("4983"), None);
        assert_eq!(arxiv_id("W123.abc"), None);
    }

    #[test]
    fn page_addresses_give_their_id() {
        let wanted = Wanted::parse("https://arxiv.org/abs/2405.01234v2");
        assert_eq!(wanted.text, "2405.01234v2");
        assert_eq!(wanted.arxiv.as_deref(), Some("2405.01234"));
        assert_eq!(Wanted::parse(" 0a1b ").arxiv, None);
    }
}
