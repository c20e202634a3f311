//! Tagging: the write side of profiles. `papers tag NAME ID...` marks
//! papers as liked in a tag, `--not ID...` as not interested, `papers untag`
//! takes them out; each change is one transaction under the index's writer
//! lock, so it never meets a running `papers index` half-way. Ids resolve
//! as everywhere (unique prefixes, arXiv ids) and are stored in full.
//! The read side, for ranking: `gather` turns tags into rows of the
//! index.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use crate::error::{Error, Result};
use crate::id::Wanted;
use crate::index::db::Db;
use crate::index::tags::{validate_name, TagEntry};
use crate::index::Index;
use crate::write::{lock_index, Observer};

/// One tag and what it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagSummary {
    /// The tag's name.
    pub name: String,
    /// Liked papers in the index.
    pub liked: usize,
    /// Papers marked not interested, in the index.
    pub disliked: usize,
    /// Tagged papers no longer in the index (removed, or not in a rebuild).
    pub missing: usize,
}

/// What a `tag` or `untag` changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagChange {
    /// The tag as it is now.
    pub summary: TagSummary,
    /// Ids newly marked, or taken out.
    pub changed: usize,
}

/// A reader's answer from a front end that is not the CLI (the page's like
/// / not-interested buttons, MCP's `tag`): `ids` tagged liked in `name`,
/// or not interested, then the tag trained at once, as `papers tag` does,
/// so the next feed reads it back.
pub fn answer(dir: &Path, name: &str, ids: Vec<String>, not_interested: bool) -> Result<TagChange> {
    let (liked, disliked) = if not_interested {
        (Vec::new(), ids)
    } else {
        (ids, Vec::new())
    };
    let change = tag(dir, name, &liked, &disliked, &crate::write::Quiet)?;
    // Best effort, as the cache is: a failure only costs the next feed
    // the training.
    let _ = crate::index::Index::open(dir).and_then(|index| super::prepare(&index));
    Ok(change)
}

/// Marks `liked` and `disliked` (ids in any form) in `tag`.
pub fn tag(
    dir: &Path,
    name: &str,
    liked: &[String],
    disliked: &[String],
    observer: &dyn Observer,
) -> Result<TagChange> {
    validate_name(name)?;
    if liked.is_empty() && disliked.is_empty() {
        return Err(Error::InvalidArgument {
            name: "ID".into(),
            reason: format!(
                "name papers to tag: `papers tag {name} ID...` (liked) or `--not ID...`"
            ),
        });
    }
    let _lock = lock_index(dir, observer)?;
    let index = Index::open(dir)?;
    let mut marks = Vec::new();
    for (ids, like) in [(liked, true), (disliked, false)] {
        for id in ids {
            let paper = index.paper(index.resolve(&Wanted::parse(id))?)?;
            marks.push((paper.id.hex(), like));
        }
    }
    let before = index.tag_entries(Some(name))?;
    let changed = marks
        .iter()
        .filter(|(id, like)| !before.iter().any(|e| &e.id == id && e.liked == *like))
        .count();
    Db::open(index.data_dir(), true)?.set_tag(name, &marks)?;
    Ok(TagChange {
        summary: summary_of(&Index::open(dir)?, name)?,
        changed,
    })
}

/// Takes `ids` (in any form) out of `tag`; an unknown tag, or an id not
/// in it, is an error and changes nothing.
pub fn untag(dir: &Path, name: &str, ids: &[String], observer: &dyn Observer) -> Result<TagChange> {
    validate_name(name)?;
    let _lock = lock_index(dir, observer)?;
    let index = Index::open(dir)?;
    let entries = known(&index, name)?;
    let mut full = Vec::new();
    for id in ids {
        // A tagged paper that was removed since can still be untagged by
        // its full id or a prefix of it.
        let hex = match index.resolve(&Wanted::parse(id)) {
            Ok(row) => index.paper(row)?.id.hex(),
            Err(e) => match entries
                .iter()
                .filter(|t| t.id.starts_with(id.as_str()))
                .count()
            {
                1 => entries
                    .iter()
                    .find(|t| t.id.starts_with(id.as_str()))
                    .map(|t| t.id.clone())
                    .unwrap_or_default(),
                _ => return Err(e),
            },
        };
        if !entries.iter().any(|t| t.id == hex) {
            return Err(Error::InvalidArgument {
                name: "ID".into(),
                reason: format!("{id} is not in tag `{name}`"),
            });
        }
        full.push(hex);
    }
    let changed = Db::open(index.data_dir(), true)?.untag(name, &full)?;
    Ok(TagChange {
        summary: summary_of(&Index::open(dir)?, name)?,
        changed,
    })
}

/// Every tag with its counts, by name.
pub fn summaries(index: &Index) -> Result<Vec<TagSummary>> {
    summarise(index, index.tag_entries(None)?)
}

/// Each tag of `entries` with its counts, by name.
fn summarise(index: &Index, entries: Vec<TagEntry>) -> Result<Vec<TagSummary>> {
    let mut tags: BTreeMap<String, TagSummary> = BTreeMap::new();
    for entry in entries {
        let live = index.row_of(entry_id(&entry)?)?.is_some();
        let summary = tags.entry(entry.tag.clone()).or_insert_with(|| TagSummary {
            name: entry.tag.clone(),
            ..Default::default()
        });
        match (live, entry.liked) {
            (false, _) => summary.missing += 1,
            (true, true) => summary.liked += 1,
            (true, false) => summary.disliked += 1,
        }
    }
    Ok(tags.into_values().collect())
}

/// The entries of `name`, or [`Error::UnknownTag`] when it has none.
pub fn known(index: &Index, name: &str) -> Result<Vec<TagEntry>> {
    let entries = index.tag_entries(Some(name))?;
    if entries.is_empty() {
        return Err(Error::UnknownTag {
            tag: name.to_string(),
            known: summaries(index)?.into_iter().map(|s| s.name).collect(),
        });
    }
    Ok(entries)
}

fn summary_of(index: &Index, name: &str) -> Result<TagSummary> {
    Ok(summarise(index, index.tag_entries(Some(name))?)?
        .into_iter()
        .next()
        .unwrap_or_else(|| TagSummary {
            name: name.to_string(),
            ..Default::default()
        }))
}

/// The paper id of an entry.
pub(crate) fn entry_id(entry: &TagEntry) -> Result<crate::paper::PaperId> {
    entry.id.parse()
}

/// A tag's papers as rows: its name, the liked and those marked not
/// interested.
pub(super) type TagRows = (String, Vec<usize>, Vec<usize>);

/// The tags to rank by, as rows.
pub(super) struct Gathered {
    /// Each tag with a liked paper in the index.
    pub wanted: Vec<TagRows>,
    /// The full id of each tagged row.
    pub ids: HashMap<usize, String>,
    /// Every row of those tags.
    pub tagged: HashSet<usize>,
    /// Tags left out, with why (only when no tag was named).
    pub skipped: Vec<String>,
}

/// The tags `names` (every tag when empty) as rows; `None` when no name
/// was given and the index has no tag at all. A named tag with no liked
/// paper in the index is an error; among all tags, one is skipped.
pub(super) fn gather(index: &Index, names: &[String]) -> Result<Option<Gathered>> {
    let named = !names.is_empty();
    // Every tag's entries are read at once when every tag is wanted, each
    // named one's by itself otherwise.
    let mut entries: BTreeMap<String, Vec<TagEntry>> = BTreeMap::new();
    if named {
        for name in names {
            validate_name(name)?;
            entries.insert(name.clone(), known(index, name)?);
        }
    } else {
        for entry in index.tag_entries(None)? {
            entries.entry(entry.tag.clone()).or_default().push(entry);
        }
        if entries.is_empty() {
            return Ok(None);
        }
    }
    let mut gathered = Gathered {
        wanted: Vec::new(),
        ids: HashMap::new(),
        tagged: HashSet::new(),
        skipped: Vec::new(),
    };
    let order: Vec<String> = if named {
        names.to_vec()
    } else {
        entries.keys().cloned().collect()
    };
    for name in order {
        let mut liked = Vec::new();
        let mut disliked = Vec::new();
        for entry in entries.get(&name).into_iter().flatten() {
            if let Some(row) = index.row_of(entry_id(entry)?)? {
                gathered.tagged.insert(row);
                gathered.ids.insert(row, entry.id.clone());
                if entry.liked {
                    liked.push(row);
                } else {
                    disliked.push(row);
                }
            }
        }
        if liked.is_empty() {
            let why = format!(
                "tag `{name}` has no liked paper in the index ({} marked not interested): \
                 add one with `papers tag {name} ID...`",
                disliked.len()
            );
            if named {
                return Err(Error::Feed(why));
            }
            gathered.skipped.push(why);
            continue;
        }
        gathered.wanted.push((name, liked, disliked));
    }
    if gathered.wanted.is_empty() {
        return Err(Error::Feed(gathered.skipped.join("; ")));
    }
    Ok(Some(gathered))
}
