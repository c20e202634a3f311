//! One integration test binary (so candle links once), driving the real
//! `papers` binary and the real model against the seed dumps.

mod doors;
mod edges;
mod encoder;
mod errors;
mod feed;
mod filters;
mod graphs;
mod handoff;
mod hostile;
mod indexing;
mod inputs;
mod mcp;
mod model;
mod output;
mod parity;
mod parquet;
mod query;
mod replica;
mod retrieval;
mod safety;
mod serve;
mod spark;
mod storage;
mod util;
mod verbs;
mod verdicts;
mod watch;
