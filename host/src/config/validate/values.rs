//! Reading TOML values as the type a key expects, recording an error that
//! names the key path for each that is not, and the file-level helpers the
//! messages are made with.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::Validator;
use crate::config::ConfigError;

/// Turns the toml crate's parse error into one single-line error with its line and column.
pub(super) fn syntax_error(source: &str, text: &str, error: &toml::de::Error) -> ConfigError {
    // The offending text helps when the parser's message does not name it ("duplicate key").
    let mut at = String::new();
    let key = match error.span() {
        Some(span) => {
            if let Some(snippet) = text.get(span.clone())
                && !snippet.trim().is_empty()
                && !snippet.contains('\n')
                && snippet.chars().count() <= 40
            {
                at = format!(" (at `{}`)", snippet.trim());
            }
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].chars().count() + 1;
            format!("line {line}, column {column}")
        }
        None => "(syntax)".to_owned(),
    };
    let message = error
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    ConfigError {
        file: source.to_owned(),
        key,
        message: format!("invalid TOML: {message}{at}"),
    }
}

impl Validator<'_> {
    /// Reports each key of `table` not in `known`; `special` gives a message for some of them.
    pub(super) fn unknown_keys(
        &mut self,
        table: &Table,
        path: &str,
        known: &[&str],
        special: &[(&str, &str)],
    ) {
        let mut unknown: Vec<&String> = table
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let message = match special.iter().find(|(k, _)| k == key) {
                Some((_, message)) => (*message).to_owned(),
                None => format!("unknown key (expected one of: {})", known.join(", ")),
            };
            self.error(join(path, key), message);
        }
    }

    /// An array of unique strings, each checked by `invalid` (which returns the reason if any).
    pub(super) fn string_list(
        &mut self,
        value: &Value,
        path: &str,
        what: &str,
        invalid: impl Fn(&str) -> Option<String>,
    ) -> Vec<String> {
        let mut list = Vec::new();
        let Some(items) = self.array(value, path, "an array of strings") else {
            return list;
        };
        let mut seen = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            let key = format!("{path}[{i}]");
            let Some(s) = self.string(item, &key) else {
                continue;
            };
            if let Some(reason) = invalid(s) {
                self.error(key, reason);
            } else if !seen.insert(s) {
                self.error(key, format!("duplicate {what} {s:?}"));
            } else {
                list.push(s.to_owned());
            }
        }
        list
    }

    pub(super) fn table<'v>(&mut self, value: &'v Value, key: &str) -> Option<&'v Table> {
        match value {
            Value::Table(t) => Some(t),
            other => {
                self.error(key, format!("expected a table, found {}", describe(other)));
                None
            }
        }
    }

    pub(super) fn array<'v>(
        &mut self,
        value: &'v Value,
        key: &str,
        expected: &str,
    ) -> Option<&'v [Value]> {
        match value {
            Value::Array(a) => Some(a),
            other => {
                self.error(
                    key,
                    format!("expected {expected}, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(super) fn string<'v>(&mut self, value: &'v Value, key: &str) -> Option<&'v str> {
        match value {
            Value::String(s) => Some(s),
            other => {
                self.error(key, format!("expected a string, found {}", describe(other)));
                None
            }
        }
    }

    pub(super) fn integer(
        &mut self,
        value: &Value,
        key: &str,
        min: u64,
        max: Option<u64>,
    ) -> Option<u64> {
        let Value::Integer(n) = value else {
            self.error(
                key,
                format!("expected an integer, found {}", describe(value)),
            );
            return None;
        };
        let n = *n;
        match u64::try_from(n) {
            Ok(v) if v < min => self.error(key, format!("must be at least {min}, found {n}")),
            Err(_) => self.error(key, format!("must be at least {min}, found {n}")),
            Ok(v) => match max {
                Some(max) if v > max => {
                    self.error(key, format!("must be at most {max}, found {n}"));
                }
                _ => return Some(v),
            },
        }
        None
    }
}

/// `path.key`, quoting `key` when it is not a bare TOML key.
pub(super) fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

/// Where `path` leads: its longest existing ancestor canonicalised (symlinks and `..`
/// resolved), then the rest as written.
pub(super) fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(canonical) = dunce::canonicalize(existing) {
            return rest
                .iter()
                .rev()
                .fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
        }
    }
}

/// A value's type, with the value itself when it is short (a scalar), for "found ..." messages.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Table(_) => value.type_str().to_owned(),
        scalar => format!("{} {scalar}", value.type_str()),
    }
}

/// Why a path could not be resolved; `what` is `file` or `directory`.
pub(super) fn io_reason(error: &io::Error, what: &str) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => format!("no such {what}"),
        io::ErrorKind::NotADirectory => "a component of the path is not a directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    }
}
