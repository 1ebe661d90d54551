//! Keeping results under the host's output cap.
//!
//! The host refuses a result whose text and structured content together
//! exceed its `max_output_bytes`, so the tools count what they add as they
//! go ([`Budget`]) and stop cleanly, with a note, before the cap.
//! [`json_len`] is the exact size of a string once serialised by
//! `serde_json`; [`shorten_line`] keeps one very long line from using the
//! whole budget.

/// The default output budget: under the host's default cap of 1 MiB, with
/// room for the envelope around the result.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 900 * 1024;

/// What the budget keeps back for notes, summaries and JSON punctuation that
/// are added after the last counted item.
pub const RESERVE: usize = 4 * 1024;

/// The longest line shown whole; a longer one is shown as a window around
/// its first match.
pub const MAX_LINE_BYTES: usize = 500;

/// A running count of the bytes a result may still use.
#[derive(Clone, Debug)]
pub struct Budget {
    left: usize,
}

impl Budget {
    /// A budget of `max_bytes`, less the [`RESERVE`].
    pub fn new(max_bytes: usize) -> Budget {
        Budget {
            left: max_bytes.saturating_sub(RESERVE),
        }
    }

    /// Takes `bytes` if they fit; returns whether they did.
    pub fn take(&mut self, bytes: usize) -> bool {
        if bytes <= self.left {
            self.left -= bytes;
            true
        } else {
            false
        }
    }
}

/// The length of `text` as a JSON string, quotes included, as `serde_json`
/// writes it (it escapes `"`, `\` and control characters only).
pub fn json_len(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// `line` (without its terminator) as text to show: decoded lossily, and cut
/// to a window of about [`MAX_LINE_BYTES`] around `focus` (a byte offset,
/// such as the start of the first match) when longer, with a marker saying
/// how long the line was.
pub fn shorten_line(line: &[u8], focus: usize) -> String {
    if line.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(line).into_owned();
    }
    let mut start = focus.min(line.len()).saturating_sub(MAX_LINE_BYTES / 5);
    let mut end = (start + MAX_LINE_BYTES).min(line.len());
    start = end.saturating_sub(MAX_LINE_BYTES).min(start);
    // Move both ends off UTF-8 continuation bytes, so no character is split.
    while start > 0 && is_continuation(line[start]) {
        start -= 1;
    }
    while end < line.len() && is_continuation(line[end]) {
        end += 1;
    }
    let mut text = String::with_capacity(end - start + 48);
    if start > 0 {
        text.push('…');
    }
    text.push_str(&String::from_utf8_lossy(&line[start..end]));
    if end < line.len() {
        text.push('…');
    }
    text.push_str(&format!(" [line of {} bytes, shortened]", line.len()));
    text
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// Removes a trailing `\n` or `\r\n`.
pub fn trim_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_matches_serde_json() {
        for text in [
            "",
            "plain",
            "quote \" and \\",
            "tab\tnew\nline\r",
            "\u{1}\u{1f}",
            "ünï €",
            "\u{7f}",
        ] {
            let encoded = toolcell_sdk::serde_json::to_string(text).unwrap();
            assert_eq!(json_len(text), encoded.len(), "{text:?}");
        }
    }

    #[test]
    fn budget_keeps_a_reserve() {
        let mut budget = Budget::new(RESERVE + 10);
        assert!(budget.take(6));
        assert!(!budget.take(5));
        assert!(budget.take(4));
        assert!(!Budget::new(3).take(1));
    }

    #[test]
    fn long_lines_are_cut_around_the_focus() {
        let short = "é".repeat(10);
        assert_eq!(shorten_line(short.as_bytes(), 0), short);

        let line = format!("{}NEEDLE{}", "é".repeat(1000), "x".repeat(3000));
        let focus = line.find("NEEDLE").unwrap();
        let shown = shorten_line(line.as_bytes(), focus);
        assert!(shown.contains("NEEDLE"), "{shown}");
        assert!(shown.starts_with('…') && shown.contains("…"), "{shown}");
        assert!(shown.ends_with(&format!("[line of {} bytes, shortened]", line.len())));
        assert!(shown.len() < MAX_LINE_BYTES + 64, "{}", shown.len());

        // A focus at the very end still shows a full window.
        let shown = shorten_line(line.as_bytes(), line.len());
        assert!(shown.len() > MAX_LINE_BYTES, "{}", shown.len());
    }

    #[test]
    fn terminators_are_trimmed() {
        assert_eq!(trim_terminator(b"a\r\n"), b"a");
        assert_eq!(trim_terminator(b"a\n"), b"a");
        assert_eq!(trim_terminator(b"a"), b"a");
    }
}
