//! Progress reports from long searches.
//!
//! A [`Progress`] counts the work a search does (files searched, entries
//! walked, files read) and passes the count and a message to its sink every
//! [`EVERY`] items. The tools' sink is the host's `report-progress`, a host
//! call: once per file would add a crossing to every file, while every few
//! hundred costs nothing next to the work and still shows a search over a
//! large tree is alive. The count only grows, so reports strictly increase,
//! as MCP requires; the total is not known while walking.

/// How many items pass between two reports.
pub const EVERY: u64 = 500;

/// Where reports go: the count so far and a message for people.
pub type Sink<'a> = &'a mut dyn FnMut(u64, &str);

/// A counter of work done that reports every [`EVERY`] items.
pub struct Progress<'a> {
    sink: Option<Sink<'a>>,
    done: u64,
}

impl Progress<'static> {
    /// A counter that reports nowhere.
    pub fn none() -> Progress<'static> {
        Progress {
            sink: None,
            done: 0,
        }
    }
}

impl<'a> Progress<'a> {
    /// A counter that reports to `sink`.
    pub fn new(sink: Sink<'a>) -> Progress<'a> {
        Progress {
            sink: Some(sink),
            done: 0,
        }
    }

    /// Counts one more item; on every [`EVERY`]th, reports the count with
    /// the message `message` makes from it (made only then).
    pub fn tick(&mut self, message: impl FnOnce(u64) -> String) {
        self.done += 1;
        if self.done.is_multiple_of(EVERY)
            && let Some(sink) = self.sink.as_mut()
        {
            sink(self.done, &message(self.done));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_so_often_and_increasing() {
        let mut reports = Vec::new();
        let mut sink = |done: u64, message: &str| reports.push((done, message.to_string()));
        let mut progress = Progress::new(&mut sink);
        let mut messages_made = 0;
        for _ in 0..(EVERY * 3 + 7) {
            progress.tick(|done| {
                messages_made += 1;
                format!("{done} files")
            });
        }
        assert_eq!(messages_made, 3, "a message is made only for a report");
        assert_eq!(
            reports,
            [
                (EVERY, format!("{EVERY} files")),
                (EVERY * 2, format!("{} files", EVERY * 2)),
                (EVERY * 3, format!("{} files", EVERY * 3)),
            ]
        );
        Progress::none().tick(|_| unreachable!("no sink, no message"));
    }
}
