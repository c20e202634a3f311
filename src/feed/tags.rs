//! Tags, the read side: what each holds ([`summaries`]), and, for
//! ranking, `gather` turns tags into rows of the index. Tagging is a write
//! ([`crate::write::tag()`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{Error, Result};
use crate::index::tags::{validate_name, TagEntry};
use crate::index::Index;

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

pub(crate) fn summary_of(index: &Index, name: &str) -> Result<TagSummary> {
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
