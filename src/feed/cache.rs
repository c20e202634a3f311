//! What training a profile costs, kept between calls: what a tag's
//! training learnt (a classifier, or directions over vectors and words)
//! and the mean word vector of the collection's sample (the same for every
//! tag) are made once for a given state of the tag and of the collection,
//! then read back (`papers feed` is a new process each day; a server asks
//! many times).
//!
//! They are files in papers' cache folder (`PAPERS_CACHE_DIR`, else
//! `~/.cache/papers`): `profiles/KEY.f32` (a classifier or a direction:
//! the bias, then the weights, then a classifier's calibration's six
//! numbers where it has one, as little-endian f32),
//! `profiles/KEY-words.words` (a direction or weights over words),
//! `profiles/KEY-authors.words` (an authors' tally, in the same format)
//! and `profiles/KEY.words` (a word vector; the format is
//! [`store_words`]'s).
//!
//! Each file ends with a seal (the SHA-256 of its name and contents): a
//! file zeroed, cut or edited fails it, as does a weight that is not
//! finite or past 1e6, and is trained again instead of ranking with it.
//! Temporary files a killed run left are removed by the next write's
//! [`sweep`].
//!
//! KEY is the SHA-256 of what training depends on: the ranker, the
//! index's data folder and model weights, the size of the collection to
//! within a quarter ([`generation`]), and the tag's papers and marks. So a
//! tag is trained again when its marks change, or when the collection has
//! grown (or shrunk) by about a quarter since; not after every daily
//! `index` run, which adds a few hundred papers to thousands and leaves the
//! weak negatives (a sample of the collection) as representative as they
//! were. The commands that write train what they made stale
//! ([`super::prepare`]), so the feed after them only reads back. Nothing
//! in the index is written; a cache that cannot be read or written only
//! costs the training.

use std::path::PathBuf;

use super::calibration::Calibration;
use super::ranker::Learnt;
use super::svm::Linear;
use super::words::Words;
use crate::index::Index;

/// The cache key of the profile of a tag whose papers are `marks` (full
/// ids with liked or not) on `index`, trained by `ranker`.
pub fn key(index: &Index, ranker: &str, marks: &[(String, bool)]) -> String {
    let mut hash = crate::digest::Hasher::default();
    let generation = generation(index.state().live);
    for part in [
        ranker,
        &std::fs::canonicalize(index.data_dir())
            .unwrap_or_else(|_| index.data_dir().to_path_buf())
            .display()
            .to_string(),
        &index.manifest().weights_sha256,
        &generation.to_string(),
        &super::ranker::BACKGROUND.to_string(),
        FORMAT,
    ] {
        hash.part(part.as_bytes());
    }
    let mut marks = marks.to_vec();
    marks.sort();
    for (id, liked) in marks {
        hash.update(id.as_bytes());
        hash.update(&[liked as u8]);
    }
    hash.finish()
}

/// The collection's size class: `live` records fall in class n when
/// 1.25^n <= live < 1.25^(n+1).
pub fn generation(live: u64) -> u32 {
    let mut n = 0;
    let mut bound = 1.25f64;
    while bound <= live as f64 {
        n += 1;
        bound *= 1.25;
    }
    n
}

/// The layout of the files, in the key: a change of it (version 2 added
/// the calibration, 3 its "nothing today" threshold) leaves the old files
/// unread.
const FORMAT: &str = "profile files v3";

/// The bytes of the seal each cache file ends with.
const SEAL: usize = 64;

/// The seal of a cache file: the SHA-256 (hex) of its name and contents,
/// so a file zeroed, cut or edited by anything but [`write`] fails its
/// check on load and only costs a training.
fn seal(name: &str, body: &[u8]) -> Vec<u8> {
    let mut hash = crate::digest::Hasher::default();
    hash.part(name.as_bytes());
    hash.update(body);
    hash.finish().into_bytes()
}

/// The body of a file read from `path`, if its seal holds.
fn unsealed(path: &std::path::Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    let at = bytes.len().checked_sub(SEAL)?;
    let name = path.file_name()?.to_string_lossy();
    if bytes[at..] != seal(&name, &bytes[..at]) {
        return None;
    }
    bytes.truncate(at);
    Some(bytes)
}

/// The largest weight a profile may hold: the classifiers' weights are
/// under 10 in every training measured; one past this is damage.
const MOST: f32 = 1e6;

fn path(key: &str) -> Option<PathBuf> {
    crate::embed::source::cache_dir()
        .ok()
        .map(|d| d.join("profiles").join(format!("{key}.f32")))
}

/// The profile stored under `key`, if there is a whole one of
/// `dimension` (with its word side when `words`, its authors' tally and
/// calibration when `authors`: the classifier's).
pub fn load(key: &str, dimension: usize, words: bool, authors: bool) -> Option<Learnt> {
    let bytes = unsealed(&path(key)?)?;
    let calibrated = if authors { 6 } else { 0 };
    if bytes.len() != 4 * (dimension + 1 + calibrated) {
        return None;
    }
    let mut values = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    let b = values.next()?;
    let mut w: Vec<f32> = values.collect();
    let calibration = if authors {
        let tail: [f32; 6] = w.split_off(dimension).try_into().ok()?;
        Some(Calibration::from_array(tail)?)
    } else {
        None
    };
    if !std::iter::once(&b)
        .chain(&w)
        .all(|x| x.is_finite() && x.abs() <= MOST)
    {
        return None;
    }
    let terms = if words {
        Some(load_words(&format!("{key}-words"))?)
    } else {
        None
    };
    let authors = if authors {
        Some(load_words(&format!("{key}-authors"))?)
    } else {
        None
    };
    Some(Learnt {
        linear: Linear { w, b },
        terms,
        authors,
        calibration,
    })
}

/// Whether a profile is stored under `key` (its word side and authors'
/// tally are written before it, so they are there too). Whole or not is
/// [`load`]'s to say: a damaged file is trained again when it is read.
pub fn stored(key: &str) -> bool {
    path(key).is_some_and(|p| p.is_file())
}

/// The word vector stored under `key`, if there is a whole one.
pub fn load_words(key: &str) -> Option<Words> {
    let bytes = unsealed(&path(key)?.with_extension("words"))?;
    // An entry is at least 9 bytes, most about 16.
    let mut words = Words::with_capacity_and_hasher(bytes.len() / 16, Default::default());
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        let (len, tail) = rest.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        let term = std::str::from_utf8(tail.get(..len)?).ok()?;
        let (weight, tail) = tail.get(len..)?.split_first_chunk::<4>()?;
        let weight = f32::from_le_bytes(*weight);
        if !weight.is_finite() || weight.abs() > MOST {
            return None;
        }
        words.insert(term.to_string(), weight);
        rest = tail;
    }
    Some(words)
}

/// Stores a word vector under `key`, best effort: each term as its byte
/// length (u32), its UTF-8 bytes and its weight (f32), little-endian.
/// Binary, so a weight reads back bit for bit (a profile read
/// back ranks exactly as the one just trained) and fast.
pub fn store_words(key: &str, words: &Words) {
    let Some(path) = path(key).map(|p| p.with_extension("words")) else {
        return;
    };
    let mut bytes = Vec::with_capacity(words.len() * 16);
    for (term, weight) in words {
        bytes.extend_from_slice(&(term.len() as u32).to_le_bytes());
        bytes.extend_from_slice(term.as_bytes());
        bytes.extend_from_slice(&weight.to_le_bytes());
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
        write(&path, &bytes);
    }
}

/// Stores `learnt` under `key`, best effort (the word side and the
/// authors first, so a classifier file is only there with them).
pub fn store(key: &str, learnt: &Learnt) {
    let Some(path) = path(key) else {
        return;
    };
    if let Some(terms) = &learnt.terms {
        store_words(&format!("{key}-words"), terms);
    }
    if let Some(authors) = &learnt.authors {
        store_words(&format!("{key}-authors"), authors);
    }
    let linear = &learnt.linear;
    let mut bytes = Vec::with_capacity(4 * (linear.w.len() + 1));
    let calibration = learnt.calibration.map(Calibration::to_array);
    for x in std::iter::once(&linear.b)
        .chain(&linear.w)
        .chain(calibration.iter().flatten())
    {
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    write(&path, &bytes);
}

/// Writes `bytes` and their seal to `path` through a temporary file
/// renamed over it, so a reader sees the old file or the new one, never
/// half of one. Not synced to disk: a cache file lost or torn by a crash
/// fails its seal on load and only costs a training, and syncing the 21
/// files of a ten-tag feed took more than its ranking. A temporary file
/// that could not be written whole (a full disk) is removed.
fn write(path: &std::path::Path, bytes: &[u8]) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut sealed = bytes.to_vec();
    sealed.extend(seal(&name, bytes));
    if std::fs::write(&tmp, &sealed).is_err() || std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// How old a temporary cache file must be before it counts as left by a
/// killed run: a writer renames its own within a second.
const ABANDONED: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary files (`write`'s) that runs killed mid-write
/// left in the cache's `profiles` folder; called by [`super::prepare`],
/// which the writing commands run. Returns how many went.
pub fn sweep() -> usize {
    let Some(dir) = path("x").and_then(|p| p.parent().map(PathBuf::from)) else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now();
    let mut gone = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let temporary = name
            .rsplit_once(".tmp-")
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|age| age >= ABANDONED);
        if temporary && old && std::fs::remove_file(entry.path()).is_ok() {
            gone += 1;
        }
    }
    gone
}

#[cfg(test)]
mod tests {
    use super::generation;

    #[test]
    fn a_generation_spans_a_quarter_of_growth() {
        assert_eq!(generation(0), 0);
        assert_eq!(generation(1), 0);
        // 1.25^41 = 9,403.95 and 1.25^42 = 11,754.9.
        assert_eq!(generation(9_403), 40);
        assert_eq!(generation(9_404), 41);
        assert_eq!(generation(11_754), 41);
        assert_eq!(generation(11_755), 42);
        // A day of 300 on the feed benchmark's 15,580 leaves it as it
        // was; a quarter more does not.
        assert_eq!(generation(15_580), generation(15_880));
        assert_ne!(generation(15_580), generation(15_580 * 5 / 4 + 1));
    }
}
