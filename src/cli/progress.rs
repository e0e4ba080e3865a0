//! Progress bars on stderr for the verbs that can run long (`append -`,
//! `import`, `verify`, `export`, `replay`). indicatif draws nothing when
//! stderr is not a terminal, so scripts and `--json` readers see only
//! their output; short work gets no bar at all, so it does not flicker.

use arbiter::event::Event;
use arbiter::fold::Source;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this many events finishes before a bar would help.
const SHOWN_FROM: u64 = 1_000;

/// A bar for `len` events (a spinner with a count when the length is not
/// known until the end, as for an export file), labelled `what`.
pub fn bar(len: Option<u64>, what: &'static str) -> ProgressBar {
    if len.is_some_and(|l| l < SHOWN_FROM) {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(len) => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} events, {per_sec}, {eta} left")
                .expect("template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(ProgressStyle::with_template("{spinner} {msg}: {pos} events, {per_sec}").expect("template")),
    };
    bar.with_message(what)
}

/// A source that moves `bar` on for every event read from it. The library
/// reads through it as from any source; the bar stays at the edge.
pub struct Ticking<'a, S: ?Sized> {
    pub source: &'a S,
    pub bar: &'a ProgressBar,
}

impl<S: Source + ?Sized> Source for Ticking<'_, S> {
    type Error = S::Error;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, S::Error>> + '_> {
        let bar = self.bar;
        Box::new(self.source.events_from(from).inspect(move |_| bar.inc(1)))
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, S::Error> {
        self.source.hash_of(seq)
    }
    // Ticks on the thread that reads, if `verify` reads on one of its own.
    fn stored_from(&self, from: u64) -> Option<arbiter::fold::StoredBytes<'_, S::Error>> {
        let bar = self.bar;
        Some(Box::new(self.source.stored_from(from)?.inspect(move |_| bar.inc(1))))
    }
    // A fold that starts from a snapshot reads fewer events: the bar
    // starts where the snapshot leaves off.
    fn snapshot(&self, seq: u64) -> Option<(arbiter::fold::Folder, arbiter::event::Link)> {
        let found = self.source.snapshot(seq);
        if let Some((folder, _)) = &found {
            self.bar.inc(folder.len());
        }
        found
    }
}
