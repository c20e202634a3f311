//! `papers mcp`: a Model Context Protocol server over stdio (the official
//! Rust SDK, `rmcp`), so that an agent can search the index and cite what it
//! finds. Tools: `search {query, k}`, `similar {ids, not, k}`, `show {id}`,
//! `info {}`, and the reader's `feed {tags, k, since}` and `tags {}`
//! (reading only: tagging is the CLI's, as the server never writes). Each answers the CLI's JSON objects as one JSON array (or
//! object) in a text block: ids, scores, headlines, and for `search` the
//! evidence sentence of each hit. A bad argument or an unknown id is a tool
//! error (`isError: true`, the message in the text), not a protocol failure.

mod lines;
mod stdio;

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::output::json;
use crate::search::{self, Query, SearchOptions, Searcher};
use crate::serve::params::{MAX_IDS, MAX_K, MAX_QUERY_BYTES};

/// `search`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for: a question, a topic, or a passage.
    pub query: String,
    /// How many papers to return (1 to 1000; default 10).
    pub k: Option<usize>,
}

/// `similar`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SimilarArgs {
    /// Ids of papers to find neighbours of (full ids, unique prefixes of 4
    /// or more hex digits, or arXiv ids).
    pub ids: Vec<String>,
    /// Ids of papers to steer away from.
    #[serde(default)]
    pub not: Vec<String>,
    /// How many papers to return (1 to 1000; default 10).
    pub k: Option<usize>,
}

/// `show`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowArgs {
    /// The paper's id (full, a unique prefix, or an arXiv id).
    pub id: String,
}

/// `feed`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FeedArgs {
    /// Tags whose profiles rank the papers (default: every tag).
    #[serde(default)]
    pub tags: Vec<String>,
    /// How many papers to return (1 to 1000; default 10).
    pub k: Option<usize>,
    /// Rank the papers added or published since this day (YYYY-MM-DD)
    /// instead of those the last `papers index` run added.
    pub since: Option<String>,
}

/// The MCP server over one [`Searcher`].
#[derive(Clone)]
pub struct Server {
    searcher: Arc<Searcher>,
    tool_router: ToolRouter<Server>,
}

/// A tool's answer: the JSON text, or the error as a tool error.
fn reply(answer: Result<String>) -> CallToolResult {
    match answer {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "papers: {}",
            crate::serve::params::parameter_words(&e.to_string())
        ))]),
    }
}

/// `k`, checked as the HTTP API checks it.
fn limit(k: Option<usize>) -> Result<usize> {
    match k.unwrap_or(10) {
        k @ 1..=MAX_K => Ok(k),
        k => Err(Error::InvalidArgument {
            name: "k".into(),
            reason: format!("{k} is not from 1 to {MAX_K}"),
        }),
    }
}

#[tool_router]
impl Server {
    /// A server over `searcher`.
    pub fn new(searcher: Arc<Searcher>) -> Server {
        Server {
            searcher,
            tool_router: Server::tool_router(),
        }
    }

    #[tool(
        description = "Search the paper abstracts of the local index by meaning and words (hybrid). \
                       Returns a JSON array of hits, best first: id, score (relevance, 0 to 1: of hits \
                       scored 0.8 or more most were relevant, under 0.2 few; an empty array means \
                       nothing in the index is about the query), headline, title/authors/arxiv_id \
                       when known, text (the abstract), and evidence (the sentence that matched best), \
                       which an answer can quote and cite by id."
    )]
    async fn search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(
            blocking(move || {
                if args.query.len() > MAX_QUERY_BYTES {
                    return Err(Error::TooLarge {
                        what: "the query".into(),
                        limit: MAX_QUERY_BYTES as u64,
                        flag: "",
                    });
                }
                let question = Query {
                    paragraphs: search::paragraphs(&args.query)?,
                    options: SearchOptions {
                        limit: limit(args.k)?,
                        ..Default::default()
                    },
                    explain: false,
                };
                Ok(json::array(&json::hit_objects(
                    &searcher.search(&question)?,
                )))
            })
            .await,
        )
    }

    #[tool(
        description = "Papers similar to one or more papers of the index (by their embeddings), \
                       optionally steering away from others (`not`). Returns a JSON array of hits \
                       like `search`, without evidence."
    )]
    async fn similar(&self, Parameters(args): Parameters<SimilarArgs>) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(
            blocking(move || {
                if args.ids.is_empty() || args.ids.len() + args.not.len() > MAX_IDS {
                    return Err(Error::InvalidArgument {
                        name: "ids".into(),
                        reason: format!("give 1 to {MAX_IDS} ids"),
                    });
                }
                let options = SearchOptions {
                    limit: limit(args.k)?,
                    ..Default::default()
                };
                let results = searcher.similar(&args.ids, &args.not, &options)?;
                Ok(json::array(&json::hit_objects(&results)))
            })
            .await,
        )
    }

    #[tool(
        description = "One paper of the index in full, as a JSON object: id, headline, text \
                       (the abstract), sources, and title, authors, arxiv_id, published when known."
    )]
    async fn show(&self, Parameters(args): Parameters<ShowArgs>) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(blocking(move || Ok(json::paper_object(&searcher.show(&args.id)?, false))).await)
    }

    #[tool(
        description = "The reader's daily feed: the papers the last `papers index` run added (or \
                       those since a date) ranked by the reader's tags (reading profiles). Returns a \
                       JSON array of hits like `search`, each with `tag`, `because` (the liked paper \
                       it is closest to) and `evidence`. Use `tags` to see the tags."
    )]
    async fn feed(&self, Parameters(args): Parameters<FeedArgs>) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(
            blocking(move || {
                let scope = match &args.since {
                    None => crate::feed::Scope::LastRun,
                    Some(day) => crate::feed::Scope::Since(
                        crate::paper::parse_date(day)
                            .filter(|_| day.len() == 10)
                            .ok_or_else(|| Error::InvalidArgument {
                                name: "since".into(),
                                reason: format!("'{day}' is not a date of the form YYYY-MM-DD"),
                            })?,
                    ),
                };
                if args.tags.len() > MAX_IDS {
                    return Err(Error::InvalidArgument {
                        name: "tags".into(),
                        reason: format!("at most {MAX_IDS} tags"),
                    });
                }
                let request = crate::feed::FeedRequest {
                    tags: args.tags,
                    scope,
                    limit: limit(args.k)?,
                    ..Default::default()
                };
                let feed = searcher.feed(&request)?;
                Ok(json::array(&crate::output::feed::feed_objects(&feed)))
            })
            .await,
        )
    }

    #[tool(
        description = "The reader's tags (reading profiles), as a JSON array of \
                       {tag, liked, not_interested, missing}."
    )]
    async fn tags(&self) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(
            blocking(move || {
                Ok(json::array(&crate::output::feed::tag_objects(
                    &searcher.tags()?,
                )))
            })
            .await,
        )
    }

    #[tool(
        description = "What the index holds, as a JSON object: path, records, model, dimension, \
                       generation, size and the input files with their record counts."
    )]
    async fn info(&self) -> CallToolResult {
        let searcher = Arc::clone(&self.searcher);
        reply(blocking(move || Ok(json::info_object(&searcher.info()?))).await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("papers", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Local search over paper abstracts. Use `search` for a topic or question, \
                 `show` to read one paper, `similar` for papers like given ones, `feed` for \
                 today's new papers ranked by the reader's tags, and cite papers by their \
                 `id` (or `arxiv_id`) and `evidence` sentence.",
            )
    }
}

/// Runs searcher work off the async threads.
async fn blocking(work: impl FnOnce() -> Result<String> + Send + 'static) -> Result<String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| Err(Error::Embed("the tool's thread failed".into())))
}

/// Serves MCP on stdin and stdout until the client closes stdin.
pub fn run(searcher: Arc<Searcher>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("the server's threads", e))?;
    let served = runtime.block_on(async move {
        // stdin -> `stdio::read` -> the SDK -> `stdio::write` -> stdout, with
        // the reader's own answers to bad lines merged in by the writer.
        let (to_sdk, sdk_in) = tokio::io::duplex(1 << 16);
        let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(stdio::read(tokio::io::stdin(), to_sdk, answers));
        let writer = tokio::spawn(stdio::write(from_sdk, answered, tokio::io::stdout()));
        let service = Server::new(searcher)
            .serve((sdk_in, sdk_out))
            .await
            .map_err(|e| Error::Mcp(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| Error::Mcp(e.to_string()))?;
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
        Ok(())
    });
    // A read of stdin still pending is not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    served
}
