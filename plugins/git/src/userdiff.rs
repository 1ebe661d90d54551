//! Hunk-header ("function name") patterns: git's default rule and the
//! builtin `diff=LANG` drivers of git's `userdiff.c`.
//!
//! Git's patterns are POSIX extended regular expressions, one per line, a
//! leading `!` making a line a negative one; the first line that matches
//! decides, and its first group (or the whole match) is the header. They
//! are translated here to the `regex` crate's syntax and matched on bytes.
//! POSIX matching is leftmost-longest where `regex` is leftmost-first, so
//! a group can, rarely, capture less than git's does.

use regex::bytes::{Regex, RegexBuilder};

/// The longest header git writes, in bytes (xdiff's buffer).
const HEADER_BYTES: usize = 80;

/// Git's builtin drivers: name, pattern lines, whether case is ignored.
const BUILTIN: &[(&str, &str, bool)] = &[
    (
        "bash",
        "^[ \t]*(([a-zA-Z_][a-zA-Z0-9_]*[ \t]*\\([ \t]*\\))|(function[ \t]+[a-zA-Z_][a-zA-Z0-9_]*(([ \t]*\\([ \t]*\\))|([ \t]+)))[ \t]*(\\{|\\(\\(?|\\[\\[))",
        false,
    ),
    (
        "cpp",
        "!^[ \t]*[A-Za-z_][A-Za-z_0-9]*:[[:space:]]*($|/[/*])\n^((::[[:space:]]*)?[A-Za-z_].*)$",
        false,
    ),
    ("css", "![:;][[:space:]]*$\n^[:[@.#]?[_a-z0-9].*$", true),
    (
        "golang",
        "^[ \t]*(func[ \t]*.*(\\{[ \t]*)?)\n^[ \t]*(type[ \t].*(struct|interface)[ \t]*(\\{[ \t]*)?)",
        false,
    ),
    ("html", "^[ \t]*(<[Hh][1-6]([ \t].*)?>.*)$", false),
    (
        "java",
        "!^[ \t]*(catch|do|for|if|instanceof|new|return|switch|throw|while)\n^[ \t]*(([a-z-]+[ \t]+)*(class|enum|interface|record)[ \t]+.*)$\n^[ \t]*(([A-Za-z_<>&][][?&<>.,A-Za-z_0-9]*[ \t]+)+[A-Za-z_][A-Za-z_0-9]*[ \t]*\\([^;]*)$",
        false,
    ),
    (
        "kotlin",
        "^[ \t]*(([a-z]+[ \t]+)*(fun|class|interface)[ \t]+.*)$",
        false,
    ),
    ("markdown", "^ {0,3}#{1,6}[ \t].*", false),
    (
        "php",
        "^[\t ]*(((public|protected|private|static|abstract|final)[\t ]+)*function.*)$\n^[\t ]*((((final|abstract)[\t ]+)?class|enum|interface|trait).*)$",
        false,
    ),
    (
        "python",
        "^[ \t]*((class|(async[ \t]+)?def)[ \t].*)$",
        false,
    ),
    ("ruby", "^[ \t]*((class|module|def)[ \t].*)$", false),
    (
        "rust",
        "^[\t ]*((pub(\\([^\\)]+\\))?[\t ]+)?((async|const|unsafe|extern([\t ]+\"[^\"]+\"))[\t ]+)?(struct|enum|union|mod|trait|fn|impl|macro_rules!)[< \t]+[^;]*)$",
        false,
    ),
];

/// A driver's header patterns, compiled.
#[derive(Debug)]
pub struct FuncName {
    /// Each line of the pattern: whether it is negative, and its regex.
    lines: Vec<(bool, Regex)>,
}

impl FuncName {
    /// The builtin driver `name`, if git has one with header patterns.
    pub fn builtin(name: &str) -> Option<FuncName> {
        let (_, pattern, icase) = BUILTIN.iter().find(|(n, _, _)| *n == name)?;
        FuncName::new(pattern, *icase).ok()
    }

    /// A driver from git's `xfuncname` syntax: extended regular
    /// expressions, one per line, `!` for a negative one.
    pub fn new(pattern: &str, icase: bool) -> Result<FuncName, regex::Error> {
        let lines = pattern
            .split('\n')
            .map(|line| {
                let (negative, line) = match line.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, line),
                };
                let regex = RegexBuilder::new(&format!("(?-u){}", translate(line)))
                    .case_insensitive(icase)
                    .multi_line(false)
                    .build()?;
                Ok((negative, regex))
            })
            .collect::<Result<Vec<_>, regex::Error>>()?;
        Ok(FuncName { lines })
    }

    /// The header `line` gives, as git's `ff_regexp` computes it.
    pub fn header(&self, line: &[u8]) -> Option<String> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for (negative, regex) in &self.lines {
            if let Some(captures) = regex.captures(line) {
                if *negative {
                    return None;
                }
                let found = captures.get(1).or_else(|| captures.get(0))?;
                return Some(cut(found.as_bytes()));
            }
        }
        None
    }
}

/// Git's default header rule (`def_ff`): a line that starts with a letter,
/// `_` or `$`.
pub fn default_header(line: &[u8]) -> Option<String> {
    let first = *line.first()?;
    (first.is_ascii_alphabetic() || first == b'_' || first == b'$').then(|| cut(line))
}

/// At most [`HEADER_BYTES`], then without trailing white space, in that
/// order, as git does.
fn cut(text: &[u8]) -> String {
    let mut text = &text[..text.len().min(HEADER_BYTES)];
    while let Some((last, rest)) = text.split_last() {
        if !last.is_ascii_whitespace() && *last != 0x0b {
            break;
        }
        text = rest;
    }
    String::from_utf8_lossy(text).into_owned()
}

/// A POSIX extended regular expression in the `regex` crate's syntax: in
/// a bracket expression, `[` (unless it opens `[:class:]`), `\`, `&`, `~`
/// and a leading or trailing `-` are literal in POSIX but special in
/// `regex`, so they are escaped.
fn translate(posix: &str) -> String {
    let chars: Vec<char> = posix.chars().collect();
    let mut out = String::with_capacity(posix.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            out.push(c);
            out.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c != '[' {
            out.push(c);
            i += 1;
            continue;
        }
        out.push('[');
        i += 1;
        if chars.get(i) == Some(&'^') {
            out.push('^');
            i += 1;
        }
        let start = i;
        while i < chars.len() {
            let c = chars[i];
            if c == ']' && i > start {
                break;
            }
            if c == '[' && chars.get(i + 1) == Some(&':') {
                let end = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
                if let Some(end) = end {
                    out.extend(&chars[i..end + 2]);
                    i = end + 2;
                    continue;
                }
            }
            let literal_dash = c == '-' && (i == start || chars.get(i + 1) == Some(&']'));
            if matches!(c, '[' | ']' | '\\' | '&' | '~' | '^') || literal_dash {
                out.push('\\');
            }
            out.push(c);
            i += 1;
        }
        if i < chars.len() {
            out.push(']');
            i += 1;
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_pattern_compiles() {
        for (name, pattern, icase) in BUILTIN {
            assert!(FuncName::new(pattern, *icase).is_ok(), "{name}");
        }
    }

    #[test]
    fn headers_follow_git() {
        let cpp = FuncName::builtin("cpp").unwrap();
        assert_eq!(
            cpp.header(b"int main(void)\n").as_deref(),
            Some("int main(void)")
        );
        assert_eq!(cpp.header(b"label:\n"), None);
        let java = FuncName::builtin("java").unwrap();
        assert_eq!(
            java.header(b"    public List<String> names(int a) {\n")
                .as_deref(),
            Some("public List<String> names(int a) {")
        );
        assert_eq!(java.header(b"    return x;\n"), None);
        let long = format!("f{}   x", "a".repeat(78));
        assert_eq!(default_header(long.as_bytes()).unwrap().len(), 79);
    }
}
