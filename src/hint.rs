//! The commands a message suggests: how to rebuild an index, with the
//! folders its records came from when the command line is not at hand.

use std::path::{Path, PathBuf};

use crate::index::Index;

/// The command that rebuilds the index at `dir` from `paths` with `model`,
/// for hints.
pub fn rebuild_command(dir: &Path, model: &str, paths: &[PathBuf]) -> String {
    let mut command = format!(
        "papers --index {} index --rebuild --model {model}",
        dir.display()
    );
    for path in paths {
        command.push(' ');
        command.push_str(&path.display().to_string());
    }
    command
}

/// Input paths joined for a message.
pub fn joined(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The folders an index's records came from, sorted: what a rebuild hint
/// names when the original command line is not at hand.
pub fn source_dirs(index: &Index) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let _ = index.for_each_paper(|_, paper| {
        dirs.extend(paper.sources.iter().map(|s| {
            Path::new(&s.path)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from(&s.path), Path::to_path_buf)
        }));
        Ok(())
    });
    dirs.sort();
    dirs.dedup();
    dirs
}
