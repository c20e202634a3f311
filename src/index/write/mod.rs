//! The storage half of writing: everything that changes an index's files,
//! under the writer lock (`lock`), ends in one commit of a new state
//! (`commit`): the records an update adds, replaces or removes
//! (`update`), embedded while their rows are staged (`staged`) or
//! given with their vectors (`import`); the data folders that are
//! papers' and the leftovers to remove ([`ownership`]); an old format
//! brought to this one (`upgrade`). [`Session`] is the one way in and
//! out: every write begins one and ends in its commit.

pub(crate) mod commit;
pub(crate) mod import;
pub(crate) mod lock;
pub mod ownership;
pub mod session;
pub(crate) mod staged;
pub(crate) mod update;
pub(crate) mod upgrade;

pub use session::{Open, Outcome, Session};
