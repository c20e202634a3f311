//! A model loaded on another thread while the caller gets on with its own
//! work: a new index embeds everything it reads, so its model (the weights'
//! checksum, the device, on a GPU the kernels' compilation) loads while the
//! inputs are parsed rather than after.

use std::thread::JoinHandle;

use super::{LoadedModel, ModelChoice};
use crate::error::Result;

/// A load under way; dropping it leaves the thread to finish on its own.
pub struct Loading {
    thread: JoinHandle<(Result<LoadedModel>, Vec<String>)>,
}

impl ModelChoice {
    /// Starts [`ModelChoice::load`] for a new index (no manifest to check
    /// against) on another thread; its notes wait for [`Loading::finish`].
    pub fn load_in_background(&self) -> Loading {
        let choice = self.clone();
        let thread = std::thread::spawn(move || {
            let notes = std::sync::Mutex::new(Vec::new());
            let note = |m: &str| {
                if let Ok(mut notes) = notes.lock() {
                    notes.push(m.to_string());
                }
            };
            let loaded = choice.load(None, &|_| String::new(), &note);
            (loaded, notes.into_inner().unwrap_or_default())
        });
        Loading { thread }
    }
}

impl Loading {
    /// Waits for the model, telling `note` what the load said, in order.
    pub fn finish(self, note: &dyn Fn(&str)) -> Result<LoadedModel> {
        // A panic there is the same bug it would be here: it goes on.
        let (loaded, notes) = self
            .thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        for line in &notes {
            note(line);
        }
        loaded
    }
}
