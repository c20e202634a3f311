//! The tools: what each is called, takes and answers, in the fixed order
//! `tools/list` gives them, and the call of each. Arguments are read
//! through the same request model as the CLI's flags and the HTTP API's
//! parameters ([`crate::request`]); anything wrong with them, or an id
//! that is not in the index, is a tool error whose message names the
//! argument.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;

use super::answer::{self, Detail, Hits};
use super::args::*;
use super::objects;
use crate::error::Error;
use crate::index::reading::ReadingState;
use crate::request::{with_filters, BadParam, Front, Params};
use crate::search::{self, Query, Searcher};

/// The most hits one MCP call may ask for.
pub const MAX_K: usize = 50;

/// Whether a tool reads or writes the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

/// One tool's definition.
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    input: Arc<JsonObject>,
    output: Arc<JsonObject>,
    access: Access,
}

fn spec<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    access: Access,
) -> Spec {
    Spec {
        name,
        title,
        description,
        input: schema_for_input::<I>().unwrap_or_else(|e| panic!("{name}'s input schema: {e}")),
        output: schema_for_output::<O>(),
        access,
    }
}

fn specs() -> Vec<Spec> {
    use Access::*;
    vec![
        spec::<SearchArgs, Hits>(
            "search",
            "Search papers",
            "Search the local index of paper abstracts by meaning and words. Takes the CLI's \
             filters and mode. Hits are best first with a relevance score from 0 to 1 and the query's verdict \
             (`match` on each hit: strong, weak, or none when nothing in the index is about it); \
             `searched` gives the query as searched when a typo was corrected. Cite hits by id.",
            Read,
        ),
        spec::<SimilarArgs, Hits>(
            "similar",
            "Papers like these",
            "Papers similar to one or more papers of the index, optionally steering away from \
             others (`not`); score is the cosine.",
            Read,
        ),
        spec::<ShowArgs, objects::PaperView>(
            "show",
            "Read one paper",
            "One paper in full: title, authors, dates, categories, abstract and a BibTeX entry.",
            Read,
        ),
        spec::<NoArgs, objects::InfoView>(
            "info",
            "What the index holds",
            "The index: how many papers, the model, and the input files.",
            Read,
        ),
        spec::<FeedArgs, Hits>(
            "feed",
            "The reader's feed",
            "The reader's inbox (the papers not yet marked seen, read or saved) ranked by the \
             reader's tags (reading profiles), each with the tag and the liked paper it is \
             closest to; or the papers since a day.",
            Read,
        ),
        spec::<NoArgs, objects::Tags>(
            "tags",
            "The reader's tags",
            "The reader's tags, with how many papers each likes.",
            Read,
        ),
        spec::<ReadingListArgs, objects::ReadingList>(
            "reading_list",
            "The reader's reading list",
            "The papers the reader marked saved (to read later; the default) or read, the \
             newest mark first.",
            Read,
        ),
        spec::<TagArgs, objects::TagChanged>(
            "tag",
            "Tag papers",
            "Adds papers to one of the reader's tags as liked (or `not_interested`), creating \
             the tag. Changes the reader's index: only when the server was started with \
             --allow-write.",
            Write,
        ),
        spec::<MarkArgs, objects::Marked>(
            "mark",
            "Mark papers",
            "Sets the reader's reading state of papers: seen, read or saved (out of the inbox \
             the feed ranks) or new (back in). Changes the reader's index: only when the server \
             was started with --allow-write.",
            Write,
        ),
        spec::<UntagArgs, objects::TagChanged>(
            "untag",
            "Untag papers",
            "Takes papers out of one of the reader's tags. Changes the reader's index: only \
             when the server was started with --allow-write.",
            Write,
        ),
    ]
}

/// The tools, in order: the write tools only when `allow_write`.
pub fn list(allow_write: bool) -> Vec<Tool> {
    specs()
        .into_iter()
        .filter(|s| allow_write || s.access == Access::Read)
        .map(|s| {
            let read = s.access == Access::Read;
            let annotations = ToolAnnotations::with_title(s.title)
                .read_only(read)
                .destructive(matches!(s.name, "untag" | "mark"))
                .idempotent(true)
                .open_world(false);
            Tool::new(s.name, s.description, s.input)
                .with_title(s.title)
                .with_raw_output_schema(s.output)
                .with_annotations(annotations)
        })
        .collect()
}

/// A structured answer: the object, the same as JSON text, and a link to
/// each paper it names.
fn structured<T: Serialize>(value: &T, links: Vec<ContentBlock>) -> CallToolResult {
    let value = serde_json::to_value(value).unwrap_or_default();
    let mut result = CallToolResult::structured(value);
    result.content.extend(links);
    result
}

/// A resource link per hit.
fn links(hits: &Hits) -> Vec<ContentBlock> {
    hits.hits.iter().map(answer::link).collect()
}

fn detail(p: &Params) -> Result<Detail, BadParam> {
    Ok(p.one("detail")?
        .map(Detail::parse)
        .transpose()?
        .unwrap_or_default())
}

/// Calls tool `name` with `arguments`; every failure is a tool error.
pub fn call(
    searcher: &Searcher,
    name: &str,
    arguments: &JsonObject,
    allow_write: bool,
) -> CallToolResult {
    let answer = Params::from_json(arguments)
        .map_err(Error::from)
        .and_then(|p| run(searcher, name, &p, allow_write));
    answer.unwrap_or_else(|e| refusal(Front::Mcp.error(&e)))
}

/// A tool error saying `message`.
fn refusal(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("papers: {message}"))])
}

fn run(
    searcher: &Searcher,
    name: &str,
    p: &Params,
    allow_write: bool,
) -> crate::error::Result<CallToolResult> {
    match name {
        "search" => {
            p.only(&with_filters(&[
                "query",
                "k",
                "mode",
                "detail",
                "min_score",
                "strict",
                "as_typed",
            ]))?;
            let question = Query {
                paragraphs: search::paragraphs(&p.query("query")?)?,
                options: p.options_within(10, MAX_K)?,
                explain: false,
            };
            let hits = answer::hits(&searcher.search(&question)?, detail(p)?);
            Ok(structured(&hits, links(&hits)))
        }
        "similar" => {
            p.only(&with_filters(&["ids", "not", "k", "detail", "min_score"]))?;
            let (like, unlike) = (p.ids("ids", true)?, p.ids("not", false)?);
            let results = searcher.similar(&like, &unlike, &p.options_within(10, MAX_K)?)?;
            let hits = answer::hits(&results, detail(p)?);
            Ok(structured(&hits, links(&hits)))
        }
        "show" => {
            p.only(&["id"])?;
            let id = p
                .one("id")?
                .ok_or_else(|| BadParam::new("id", "missing: give a paper id"))?;
            Ok(structured(&objects::paper(&searcher.show(id)?), Vec::new()))
        }
        "info" => {
            p.only(&[])?;
            Ok(structured(&objects::info(&searcher.info()?), Vec::new()))
        }
        "feed" => {
            // `tag` as the CLI and HTTP say it, `tags` as the schema does.
            p.only(&[
                "tags", "tag", "k", "since", "from", "must", "exclude", "detail",
            ])?;
            let feed = searcher.feed(&p.feed(&["tags", "tag"], 10, MAX_K)?)?;
            let hits = answer::feed(&feed, detail(p)?);
            Ok(structured(&hits, links(&hits)))
        }
        "reading_list" => {
            p.only(&["state"])?;
            let state = match p.one("state")?.unwrap_or("saved") {
                "saved" => ReadingState::Saved,
                "read" => ReadingState::Read,
                other => {
                    return Err(BadParam::new(
                        "state",
                        format!("'{other}' is not one of saved, read"),
                    )
                    .into())
                }
            };
            let papers = searcher.reading_list(state)?;
            Ok(structured(
                &objects::reading_list(state.name(), &papers),
                Vec::new(),
            ))
        }
        "tags" => {
            p.only(&[])?;
            Ok(structured(&objects::tags(&searcher.tags()?), Vec::new()))
        }
        // Said as it is: `--allow-write` is the server's own switch.
        "tag" | "untag" | "mark" if !allow_write => Ok(refusal(format!(
            "`{name}` changes the reader's index, and this server was started without \
             --allow-write"
        ))),
        "tag" => {
            p.only(&["tag", "ids", "not_interested"])?;
            let tag = required(p, "tag")?;
            let ids = p.ids("ids", true)?;
            // Trained now, as `papers tag` does, not by the next feed.
            let change = crate::write::answer(searcher.dir(), tag, ids, p.flag("not_interested")?)?;
            searcher.refresh_now();
            Ok(structured(&changed(&change), Vec::new()))
        }
        "untag" => {
            p.only(&["tag", "ids"])?;
            let tag = required(p, "tag")?;
            let change = crate::write::untag(
                searcher.dir(),
                tag,
                &p.ids("ids", true)?,
                &crate::write::Quiet,
            )?;
            searcher.refresh_now();
            Ok(structured(&changed(&change), Vec::new()))
        }
        "mark" => {
            p.only(&["state", "ids"])?;
            let state = crate::index::reading::ReadingState::parse(required(p, "state")?)?;
            let change = crate::write::mark(
                searcher.dir(),
                state,
                &crate::feed::Marked::Ids(p.ids("ids", true)?),
                &crate::write::Quiet,
            )?;
            searcher.refresh_now();
            Ok(structured(&objects::Marked::from(&change), Vec::new()))
        }
        other => Err(Error::from(BadParam::new(
            "name",
            format!("no tool `{other}` (tools/list lists them)"),
        ))),
    }
}

fn required<'a>(p: &'a Params, name: &str) -> Result<&'a str, BadParam> {
    p.one(name)?
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| BadParam::new(name, "missing"))
}

fn changed(change: &crate::feed::TagChange) -> objects::TagChanged {
    objects::TagChanged {
        tag: objects::TagView::from(&change.summary),
        changed: change.changed,
    }
}
