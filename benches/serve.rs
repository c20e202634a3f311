//! `papers serve` under load: `cargo bench --bench serve -- INDEX [CLIENTS]
//! [REQUESTS]` starts the real server on INDEX (a free port), then:
//! - warm latency: 200 searches (the labelled queries of
//!   `eval/queries.jsonl`, in turn) and 200 `similar` (ids spread over the
//!   index), one at a time: p50 and p90 through HTTP;
//! - concurrency: CLIENTS threads (default 32) sending REQUESTS in all
//!   (default 10,000), mixed 50% search, 40% similar, 10% show: errors,
//!   p50, p99 and requests per second;
//! - the server's peak and current resident memory (`/proc`).
//!
//! Prints one markdown table. Nothing fails on a slow figure.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn get(agent: &ureq::Agent, url: &str) -> Result<String, String> {
    match agent.get(url).call() {
        Ok(r) => r.into_string().map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(index) = args.first() else {
        eprintln!("usage: cargo bench --bench serve -- INDEX [CLIENTS] [REQUESTS]");
        std::process::exit(2);
    };
    let clients: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let requests: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let queries: Vec<String> = std::fs::read_to_string(root.join("eval/queries.jsonl"))
        .expect("eval/queries.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["query"].as_str().map(encode))
        .collect();

    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_papers"))
        .args(["--index", index, "serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("papers serve starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("the server's address").unwrap();
        if let Some(rest) = line.split("on http://").nth(1) {
            break format!("http://{}", rest.split('/').next().unwrap());
        }
    };
    let start_s = started.elapsed().as_secs_f64();
    std::thread::spawn(move || for _ in lines {});
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build();
    let info: serde_json::Value =
        serde_json::from_str(&get(&agent, &format!("{base}/api/info")).unwrap()).unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&get(&agent, &format!("{base}/api/list?limit=1000")).unwrap())
            .unwrap();
    let ids: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    let search = |i: usize| format!("{base}/api/search?k=10&q={}", queries[i % queries.len()]);
    let similar = |i: usize| format!("{base}/api/similar?k=10&id={}", ids[(i * 7919) % ids.len()]);
    let show = |i: usize| format!("{base}/api/papers/{}", ids[(i * 104_729) % ids.len()]);
    for i in 0..20 {
        get(&agent, &search(i)).unwrap();
        get(&agent, &similar(i)).unwrap();
    }

    let timed = |url: &dyn Fn(usize) -> String| {
        let mut times: Vec<Duration> = (0..200)
            .map(|i| {
                let t = Instant::now();
                get(&agent, &url(i)).unwrap();
                t.elapsed()
            })
            .collect();
        times.sort();
        times
    };
    let searches = timed(&search);
    let similars = timed(&similar);

    let errors = Arc::new(AtomicUsize::new(0));
    let next = Arc::new(AtomicUsize::new(0));
    let wall = Instant::now();
    let mut all: Vec<Duration> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..clients)
            .map(|_| {
                let (errors, next, agent) = (errors.clone(), next.clone(), agent.clone());
                let (search, similar, show) = (&search, &similar, &show);
                scope.spawn(move || {
                    let mut times = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= requests {
                            return times;
                        }
                        let url = match i % 10 {
                            0..=4 => search(i),
                            5..=8 => similar(i),
                            _ => show(i),
                        };
                        let t = Instant::now();
                        if get(&agent, &url).is_err() {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                        times.push(t.elapsed());
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let wall = wall.elapsed().as_secs_f64();
    all.sort();
    let (peak, now) = memory(child.id());
    let _ = child.kill();
    let _ = child.wait();

    println!("| measure ({} records, {index}) | value |", info["records"]);
    println!("|---|---|");
    println!("| server start to listening (model loaded) | {start_s:.2} s |");
    println!(
        "| search, warm, one at a time: p50 / p90 | {:.2} / {:.2} ms |",
        percentile(&searches, 0.5),
        percentile(&searches, 0.9)
    );
    println!(
        "| similar, warm, one at a time: p50 / p90 | {:.2} / {:.2} ms |",
        percentile(&similars, 0.5),
        percentile(&similars, 0.9)
    );
    println!(
        "| {clients} clients, {requests} mixed requests: errors | {} |",
        errors.load(Ordering::Relaxed)
    );
    println!(
        "| {clients} clients: p50 / p99 / requests per second | {:.1} / {:.1} ms / {:.0} |",
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        requests as f64 / wall
    );
    println!("| server resident memory: peak / at the end | {peak} / {now} MB |");
}
