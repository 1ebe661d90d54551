//! Line diffs as git computes them: Myers, then git's group compaction
//! with its indent heuristic (git's default since 2.14).
//!
//! The group sliding (xdiff's `xdl_change_compact`: slide each group of
//! changed lines up and down over equal lines, merge groups that meet,
//! align a group with a change on the other side when it can) is gix's
//! postprocessor, which runs it as git does (removals, then additions).
//! Where a group may still slide, the position is chosen here, scored as
//! git's `measure_split`, `score_add_split` and `score_cmp` do: gix's own
//! scoring differs from git's (there a dedent with no non-blank line after
//! it counts as an outdent, and `\f` as white space), which moved hunk
//! boundaries and blamed lines away from git's.

use std::ops::Range;

use gix::diff::blob::{Algorithm, Diff, InternedInput, Token};

/// Columns of indentation counted at most, as git's `MAX_INDENT`.
const MAX_INDENT: i32 = 200;
/// Blank lines looked through at most around a split, as git's `MAX_BLANKS`.
const MAX_BLANKS: i32 = 20;
/// Positions tried at most for one group, as git's
/// `INDENT_HEURISTIC_MAX_SLIDING`.
const MAX_SLIDING: i64 = 100;

// git's weights (xdiff/xdiffi.c), tuned there on a corpus of real diffs.
const START_OF_FILE_PENALTY: i32 = 1;
const END_OF_FILE_PENALTY: i32 = 21;
const TOTAL_BLANK_WEIGHT: i32 = -30;
const POST_BLANK_WEIGHT: i32 = 6;
const RELATIVE_INDENT_PENALTY: i32 = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY: i32 = 10;
const RELATIVE_OUTDENT_PENALTY: i32 = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY: i32 = 17;
const RELATIVE_DEDENT_PENALTY: i32 = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY: i32 = 17;
const INDENT_WEIGHT: i32 = 60;

/// The line diff from `input.before` to `input.after`, as git's default
/// `git diff` (Myers, indent heuristic) would show it.
pub fn line_diff(input: &InternedInput<&[u8]>) -> Diff {
    let mut diff = Diff::compute(Algorithm::Myers, input);
    // One indent per distinct line, so each split costs no rescans.
    let indents: Vec<i32> = (0..input.interner.num_tokens())
        .map(|token| indent(input.interner[Token(token)]))
        .collect();
    diff.postprocess_with_heuristic(
        input,
        |tokens: &[Token], group: Range<u32>, earliest_end: u32| {
            best_end(&indents, tokens, group, earliest_end)
        },
    );
    diff
}

/// `old` and `new` without the longest common tail of whole 1 KiB blocks,
/// given back up to the end of its first line: git's `trim_common_tail`,
/// which git applies before every diff without context lines (blame's, and
/// `-U0`). It changes the answer, not only the speed: the sliding of a group
/// near the cut sees the end of the file there, and the limit at which a line
/// counts as frequent follows the line count.
pub fn trim_common_tail<'a>(old: &'a [u8], new: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    const BLOCK: usize = 1024;
    let smaller = old.len().min(new.len());
    let mut trimmed = 0;
    while trimmed + BLOCK <= smaller
        && old[old.len() - trimmed - BLOCK..old.len() - trimmed]
            == new[new.len() - trimmed - BLOCK..new.len() - trimmed]
    {
        trimmed += BLOCK;
    }
    let tail = &old[old.len() - trimmed..];
    let kept = tail
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(trimmed, |newline| newline + 1);
    (
        &old[..old.len() - trimmed + kept],
        &new[..new.len() - trimmed + kept],
    )
}

/// The indentation of `line` in columns (tabs to the next multiple of 8),
/// or -1 when it holds only white space: git's `get_indent`, whose white
/// space is git's own `isspace` (space, `\t`, `\n`, `\r`; not `\f`, `\v`).
fn indent(line: &[u8]) -> i32 {
    let mut columns = 0;
    for &byte in line {
        match byte {
            b' ' => columns += 1,
            b'\t' => columns += 8 - columns % 8,
            b'\n' | b'\r' => {}
            _ => return columns,
        }
        if columns >= MAX_INDENT {
            return MAX_INDENT;
        }
    }
    -1
}

/// Where a group of changed lines that can slide between ending at
/// `earliest_end` and ending at `group.end` should end: the last of the
/// best-scored positions among the lowest `MAX_SLIDING` + 1.
fn best_end(indents: &[i32], tokens: &[Token], group: Range<u32>, earliest_end: u32) -> u32 {
    let end = i64::from(group.end);
    let size = i64::from(group.end - group.start);
    let mut shift = i64::from(earliest_end)
        .max(end - size - 1)
        .max(end - MAX_SLIDING);
    let mut best: Option<(i64, Score)> = None;
    while shift <= end {
        let mut score = Score::default();
        score.add(&Split::measure(indents, tokens, shift));
        score.add(&Split::measure(indents, tokens, shift - size));
        if best.is_none_or(|(_, best)| score.cmp(&best) <= 0) {
            best = Some((shift, score));
        }
        shift += 1;
    }
    best.map_or(group.end, |(shift, _)| shift as u32)
}

/// The surroundings of a split before line `split`: git's
/// `split_measurement`.
struct Split {
    end_of_file: bool,
    /// The indent of the line after the split, -1 if blank or none.
    indent: i32,
    /// Blank lines just before the split.
    pre_blank: i32,
    /// The indent of the nearest non-blank line before, -1 if none.
    pre_indent: i32,
    /// Blank lines after the line after the split.
    post_blank: i32,
    /// The indent of the nearest non-blank line after that line, -1 if none.
    post_indent: i32,
}

impl Split {
    fn measure(indents: &[i32], tokens: &[Token], split: i64) -> Split {
        let at = |line: usize| indents[tokens[line].0 as usize];
        let lines = tokens.len() as i64;
        let (end_of_file, indent) = if split >= lines {
            (true, -1)
        } else {
            (false, at(split as usize))
        };
        let (mut pre_blank, mut pre_indent) = (0, -1);
        for line in (0..split.min(lines)).rev() {
            pre_indent = at(line as usize);
            if pre_indent != -1 {
                break;
            }
            pre_blank += 1;
            if pre_blank == MAX_BLANKS {
                pre_indent = 0;
                break;
            }
        }
        let (mut post_blank, mut post_indent) = (0, -1);
        for line in (split + 1).max(0)..lines {
            post_indent = at(line as usize);
            if post_indent != -1 {
                break;
            }
            post_blank += 1;
            if post_blank == MAX_BLANKS {
                post_indent = 0;
                break;
            }
        }
        Split {
            end_of_file,
            indent,
            pre_blank,
            pre_indent,
            post_blank,
            post_indent,
        }
    }
}

/// The badness of a pair of splits (lower is better): git's `split_score`.
#[derive(Clone, Copy, Default)]
struct Score {
    effective_indent: i32,
    penalty: i32,
}

impl Score {
    /// git's `score_add_split`.
    fn add(&mut self, split: &Split) {
        if split.pre_indent == -1 && split.pre_blank == 0 {
            self.penalty += START_OF_FILE_PENALTY;
        }
        if split.end_of_file {
            self.penalty += END_OF_FILE_PENALTY;
        }
        let post_blank = if split.indent == -1 {
            1 + split.post_blank
        } else {
            0
        };
        let total_blank = split.pre_blank + post_blank;
        self.penalty += TOTAL_BLANK_WEIGHT * total_blank + POST_BLANK_WEIGHT * post_blank;
        let indent = if split.indent != -1 {
            split.indent
        } else {
            split.post_indent
        };
        let blanks = total_blank != 0;
        self.effective_indent += indent;
        if indent == -1 || split.pre_indent == -1 || indent == split.pre_indent {
            return;
        }
        self.penalty += if indent > split.pre_indent {
            if blanks {
                RELATIVE_INDENT_WITH_BLANK_PENALTY
            } else {
                RELATIVE_INDENT_PENALTY
            }
        } else if split.post_indent != -1 && split.post_indent > indent {
            if blanks {
                RELATIVE_OUTDENT_WITH_BLANK_PENALTY
            } else {
                RELATIVE_OUTDENT_PENALTY
            }
        } else if blanks {
            RELATIVE_DEDENT_WITH_BLANK_PENALTY
        } else {
            RELATIVE_DEDENT_PENALTY
        };
    }

    /// git's `score_cmp`: below zero when `self` is better than `other`.
    fn cmp(&self, other: &Score) -> i32 {
        let indents = (self.effective_indent > other.effective_indent) as i32
            - (self.effective_indent < other.effective_indent) as i32;
        INDENT_WEIGHT * indents + self.penalty - other.penalty
    }
}

#[cfg(test)]
mod tests {
    use gix::diff::blob::InternedInput;

    use super::{indent, line_diff};

    /// The added lines of the diff from `old` to `new`, by 0-based index in `new`.
    fn added(old: &str, new: &str) -> Vec<u32> {
        let input = InternedInput::new(old.as_bytes(), new.as_bytes());
        let diff = line_diff(&input);
        diff.hunks().flat_map(|hunk| hunk.after).collect()
    }

    /// Prints the `-U0` hunk headers of each pair of files listed in the
    /// file `TOOLCELL_DIFF_PAIRS` (lines of "old new out"), to compare with
    /// `git diff --no-index -U0`.
    #[test]
    #[ignore = "needs a list of file pairs named by TOOLCELL_DIFF_PAIRS"]
    fn hunk_headers_of_listed_pairs() {
        let Ok(list) = std::env::var("TOOLCELL_DIFF_PAIRS") else {
            return;
        };
        let range = |start: u32, len: u32| match len {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            _ => format!("{},{len}", start + 1),
        };
        for pair in std::fs::read_to_string(list).unwrap().lines() {
            let names: Vec<&str> = pair.split(' ').collect();
            let (old, new) = (
                std::fs::read(names[0]).unwrap(),
                std::fs::read(names[1]).unwrap(),
            );
            let (old, new) = super::trim_common_tail(&old, &new);
            let input = InternedInput::new(old, new);
            let mut out = String::new();
            for hunk in line_diff(&input).hunks() {
                out += &format!(
                    "@@ -{} +{} @@\n",
                    range(hunk.before.start, hunk.before.len() as u32),
                    range(hunk.after.start, hunk.after.len() as u32)
                );
            }
            std::fs::write(format!("{}.ours", names[2]), out).unwrap();
        }
    }

    #[test]
    fn a_function_inserted_between_two_goes_in_whole() {
        let old = "fn a() {\n    1\n}\n\nfn c() {\n    3\n}\n";
        let new = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n\nfn c() {\n    3\n}\n";
        // Myers alone adds "}\n\nfn b() {\n    2\n" after "    1"; git adds
        // "fn b() {" through the blank line after its "}", as here.
        assert_eq!(added(old, new), vec![4, 5, 6, 7]);
    }

    #[test]
    fn deeper_lines_slid_as_git_does() {
        // Cases where gix's own scoring picks the other position (a dedent
        // to the last line scored as an outdent); the expected one is
        // `git diff --no-index`'s (git 2.47).
        let old = "}\n    x\n}\n";
        let new = "}\n    x\n\tx\n    x\n}\n";
        assert_eq!(added(old, new), vec![2, 3]);
        let old = "    x\n}\n  y\nx\n";
        let new = "    x\n}\n  y\n    x\n  y\nx\n";
        assert_eq!(added(old, new), vec![3, 4]);
        let old = "\tx\n  x\n    x\n\nx\n}\n  }\n    x\n}\n";
        let new = "\tx\n  x\n    x\n\nx\n}\n  }\n    x\n\tx\n    x\n}\n";
        assert_eq!(added(old, new), vec![8, 9]);
    }

    #[test]
    fn indents_count_as_git_does() {
        // git's white space: `\f` at a line's start is not.
        assert_eq!(indent(b"\x0cx\n"), 0);
        assert_eq!(indent(b"  \t\r\n"), -1);
        assert_eq!(indent(b"\tx"), 8);
        assert_eq!(indent(b"   \tx"), 8);
    }
}
