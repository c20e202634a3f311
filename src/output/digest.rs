//! A feed as a document: a Markdown digest to read or mail, and RSS 2.0
//! or Atom 1.0 for a feed reader (subscribed to a file `papers feed
//! --format rss -o FILE` writes, or to `papers serve`'s `/feed`).
//!
//! Each item links to the paper's arXiv page where it has an arXiv id;
//! its id (guid) is the paper's content id, so a reader shows each paper
//! once however often the feed is written. Items carry the tag, the
//! evidence sentence and the liked paper it is closest to.

use crate::date::now;

use super::escape;
use crate::date::{rfc3339, rfc822, unix_of};
use crate::feed::{Feed, FeedHit};
use crate::paper::Paper;

/// A document format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Digest {
    /// Markdown.
    Markdown,
    /// RSS 2.0.
    Rss,
    /// Atom 1.0.
    Atom,
}

impl Digest {
    /// The HTTP content type.
    pub fn content_type(self) -> &'static str {
        match self {
            Digest::Markdown => "text/markdown; charset=utf-8",
            Digest::Rss => "application/rss+xml; charset=utf-8",
            Digest::Atom => "application/atom+xml; charset=utf-8",
        }
    }
}

/// `feed` as a document; `link` is where the feed itself lives (a URL or
/// a path), for the feed's self link.
pub fn render(feed: &Feed, format: Digest, link: &str) -> String {
    match format {
        Digest::Markdown => markdown(feed),
        Digest::Rss => rss(feed, link),
        Digest::Atom => atom(feed, link),
    }
}

fn title(feed: &Feed) -> String {
    match feed.tags.as_slice() {
        [] => "papers feed: every tag".to_string(),
        tags => format!("papers feed: {}", tags.join(", ")),
    }
}

/// The paper's page: arXiv's abstract page when it has an arXiv id.
fn page(paper: &Paper) -> Option<String> {
    paper
        .arxiv_id()
        .map(|id| format!("https://arxiv.org/abs/{id}"))
}

fn authors(paper: &Paper) -> String {
    let Some(meta) = &paper.meta else {
        return String::new();
    };
    match meta.authors.as_slice() {
        [] => String::new(),
        [a] => a.clone(),
        [a, b] => format!("{a}, {b}"),
        [a, ..] => format!("{a} et al."),
    }
}

/// Why a paper is in the feed: its tag and the liked paper it is closest
/// to, named by its arXiv id where it has one (as the table names it).
fn why(hit: &FeedHit) -> String {
    match &hit.because {
        Some(b) => format!(
            "tag {} ({} match); like {} \"{}\" (cosine {:.2})",
            b.tag,
            hit.verdict.name(),
            super::table::display_id(&b.liked),
            b.liked.headline(),
            b.similarity
        ),
        None => crate::feed::UNRANKED_HINT.into(),
    }
}

/// The tag that ranked a hit, empty in an unranked feed.
fn tag_of(hit: &FeedHit) -> &str {
    hit.because.as_ref().map_or("", |b| b.tag.as_str())
}

fn markdown(feed: &Feed) -> String {
    let mut out = format!(
        "# {}\n\n{}.\n",
        escape::markdown(&title(feed)),
        escape::markdown(&feed.summary())
    );
    for (i, hit) in feed.hits.iter().enumerate() {
        let paper = &hit.found.paper;
        let heading = escape::markdown(&paper.headline());
        let heading = match page(paper).as_deref().and_then(escape::web_link) {
            Some(url) => format!("[{heading}]({url})"),
            None => heading,
        };
        out.push_str(&format!("\n## {}. {heading}\n\n", i + 1));
        let mut line = Vec::new();
        if hit.because.is_some() {
            line.push(format!("score {:.3}", hit.found.hit.score));
        }
        line.push(format!("id `{}`", paper.id.short()));
        if let Some(id) = paper.arxiv_id() {
            line.push(format!("arXiv:{id}"));
        }
        let by = authors(paper);
        if !by.is_empty() {
            line.push(escape::markdown(&by));
        }
        if let Some(date) = paper.date() {
            line.push(crate::paper::format_date(date));
        }
        out.push_str(&line.join(" · "));
        out.push('\n');
        if hit.because.is_some() {
            out.push_str(&format!(
                "\n> {}\n\nWhy: {}\n",
                escape::markdown(hit.evidence()),
                escape::markdown(&why(hit))
            ));
        }
    }
    out
}

/// When an item is dated: the paper's date, else the day a daily list
/// featured it, else when `papers index` added it, else now; so an item
/// keeps its date from one poll to the next.
fn dated(hit: &FeedHit) -> u64 {
    let paper = &hit.found.paper;
    let listed = paper
        .meta
        .as_ref()
        .and_then(|m| m.listed.as_deref())
        .and_then(crate::paper::parse_date);
    paper
        .date()
        .or(listed)
        .map(unix_of)
        .or(hit.added)
        .unwrap_or_else(|| now() as u64)
}

fn description(hit: &FeedHit) -> String {
    match hit.because {
        Some(_) => format!(
            "{} — Why: {}. {}",
            hit.evidence(),
            why(hit),
            hit.found.paper.text
        ),
        None => hit.found.paper.text.clone(),
    }
}

/// A feed document: the XML declaration, `head` (the root's opening tag
/// and the feed's own elements), each hit as `item` writes it, and `tail`.
fn document(
    feed: &Feed,
    head: String,
    item: impl Fn(&FeedHit, &Paper) -> String,
    tail: &str,
) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    out.push_str(&head);
    for hit in &feed.hits {
        out.push_str(&item(hit, &hit.found.paper));
    }
    out.push_str(tail);
    out
}

fn rss(feed: &Feed, link: &str) -> String {
    // RSS requires the channel's link: written to a file, a feed has no
    // address of its own, so it links the first paper's page (else arXiv).
    let home = match link {
        "" => feed
            .hits
            .iter()
            .find_map(|h| page(&h.found.paper))
            .unwrap_or_else(|| "https://arxiv.org/".to_string()),
        link => link.to_string(),
    };
    let mut head = format!(
        "<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n\
         <title>{}</title>\n<link>{}</link>\n<description>{}</description>\n\
         <lastBuildDate>{}</lastBuildDate>\n<generator>papers</generator>\n",
        escape::xml(&title(feed)),
        escape::xml(&home),
        escape::xml(&feed.summary()),
        rfc822(now() as u64),
    );
    if link.starts_with("http") {
        head.push_str(&format!(
            "<atom:link href=\"{}\" rel=\"self\" type=\"application/rss+xml\"/>\n",
            escape::xml(link)
        ));
    }
    let item = |hit: &FeedHit, paper: &Paper| {
        let link = page(paper)
            .map(|url| format!("<link>{}</link>\n", escape::xml(&url)))
            .unwrap_or_default();
        format!(
            "<item>\n<title>{}</title>\n{link}<guid isPermaLink=\"false\">papers:{}</guid>\n\
             <category>{}</category>\n<pubDate>{}</pubDate>\n<description>{}</description>\n</item>\n",
            escape::xml(&paper.headline()),
            paper.id.hex(),
            escape::xml(tag_of(hit)),
            rfc822(dated(hit)),
            // An RSS description is HTML: the text's markup characters
            // are escaped once for HTML, then the whole for XML, so a
            // reader shows markup in an abstract as text; quotes need no
            // HTML escape (escaping them twice showed `&quot;`).
            escape::xml(&escape::html_text(&description(hit))),
        )
    };
    document(feed, head, item, "</channel>\n</rss>\n")
}

fn atom(feed: &Feed, link: &str) -> String {
    let mut head = format!(
        "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<id>urn:papers:feed:{}</id>\n\
         <title>{}</title>\n<subtitle>{}</subtitle>\n<updated>{}</updated>\n\
         <generator>papers</generator>\n",
        escape::xml(&feed.tags.join(",")),
        escape::xml(&title(feed)),
        escape::xml(&feed.summary()),
        rfc3339(now() as u64),
    );
    if !link.is_empty() {
        head.push_str(&format!(
            "<link rel=\"self\" href=\"{}\"/>\n",
            escape::xml(link)
        ));
    }
    let entry = |hit: &FeedHit, paper: &Paper| {
        let link = page(paper)
            .map(|url| format!("<link href=\"{}\"/>\n", escape::xml(&url)))
            .unwrap_or_default();
        let by = authors(paper);
        format!(
            "<entry>\n<id>urn:papers:{}</id>\n<title>{}</title>\n<updated>{}</updated>\n{link}\
             <author><name>{}</name></author>\n<category term=\"{}\"/>\n<summary>{}</summary>\n</entry>\n",
            paper.id.hex(),
            escape::xml(&paper.headline()),
            rfc3339(dated(hit)),
            escape::xml(if by.is_empty() { "unknown" } else { &by }),
            escape::xml(tag_of(hit)),
            escape::xml(&description(hit)),
        )
    };
    document(feed, head, entry, "</feed>\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_escaping() {
        assert_eq!(rfc822(1_796_342_400), "Fri, 04 Dec 2026 00:00:00 GMT");
        assert_eq!(rfc3339(1_796_342_400 + 3661), "2026-12-04T01:01:01Z");
        assert_eq!(
            escape::xml("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;"
        );
    }
}
