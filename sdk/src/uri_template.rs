//! RFC 6570 URI templates, matched rather than expanded: [`UriTemplate::parse`] reads a
//! template, and [`UriTemplate::match_uri`] finds the variable values a URI was expanded from.
//!
//! Every expression kind of level 3, plus the explode (`*`) and prefix (`:n`) modifiers, matches:
//!
//! | expression     | matches                    | a value may not contain |
//! |----------------|----------------------------|-------------------------|
//! | `{var}`        | `value`                    | `/` `?` `#`             |
//! | `{+var}`       | `value`                    | (anything goes)         |
//! | `{#var}`       | `#value`                   | (anything goes)         |
//! | `{.var}`       | `.value`                   | `/` `?` `#` `.`         |
//! | `{/var}`       | `/value`                   | `/` `?` `#`             |
//! | `{;var}`       | `;var=value` or `;var`     | `/` `?` `#` `;`         |
//! | `{?a,b}`       | `?a=1&b=2`                 | `#` `&`                 |
//! | `{&a,b}`       | `&a=1&b=2`                 | `#` `&`                 |
//!
//! Values are percent-decoded (and must then be UTF-8). Matching is lenient where expansion is
//! strict: a character expansion would have percent-encoded (a space, say) is taken as itself.
//! The variables of `{var}`, `{+var}`, `{#var}`, `{.var}` and `{/var}` expressions are all
//! required, non-empty and in order, as listed (`{a,b}` matches `1,2`); an exploded last variable
//! (`{/path*}`) takes the rest, separators included (`a/b/c`). The parameters of `{;...}`,
//! `{?...}` and `{&...}` are each optional and may come in any order, but an unknown or repeated
//! name fails the match. Where an expression could end at several places, the longest match that
//! lets the rest of the template match wins.

use std::collections::{BTreeMap, HashMap};

/// A parsed URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

/// Literal text or one `{...}` expression.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression(Expression),
}

/// One `{...}` expression: its operator and variables.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Expression {
    op: Op,
    vars: Vec<VarSpec>,
}

/// One variable of an expression, with its modifier.
#[derive(Clone, Debug, PartialEq, Eq)]
struct VarSpec {
    name: String,
    /// `{var:n}`: the value has at most `n` characters.
    prefix: Option<usize>,
    /// `{var*}`.
    explode: bool,
}

/// The expression kinds of RFC 6570, section 3.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `{var}`
    Simple,
    /// `{+var}`
    Reserved,
    /// `{#var}`
    Fragment,
    /// `{.var}`
    Label,
    /// `{/var}`
    Path,
    /// `{;var}`
    PathParam,
    /// `{?var}`
    Query,
    /// `{&var}`
    QueryContinuation,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryContinuation,
            _ => return None,
        })
    }

    /// What a non-empty expansion starts with.
    fn first(self) -> Option<char> {
        match self {
            Op::Simple | Op::Reserved => None,
            Op::Fragment => Some('#'),
            Op::Label => Some('.'),
            Op::Path => Some('/'),
            Op::PathParam => Some(';'),
            Op::Query => Some('?'),
            Op::QueryContinuation => Some('&'),
        }
    }

    /// What separates the values (or parameters) of an expansion.
    fn separator(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryContinuation => '&',
        }
    }

    /// Whether the expansion names its parameters (`name=value`).
    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryContinuation)
    }

    /// Whether an expansion never contains `c`, so that it ends before it.
    fn ends_at(self, c: char) -> bool {
        match self {
            Op::Reserved | Op::Fragment => false,
            Op::Simple | Op::Label | Op::PathParam => matches!(c, '/' | '?' | '#'),
            Op::Path => matches!(c, '?' | '#'),
            Op::Query | Op::QueryContinuation => c == '#',
        }
    }

    /// Whether one value never contains `c` (beyond the separator, which splits values).
    fn value_excludes(self, c: char) -> bool {
        match self {
            Op::Reserved | Op::Fragment => false,
            Op::Simple | Op::Path => matches!(c, '/' | '?' | '#'),
            Op::Label => matches!(c, '/' | '?' | '#' | '.'),
            Op::PathParam => matches!(c, '/' | '?' | '#' | ';'),
            Op::Query | Op::QueryContinuation => matches!(c, '#' | '&'),
        }
    }
}

impl UriTemplate {
    /// Parses `template`; the error says what is wrong with it.
    pub(crate) fn parse(template: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest[at..].starts_with('}') => {
                    return Err(format!(
                        "a `}}` at byte {} closes no `{{`",
                        template.len() - rest.len() + at
                    ));
                }
                Some(at) => {
                    if at > 0 {
                        parts.push(Part::Literal(rest[..at].to_string()));
                    }
                    let inner = &rest[at + 1..];
                    let Some(close) = inner.find('}') else {
                        return Err("a `{` is never closed".to_string());
                    };
                    parts.push(Part::Expression(Expression::parse(&inner[..close])?));
                    rest = &inner[close + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_string()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate { parts })
    }

    /// The variables `uri` was expanded from, or `None` if it does not match.
    pub(crate) fn match_uri(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut memo = HashMap::new();
        let found = self.match_from(0, uri, 0, &mut memo)?;
        Some(found.into_iter().collect())
    }

    /// Matches the parts from `part` on against `uri[pos..]`. Each `(part, pos)` is worked out
    /// once (`memo`), which keeps backtracking polynomial.
    fn match_from(&self, part: usize, uri: &str, pos: usize, memo: &mut Memo) -> Found {
        let Some(current) = self.parts.get(part) else {
            return (pos == uri.len()).then(Vec::new);
        };
        if let Some(found) = memo.get(&(part, pos)) {
            return found.clone();
        }
        let rest = &uri[pos..];
        let found = match current {
            Part::Literal(text) => {
                if rest.starts_with(text.as_str()) {
                    self.match_from(part + 1, uri, pos + text.len(), memo)
                } else {
                    None
                }
            }
            Part::Expression(expression) => {
                let longest = rest
                    .char_indices()
                    .find(|&(_, c)| expression.op.ends_at(c))
                    .map_or(rest.len(), |(at, _)| at);
                let mut ends: Vec<usize> =
                    rest[..longest].char_indices().map(|(at, _)| at).collect();
                ends.push(longest);
                // Longest first; the rest of the template is checked before this region, which
                // costs more (it decodes).
                ends.into_iter().rev().find_map(|end| {
                    let later = self.match_from(part + 1, uri, pos + end, memo)?;
                    let mut values = expression.match_region(&rest[..end])?;
                    values.extend(later);
                    Some(values)
                })
            }
        };
        memo.insert((part, pos), found.clone());
        found
    }
}

/// What matching found: the variables, in template order, or `None`.
type Found = Option<Vec<(String, String)>>;

/// The outcome of matching from each `(part, byte offset)` tried so far.
type Memo = HashMap<(usize, usize), Found>;

impl Expression {
    /// Parses the text between `{` and `}`.
    fn parse(text: &str) -> Result<Expression, String> {
        let mut chars = text.chars();
        let (op, list) = match chars.next().and_then(Op::from_char) {
            Some(op) => (op, chars.as_str()),
            None => (Op::Simple, text),
        };
        if let Some(reserved) = list.chars().next().filter(|c| "=,!@|".contains(*c)) {
            return Err(format!(
                "the operator `{reserved}` in `{{{text}}}` is reserved"
            ));
        }
        let vars = list
            .split(',')
            .map(|spec| VarSpec::parse(spec).map_err(|e| format!("in `{{{text}}}`: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Expression { op, vars })
    }

    /// The variables this expression's expansion `region` was made from.
    fn match_region(&self, region: &str) -> Option<Vec<(String, String)>> {
        let op = self.op;
        if region.is_empty() {
            // An expansion is empty when all its variables are undefined, which only the
            // named (optional) forms allow.
            return op.named().then(Vec::new);
        }
        let body = match op.first() {
            Some(first) => region.strip_prefix(first)?,
            None => region,
        };
        if op.named() {
            return self.match_named(body);
        }
        let count = self.vars.len();
        let explode_last = self.vars.last().is_some_and(|var| var.explode);
        let pieces: Vec<&str> = if count == 1 && !explode_last {
            vec![body]
        } else if explode_last {
            body.splitn(count, op.separator()).collect()
        } else {
            body.split(op.separator()).collect()
        };
        if pieces.len() != count {
            return None;
        }
        self.vars
            .iter()
            .zip(pieces)
            .map(|(var, piece)| {
                let separator_allowed = var.explode;
                let allowed = piece
                    .chars()
                    .all(|c| !op.value_excludes(c) || (separator_allowed && c == op.separator()));
                if piece.is_empty() || !allowed {
                    return None;
                }
                Some((var.name.clone(), var.decode(piece)?))
            })
            .collect()
    }

    /// Matches `name=value` parameters, each optional and in any order.
    fn match_named(&self, body: &str) -> Option<Vec<(String, String)>> {
        let mut found: Vec<(String, String)> = Vec::new();
        for param in body.split(self.op.separator()) {
            let (name, value) = match param.split_once('=') {
                Some((name, value)) => (name, value),
                // `{;var}` writes an empty value as `;var`; the query forms as `?var=`.
                None if self.op == Op::PathParam => (param, ""),
                None => return None,
            };
            let var = self.vars.iter().find(|var| var.name == name)?;
            if found.iter().any(|(seen, _)| seen == name)
                || value.chars().any(|c| self.op.value_excludes(c))
            {
                return None;
            }
            found.push((var.name.clone(), var.decode(value)?));
        }
        Some(found)
    }
}

impl VarSpec {
    fn parse(spec: &str) -> Result<VarSpec, String> {
        let (name, prefix, explode) = if let Some(name) = spec.strip_suffix('*') {
            (name, None, true)
        } else if let Some((name, length)) = spec.split_once(':') {
            let length = length
                .parse::<usize>()
                .ok()
                .filter(|n| (1..10_000).contains(n))
                .ok_or_else(|| format!("`{length}` is not a prefix length from 1 to 9999"))?;
            (name, Some(length), false)
        } else {
            (spec, None, false)
        };
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'));
        if !valid {
            return Err(format!("`{name}` is not a variable name"));
        }
        Ok(VarSpec {
            name: name.to_string(),
            prefix,
            explode,
        })
    }

    /// The percent-decoded value, if it is UTF-8 and fits the prefix length.
    fn decode(&self, raw: &str) -> Option<String> {
        let value = percent_decode(raw)?;
        match self.prefix {
            Some(max) if value.chars().count() > max => None,
            _ => Some(value),
        }
    }
}

/// Decodes `%XX` escapes; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let template = UriTemplate::parse(template).unwrap();
        template
            .match_uri(uri)
            .map(|vars| vars.into_iter().collect())
    }

    fn vars(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn a_simple_variable_is_one_segment() {
        let t = "test://template/{id}/data";
        assert_eq!(
            matches(t, "test://template/123/data"),
            vars(&[("id", "123")])
        );
        assert_eq!(matches(t, "test://template/1/2/data"), None);
        assert_eq!(matches(t, "test://template//data"), None);
        assert_eq!(matches(t, "test://template/123/data/more"), None);
        assert_eq!(matches(t, "test://template/123"), None);
        assert_eq!(matches(t, "test://template/a?b/data"), None);
        assert_eq!(matches(t, "test://template/a#b/data"), None);
    }

    #[test]
    fn values_are_percent_decoded() {
        let t = "test://template/{id}/data";
        assert_eq!(
            matches(t, "test://template/a%20b%2Fc%C3%A9/data"),
            vars(&[("id", "a b/cé")])
        );
        // Lenient: a character expansion would have encoded is taken as itself.
        assert_eq!(
            matches(t, "test://template/a b/data"),
            vars(&[("id", "a b")])
        );
        assert_eq!(matches(t, "test://template/a%2/data"), None);
        assert_eq!(matches(t, "test://template/a%zz/data"), None);
        assert_eq!(matches(t, "test://template/%FF/data"), None);
    }

    #[test]
    fn a_reserved_variable_takes_slashes() {
        assert_eq!(
            matches("file:///{+path}", "file:///home/me/notes%20x.md"),
            vars(&[("path", "home/me/notes x.md")])
        );
        assert_eq!(
            matches("file:///{+path}", "file:///a?b#c"),
            vars(&[("path", "a?b#c")])
        );
        assert_eq!(matches("file:///{+path}", "file:///"), None);
        // Backtracking: the longest value that leaves the rest a match.
        assert_eq!(
            matches("repo://{+path}/meta", "repo://a/b/meta/meta"),
            vars(&[("path", "a/b/meta")])
        );
        assert_eq!(matches("repo://{+path}/meta", "repo://a/b"), None);
    }

    #[test]
    fn several_simple_variables_split_at_commas() {
        assert_eq!(
            matches("map://{x,y}", "map://1,2"),
            vars(&[("x", "1"), ("y", "2")])
        );
        assert_eq!(matches("map://{x,y}", "map://1"), None);
        assert_eq!(matches("map://{x,y}", "map://1,2,3"), None);
    }

    #[test]
    fn path_segments_and_labels() {
        assert_eq!(matches("/users{/id}", "/users/42"), vars(&[("id", "42")]));
        assert_eq!(matches("/users{/id}", "/users/42/x"), None);
        assert_eq!(matches("/users{/id}", "/users"), None);
        assert_eq!(matches("{/a,b}", "/x/y"), vars(&[("a", "x"), ("b", "y")]));
        assert_eq!(
            matches("root{/path*}", "root/a/b%20c/d"),
            vars(&[("path", "a/b c/d")])
        );
        assert_eq!(
            matches("{name}{.ext}", "file.tar.gz"),
            vars(&[("ext", "gz"), ("name", "file.tar")])
        );
        assert_eq!(matches("x{#frag}", "x#a/b,c"), vars(&[("frag", "a/b,c")]));
    }

    #[test]
    fn query_parameters_are_optional_and_unordered() {
        let t = "search://items{?q,lang}";
        assert_eq!(
            matches(t, "search://items?q=rust&lang=en"),
            vars(&[("lang", "en"), ("q", "rust")])
        );
        assert_eq!(
            matches(t, "search://items?lang=en&q=a%26b"),
            vars(&[("lang", "en"), ("q", "a&b")])
        );
        assert_eq!(matches(t, "search://items?q="), vars(&[("q", "")]));
        assert_eq!(matches(t, "search://items"), vars(&[]));
        assert_eq!(matches(t, "search://items?other=1"), None);
        assert_eq!(matches(t, "search://items?q=1&q=2"), None);
        assert_eq!(matches(t, "search://items?q"), None);
        assert_eq!(
            matches("s{?q}{&page}", "s?q=a&page=2"),
            vars(&[("page", "2"), ("q", "a")])
        );
        assert_eq!(
            matches("m{;x,y}", "m;x=1;y"),
            vars(&[("x", "1"), ("y", "")])
        );
    }

    #[test]
    fn prefixes_limit_the_length() {
        assert_eq!(matches("id/{id:3}", "id/abc"), vars(&[("id", "abc")]));
        assert_eq!(matches("id/{id:3}", "id/abcd"), None);
    }

    #[test]
    fn literals_must_match_exactly() {
        assert_eq!(matches("test://static", "test://static"), vars(&[]));
        assert_eq!(matches("test://static", "test://static2"), None);
        assert_eq!(matches("test://{id}", "other://1"), None);
    }

    #[test]
    fn malformed_templates_are_errors() {
        for bad in [
            "a{b", "a}b", "{}", "{=x}", "{x:0}", "{x:y}", "{a b}", "{x,}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn long_uris_stay_fast() {
        // Three reserved expressions could split this URI in ~n^2 ways; memoised failures
        // keep the search polynomial.
        let uri = format!("x/{}", "a/".repeat(300));
        assert_eq!(matches("x/{+a}{+b}{+c}/never", &uri), None);
    }
}
