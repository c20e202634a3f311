//! Tagging, the write side of profiles: `papers tag NAME ID...` marks
//! papers as liked in a tag, `--not ID...` as not interested, `papers
//! untag` takes them out; each change is one transaction of a write
//! session, so it never meets a running `papers index` half-way, and the
//! session's commit trains the tag. Ids resolve as everywhere (unique
//! prefixes, arXiv ids) and are stored in full.

use std::path::Path;

use super::request::{begin_existing, Observer};
use crate::error::{Error, Result};
use crate::feed::tags::{known, summary_of, TagChange};
use crate::id::Wanted;
use crate::index::tags::validate_name;
use crate::index::write::Outcome;

/// A reader's answer from a front end that is not the CLI (the page's like
/// / not-interested buttons, MCP's `tag`): `ids` tagged liked in `name`,
/// or not interested, then the tag trained at once, as every write trains
/// the tags it made stale, so the next feed reads it back.
pub fn answer(dir: &Path, name: &str, ids: Vec<String>, not_interested: bool) -> Result<TagChange> {
    let (liked, disliked) = if not_interested {
        (Vec::new(), ids)
    } else {
        (ids, Vec::new())
    };
    // The session's commit trains the tag.
    tag(dir, name, &liked, &disliked, &super::Quiet)
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
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
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
    session.database()?.set_tag(name, &marks)?;
    let summary = summary_of(&session.commit(Outcome::Changed)?, name)?;
    Ok(TagChange { summary, changed })
}

/// Takes `ids` (in any form) out of `tag`; an unknown tag, or an id not
/// in it, is an error and changes nothing.
pub fn untag(dir: &Path, name: &str, ids: &[String], observer: &dyn Observer) -> Result<TagChange> {
    validate_name(name)?;
    let session = begin_existing(dir, observer)?;
    let index = session.existing()?;
    let entries = known(index, name)?;
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
    let changed = session.database()?.untag(name, &full)?;
    let summary = summary_of(&session.commit(Outcome::Changed)?, name)?;
    Ok(TagChange { summary, changed })
}
