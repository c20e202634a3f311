//! The feed's rankers on real data: `cargo bench --bench feed [-- all]
//! [replica]` (`replica`: scikit-learn's SVM as `papers::feed::replica`
//! carries it, on the same draws; slow) [reader]` (`reader`: a simulated
//! reader answering the top 20 of each day's feed, `feed/reader.rs`).
//!
//! From `arxiv/arxiv-74k.jsonl.gz` (under `PAPERS_BENCH`, else
//! `../shared/bench`), where categories are the authors' own:
//! - an interest is an arXiv category; its profile is 20 liked papers
//!   carrying it and 20 disliked papers without it, drawn with a fixed seed
//!   from ids 2603-2604;
//! - a day is 300 consecutive papers (by id) from 2605 on; ten days spread
//!   evenly over that range; relevant = carries the category;
//! - the collection (the index papers sees) is the profile papers, a fixed
//!   sample of 2,000 more from 2603-2604 and the ten days; its records carry
//!   no categories (they are the labels). Weak negatives are sampled from
//!   it as `papers feed` samples them.
//!
//! The records are indexed through `write::index` (the path `papers
//! index` takes) into `target/bench-feed/index`, kept between runs. With
//! `PAPERS_FEED_DUMP=DIR`, the collection's vectors (`vectors.f32`, rows
//! of 384 little-endian f32 in the order of `meta.json`'s `ids`) and the
//! draws (`meta.json`: categories, profiles, days) are written there, for
//! sweeps outside papers. Prints
//! MAP over each day's ranking, nDCG@10 and P@10, averaged over the
//! (category, day) pairs with a relevant paper, for every ranker, on the
//! ten tuning categories and (with `all`, or `held-out`) on categories
//! nobody tuned on.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use papers::embed::{DeviceChoice, ModelChoice};
use papers::feed::authors;
use papers::feed::batch::Batch;
use papers::feed::words::{self, Words};
use papers::feed::{ExampleWords, Examples, Ranker, Trained};
use papers::index::Index;
use papers::write::{self, IndexRequest, Quiet};

#[path = "feed/calibrated.rs"]
mod calibrated;
#[path = "feed/reader.rs"]
mod reader;
#[path = "feed/replicated.rs"]
mod replicated;

type BoxResult<T> = Result<T, Box<dyn std::error::Error>>;

const TUNED: [&str; 10] = [
    "cs.CE", "cs.MM", "eess.SP", "cs.SE", "eess.IV", "stat.ML", "eess.AS", "eess.SY", "cs.LO",
    "cs.DB",
];
/// Categories nobody tuned on: every other one with enough papers on
/// both sides (at least 20 in 2603-2604 and one per day on average).
const HELD_OUT_MIN_POOL: usize = 20;
const LIKED: usize = 20;
const DISLIKED: usize = 20;
const DAY: usize = 300;
const DAYS: usize = 10;
const SAMPLE: usize = 2000;
const SEED: u64 = 20260604;

struct Paper {
    id: String,
    categories: Vec<String>,
    line: serde_json::Value,
}

/// splitmix64: a fixed-seed generator for the draws.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `k` distinct items of `from`, in draw order.
    fn sample<'a, T>(&mut self, from: &[&'a T], k: usize) -> Vec<&'a T> {
        let mut pool: Vec<&T> = from.to_vec();
        let k = k.min(pool.len());
        for i in 0..k {
            let j = i + (self.next() % (pool.len() - i) as u64) as usize;
            pool.swap(i, j);
        }
        pool.truncate(k);
        pool
    }
}

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let held_out = args.iter().any(|a| a == "all" || a == "held-out");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bench = std::env::var_os("PAPERS_BENCH")
        .map_or_else(|| root.join("../shared/bench"), PathBuf::from);
    let source = bench.join("arxiv/arxiv-74k.jsonl.gz");
    if !source.is_file() {
        return Err(format!("{}: not found (set PAPERS_BENCH)", source.display()).into());
    }
    let work = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("bench-feed");
    std::fs::create_dir_all(&work)?;

    let mut all = Vec::new();
    let reader =
        std::io::BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(&source)?));
    for line in reader.lines() {
        let mut line: serde_json::Value = serde_json::from_str(&line?)?;
        let id = line["id"].as_str().unwrap_or_default().to_string();
        let categories = line["categories"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        // The labels stay here: the records papers sees carry none.
        if let Some(o) = line.as_object_mut() {
            o.remove("categories");
        }
        all.push(Paper {
            id,
            categories,
            line,
        });
    }
    all.sort_by(|a, b| a.id.cmp(&b.id));
    let pool: Vec<&Paper> = all
        .iter()
        .filter(|p| p.id.starts_with("2603") || p.id.starts_with("2604"))
        .collect();
    let later: Vec<&Paper> = all.iter().filter(|p| p.id.as_str() >= "2605").collect();
    let days: Vec<Vec<&Paper>> = (0..DAYS)
        .map(|d| {
            let start = d * (later.len() - DAY) / (DAYS - 1);
            later[start..start + DAY].to_vec()
        })
        .collect();

    let has = |p: &Paper, c: &str| p.categories.iter().any(|x| x == c);
    let mut categories: Vec<(&str, bool)> = TUNED.iter().map(|c| (*c, true)).collect();
    if held_out {
        let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for p in &pool {
            for c in &p.categories {
                counts.entry(c).or_default().0 += 1;
            }
        }
        for day in &days {
            for p in day {
                for c in &p.categories {
                    counts.entry(c).or_default().1 += 1;
                }
            }
        }
        for (c, (in_pool, in_days)) in counts {
            if !TUNED.contains(&c) && in_pool >= HELD_OUT_MIN_POOL && in_days >= DAYS {
                categories.push((c, false));
            }
        }
    }
    let mut rng = Rng(SEED);
    let mut profiles = Vec::new();
    for (c, tuned) in &categories {
        let with: Vec<&Paper> = pool.iter().copied().filter(|p| has(p, c)).collect();
        let without: Vec<&Paper> = pool.iter().copied().filter(|p| !has(p, c)).collect();
        let liked = rng.sample(&with, LIKED);
        let disliked = rng.sample(&without, DISLIKED);
        profiles.push((*c, *tuned, liked, disliked));
    }
    let sample = Rng(SEED ^ 1).sample(&pool, SAMPLE);

    // The collection, indexed as `papers index` would.
    let mut chosen: BTreeMap<&str, &Paper> = BTreeMap::new();
    for p in sample.iter().chain(days.iter().flatten()) {
        chosen.insert(&p.id, p);
    }
    for (_, _, liked, disliked) in &profiles {
        for p in liked.iter().chain(disliked) {
            chosen.insert(&p.id, p);
        }
    }
    let started = Instant::now();
    let dir = work.join("index");
    let report = index_records(
        &dir,
        &work.join("collection.jsonl"),
        chosen.values().copied(),
    )?;
    eprintln!(
        "collection: {} records ({} embedded now) in {:.1} s",
        report.records,
        report.added,
        started.elapsed().as_secs_f64()
    );
    let index = Index::open(&dir)?;
    let bm25 = index.lexical()?;
    let mut vectors: BTreeMap<&str, Vec<f32>> = BTreeMap::new();
    let mut word_vectors: BTreeMap<&str, Words> = BTreeMap::new();
    let mut author_lists: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for id in chosen.keys() {
        let row = index
            .resolve_arxiv(id)?
            .ok_or_else(|| format!("{id}: not in the bench index"))?;
        vectors.insert(id, index.vector(row));
        let paper = index.paper(row)?;
        word_vectors.insert(id, words::of(&paper, bm25));
        author_lists.insert(id, authors::of(&paper));
    }

    if let Some(dump) = std::env::var_os("PAPERS_FEED_DUMP") {
        let dump = PathBuf::from(dump);
        std::fs::create_dir_all(&dump)?;
        let mut raw = Vec::new();
        for v in vectors.values() {
            for x in v {
                raw.extend_from_slice(&x.to_le_bytes());
            }
        }
        std::fs::write(dump.join("vectors.f32"), raw)?;
        let ids: Vec<&str> = vectors.keys().copied().collect();
        let cats: BTreeMap<&str, &Vec<String>> =
            chosen.iter().map(|(k, p)| (*k, &p.categories)).collect();
        let profs: Vec<serde_json::Value> = profiles
            .iter()
            .map(|(c, t, l, d)| {
                serde_json::json!([
                    c,
                    t,
                    l.iter().map(|p| &p.id).collect::<Vec<_>>(),
                    d.iter().map(|p| &p.id).collect::<Vec<_>>()
                ])
            })
            .collect();
        let day_ids: Vec<Vec<&str>> = days
            .iter()
            .map(|d| d.iter().map(|p| p.id.as_str()).collect())
            .collect();
        std::fs::write(
            dump.join("meta.json"),
            serde_json::json!({"ids": ids, "cats": cats, "profiles": profs, "days": day_ids})
                .to_string(),
        )?;
    }
    // Weak negatives as `papers feed` draws them.
    let mut scores: BTreeMap<(Ranker, bool), Vec<[f64; 3]>> = BTreeMap::new();
    let mut train_ms = BTreeMap::<Ranker, f64>::new();
    let mut calibrated_days = Vec::new();
    let mut replica_scores = replicated::Scores::new();
    let replica = args.iter().any(|a| a == "replica");
    let mut texts: BTreeMap<&str, String> = BTreeMap::new();
    if replica {
        for id in vectors.keys() {
            let row = index.resolve_arxiv(id)?.ok_or("not in the index")?;
            let paper = index.paper(row)?;
            let title = paper.meta.as_ref().map_or("", |m| m.title.as_str());
            texts.insert(id, format!("{title}. {}", paper.text));
        }
    }
    let collection: Vec<(&str, &[f32], String)> = texts
        .iter()
        .map(|(id, t)| (*id, vectors[id].as_slice(), t.clone()))
        .collect();
    let mut fits = Vec::new();
    let day_features = |day: &[&Paper]| -> (Vec<&[f32]>, Vec<Words>, Vec<Vec<String>>) {
        (
            day.iter()
                .map(|p| vectors[p.id.as_str()].as_slice())
                .collect(),
            day.iter()
                .map(|p| word_vectors[p.id.as_str()].clone())
                .collect(),
            day.iter()
                .map(|p| author_lists[p.id.as_str()].clone())
                .collect(),
        )
    };
    for (c, tuned, liked, disliked) in &profiles {
        let liked_ids: HashSet<&str> = liked.iter().map(|p| p.id.as_str()).collect();
        let others: Vec<&str> = vectors
            .keys()
            .copied()
            .filter(|id| !liked_ids.contains(id))
            .collect();
        let sample = papers::feed::background_sample(&others);
        let background: Vec<&[f32]> = sample.iter().map(|id| vectors[id].as_slice()).collect();
        let background_words = words::mean(
            &sample
                .iter()
                .step_by(papers::feed::WORDS_EVERY)
                .map(|id| &word_vectors[id])
                .collect::<Vec<_>>(),
        );
        let each_background = Batch::of(
            &sample
                .iter()
                .map(|id| &word_vectors[id])
                .collect::<Vec<_>>(),
        );
        let liked_words: Vec<&Words> = liked.iter().map(|p| &word_vectors[p.id.as_str()]).collect();
        let disliked_words: Vec<&Words> = disliked
            .iter()
            .map(|p| &word_vectors[p.id.as_str()])
            .collect();
        let authors_of = |ps: &[&Paper]| -> Vec<&[String]> {
            ps.iter()
                .map(|p| author_lists[p.id.as_str()].as_slice())
                .collect()
        };
        let examples = Examples {
            liked: liked
                .iter()
                .map(|p| vectors[p.id.as_str()].as_slice())
                .collect(),
            disliked: disliked
                .iter()
                .map(|p| vectors[p.id.as_str()].as_slice())
                .collect(),
            background,
            words: Some(ExampleWords {
                liked: liked_words,
                disliked: disliked_words,
                background: &background_words,
                each_background: Some(&each_background),
            }),
            authors: authors::tally(&authors_of(liked), &authors_of(disliked)),
        };
        if replica {
            let day_truth: Vec<(Vec<&str>, Vec<bool>)> = days
                .iter()
                .map(|d| {
                    (
                        d.iter().map(|p| p.id.as_str()).collect(),
                        d.iter().map(|p| has(p, c)).collect(),
                    )
                })
                .collect();
            replicated::score(
                &collection,
                &liked_ids,
                &day_truth,
                *tuned,
                &mut replica_scores,
                metrics,
            );
        }
        for ranker in Ranker::ALL {
            let t = Instant::now();
            let trained = Trained::new(ranker, &examples);
            *train_ms.entry(ranker).or_default() += t.elapsed().as_secs_f64() * 1000.0;
            if let Some(fit) = trained.calibration() {
                fits.push((*tuned, fit.to_array()));
            }
            for day in &days {
                let relevant: Vec<bool> = day.iter().map(|p| has(p, c)).collect();
                if ranker == papers::feed::CHOSEN {
                    let (vectors, words, authors) = day_features(day);
                    if let Some(scores) =
                        trained.probabilities(&vectors, Some(&Batch::new(&words)), Some(&authors))
                    {
                        calibrated_days.push(calibrated::Day {
                            tuned: *tuned,
                            scores,
                            relevant: relevant.clone(),
                            quiet: trained.calibration().map_or(0.0, |c| c.quiet),
                        });
                    }
                }
                if !relevant.contains(&true) {
                    continue;
                }
                let (day_vectors, day_words, day_authors) = day_features(day);
                let s = trained.score(
                    &day_vectors,
                    Some(&Batch::new(&day_words)),
                    Some(&day_authors),
                );
                let mut order: Vec<usize> = (0..day.len()).collect();
                order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(day[a].id.cmp(&day[b].id)));
                let ranked: Vec<bool> = order.iter().map(|&i| relevant[i]).collect();
                scores
                    .entry((ranker, *tuned))
                    .or_default()
                    .push(metrics(&ranked));
            }
        }
    }

    print_table(&scores, &train_ms, &profiles);
    replicated::print(&replica_scores);
    if args.iter().any(|a| a == "reader") {
        let reading = reader::Collection {
            vectors: &vectors,
            words: &word_vectors,
            authors: &author_lists,
            texts: &collection,
        };
        let day_ids: Vec<Vec<&str>> = days
            .iter()
            .map(|d| d.iter().map(|p| p.id.as_str()).collect())
            .collect();
        let by_id: BTreeMap<&str, &Paper> = chosen.iter().map(|(k, p)| (*k, *p)).collect();
        let mut table = reader::Table::new();
        for (c, tuned, liked, disliked) in &profiles {
            let relevant = |id: &str| has(by_id[id], c);
            let liked: Vec<&str> = liked.iter().map(|p| p.id.as_str()).collect();
            let disliked: Vec<&str> = disliked.iter().map(|p| p.id.as_str()).collect();
            let mut who = vec![reader::Who::Shipped];
            if replica {
                who.push(reader::Who::Replica);
            }
            for who in who {
                reader::simulate(
                    &reading,
                    who,
                    &liked,
                    &disliked,
                    &day_ids,
                    &relevant,
                    *tuned,
                    &mut table,
                    average_precision,
                );
            }
        }
        reader::print(&table);
    }
    calibrated::report(&calibrated_days, &fits);
    speed(&work, &dir, &days[DAYS - 1], &profiles)?;
    Ok(())
}

type Profile<'a> = (&'a str, bool, Vec<&'a Paper>, Vec<&'a Paper>);

fn print_table(
    scores: &BTreeMap<(Ranker, bool), Vec<[f64; 3]>>,
    train_ms: &BTreeMap<Ranker, f64>,
    profiles: &[Profile],
) {
    println!("| ranker | categories | pairs | MAP | nDCG@10 | P@10 | training ms/tag |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for tuned in [true, false] {
        for ranker in Ranker::ALL {
            let Some(rows) = scores.get(&(ranker, tuned)) else {
                continue;
            };
            let n = rows.len() as f64;
            let avg = |k: usize| rows.iter().map(|r| r[k]).sum::<f64>() / n;
            println!(
                "| {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.1} |",
                ranker.name(),
                if tuned {
                    "the ten of the issue".to_string()
                } else {
                    format!("{} held out", profiles.iter().filter(|p| !p.1).count())
                },
                rows.len(),
                avg(0),
                avg(1),
                avg(2),
                train_ms[&ranker] / profiles.len() as f64,
            );
        }
    }
}

/// `papers feed` as a user runs it, timed: a copy of the collection's
/// index whose last run added the last day (300 records, embedded again),
/// with the ten tuning categories as tags (20 liked, 20 not interested
/// each); then the real binary, a new process each time, ranks that day.
fn speed(work: &Path, collection: &Path, day: &[&Paper], profiles: &[Profile]) -> BoxResult<()> {
    let dir = work.join("speed-index");
    let ready = dir.join("ready");
    if !ready.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        copy_dir(collection, &dir)?;
        // Everything read but the last day: its 300 papers are the inbox.
        let index = Index::open(&dir)?;
        let day_ids: HashSet<&str> = day.iter().map(|p| p.id.as_str()).collect();
        let mut read = Vec::new();
        for row in 0..index.rows() {
            if index.is_live(row) {
                let paper = index.paper(row)?;
                if !paper.arxiv_id().is_some_and(|a| day_ids.contains(a)) {
                    read.push(paper.id.hex());
                }
            }
        }
        drop(index);
        let marked = papers::write::mark(
            &dir,
            papers::index::reading::ReadingState::Seen,
            &papers::feed::Marked::Ids(read),
            &Quiet,
        )?;
        eprintln!("speed index: {} papers in the inbox", marked.inbox);
        for (c, tuned, liked, disliked) in profiles {
            if !tuned {
                continue;
            }
            let ids = |ps: &[&Paper]| ps.iter().map(|p| p.id.clone()).collect::<Vec<_>>();
            papers::write::tag(
                &dir,
                &c.replace('.', "-"),
                &ids(liked),
                &ids(disliked),
                &Quiet,
            )?;
        }
        std::fs::write(&ready, b"")?;
    }
    let binary = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
            PathBuf::from,
        )
        .join("release/papers");
    if !binary.is_file() {
        eprintln!(
            "{}: not built; `cargo build --release` to time `papers feed`",
            binary.display()
        );
        return Ok(());
    }
    // A cache of its own. Emptied before each of the first runs, so that
    // they train every tag (what `papers tag` pays for one tag, and an
    // index run that grows the collection by a quarter for all; the tags
    // here were made through the library, which trains nothing ahead);
    // kept for the others, which read what was learnt back, as the feed
    // after `papers tag` or `papers index` does.
    let cache = work.join("speed-cache");
    let run = || -> BoxResult<(f64, usize)> {
        let t = Instant::now();
        let out = std::process::Command::new(&binary)
            .env("PAPERS_CACHE_DIR", &cache)
            .args([
                "--index",
                dir.to_str().unwrap_or_default(),
                "feed",
                "-k",
                "20",
                "--json",
            ])
            .output()?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        Ok((ms, out.stdout.iter().filter(|b| **b == b'\n').count()))
    };
    let mut training = Vec::new();
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(&cache);
        training.push(run()?.0);
    }
    let mut cached = Vec::new();
    let mut hits = 0;
    for _ in 0..11 {
        let (ms, n) = run()?;
        cached.push(ms);
        hits = n;
    }
    let spread = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!(
            "median {:.1} ms (min {:.1}, max {:.1})",
            v[v.len() / 2],
            v[0],
            v[v.len() - 1]
        )
    };
    println!();
    println!(
        "`papers feed -k 20 --json` over the 300 unmarked records (the inbox), 10 tags: \
         {hits} hits; a new process each time: training every tag (cache emptied, 5 runs) {}; \
         reading what was learnt back (11 runs) {}",
        spread(training),
        spread(cached)
    );
    Ok(())
}

/// Writes `papers` as JSON Lines to `input` and indexes them into `dir`
/// as `papers index` would.
fn index_records<'a>(
    dir: &Path,
    input: &Path,
    papers: impl Iterator<Item = &'a Paper>,
) -> BoxResult<papers::index::UpdateReport> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(input)?);
    for p in papers {
        writeln!(out, "{}", p.line)?;
    }
    out.flush()?;
    drop(out);
    let request = IndexRequest {
        paths: vec![input.to_path_buf()],
        model: ModelChoice {
            device: DeviceChoice::Cpu,
            ..Default::default()
        },
        ..Default::default()
    };
    Ok(write::index(dir, &request, &Quiet)?)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else if entry.file_name() != "lock" {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Average precision over the whole ranking, nDCG@10 and P@10 (binary).
fn average_precision(ranked: &[bool]) -> f64 {
    metrics(ranked)[0]
}

fn metrics(ranked: &[bool]) -> [f64; 3] {
    let total = ranked.iter().filter(|r| **r).count() as f64;
    let (mut hits, mut ap) = (0.0, 0.0);
    for (i, r) in ranked.iter().enumerate() {
        if *r {
            hits += 1.0;
            ap += hits / (i + 1) as f64;
        }
    }
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, r)| **r)
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let ideal: f64 = (0..(total as usize).min(10))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let p10 = ranked.iter().take(10).filter(|r| **r).count() as f64 / 10.0;
    [ap / total, dcg / ideal, p10]
}
