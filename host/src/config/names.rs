//! The rules for names that the configuration, the runtime and `toolcell
//! new` share: plugins, tools, categories, environment variables and
//! network hosts. Each rule is stated here once.

/// The categories of the contract; a plugin may declare others.
pub const CONTRACT_CATEGORIES: &[&str] = &["read", "search", "write", "execute", "vcs", "network"];

/// What to say of a category that is none of `known`: the known ones, and
/// the one it is likely a misspelling of.
pub fn unknown_category(category: &str, known: &[&str]) -> String {
    let hint = known
        .iter()
        .find(|known| edit_distance(known, category) <= 2)
        .map(|known| format!("did you mean `{known}`? "))
        .unwrap_or_default();
    format!(
        "unknown category `{category}`; {hint}the known categories are {}",
        known.join(", ")
    )
}

/// The Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The plugin name rule, as messages state it.
pub const PLUGIN_NAME_RULE: &str =
    "1 to 64 characters of a-z, 0-9, `_` and `-`, starting with a letter or digit";

/// The tool name rule (MCP's), as messages state it.
pub const TOOL_NAME_RULE: &str = "1 to 128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`";

/// The category name rule, as messages state it.
pub const CATEGORY_RULE: &str = "1 to 32 characters of a-z, 0-9 and `-`, starting with a letter";

/// Whether `s` follows [`PLUGIN_NAME_RULE`]: `^[a-z0-9][a-z0-9_-]{0,63}$`.
pub fn is_plugin_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Whether `s` follows [`TOOL_NAME_RULE`]: `^[A-Za-z0-9_.-]{1,128}$`.
pub fn is_tool_name(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Whether `s` follows [`CATEGORY_RULE`]: `^[a-z][a-z0-9-]{0,31}$`.
pub fn is_category(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && s.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Splits `host:port`, `[v6]:port`, `host` or `[v6]`.
pub fn split_host_port(entry: &str) -> (&str, Option<&str>) {
    if entry.starts_with('[') {
        if let Some(end) = entry.find(']') {
            let (host, rest) = entry.split_at(end + 1);
            if rest.is_empty() {
                return (host, None);
            }
            if let Some(port) = rest.strip_prefix(':') {
                return (host, Some(port));
            }
        }
        return (entry, None);
    }
    match entry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (entry, None),
    }
}

/// Why a `network` entry is not `host` or `host:port`, if it is not.
///
/// Hosts are exact names (no wildcards): lowercase letters, digits, `-` and
/// `.`, an IPv4 address, or an IPv6 address in brackets.
pub fn network_entry_problem(entry: &str) -> Option<String> {
    if entry.contains('/') {
        let host = entry.split("://").nth(1).unwrap_or(entry);
        let host = host.split('/').next().unwrap_or(host);
        return Some(format!(
            "{entry:?} is a URL: give only the host (and port), e.g. {host:?}"
        ));
    }
    let (host, port) = split_host_port(entry);
    if let Some(port) = port
        && !matches!(port.parse::<u16>(), Ok(p) if p > 0)
    {
        return Some(format!("invalid port in {entry:?}: expected 1-65535"));
    }
    let valid_host = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        v6.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        !host.is_empty()
            && host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && !host.starts_with(['.', '-'])
            && !host.ends_with(['.', '-'])
    };
    (!valid_host).then(|| {
        format!(
            "invalid host {entry:?}: expected an exact host name (lowercase, no scheme, path or \
             wildcard), optionally with `:port`, e.g. \"export.arxiv.org\" or \"127.0.0.1:8080\""
        )
    })
}

/// Whether `s` is an environment variable name: `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
// A failed unwrap is a failed test; the workspace lint is for non-test code.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("search", "serach"), 2);
        assert_eq!(edit_distance("read", "read"), 0);
        assert_eq!(edit_distance("vcs", "network"), 7);
        assert_eq!(edit_distance("", "ab"), 2);
        assert!(unknown_category("serach", CONTRACT_CATEGORIES).contains("did you mean `search`?"));
        assert!(!unknown_category("fancy", CONTRACT_CATEGORIES).contains("did you mean"));
    }

    #[test]
    fn name_patterns() {
        assert!(is_plugin_name("a"));
        assert!(is_plugin_name("0fs_x-y"));
        assert!(is_plugin_name(&"a".repeat(64)));
        assert!(!is_plugin_name(&"a".repeat(65)));
        assert!(!is_plugin_name(""));
        assert!(!is_plugin_name("-a"));
        assert!(!is_plugin_name("Fs"));
        assert!(is_category("vcs"));
        assert!(is_category("a-1"));
        assert!(!is_category("1a"));
        assert!(!is_category(&"a".repeat(33)));
        assert!(is_env_name("_"));
        assert!(is_env_name("Path_2"));
        assert!(!is_env_name("2X"));
        assert!(!is_env_name("A-B"));
        assert!(!is_env_name(""));
        assert!(is_tool_name("read_file"));
        assert!(is_tool_name("Git.log-2"));
        assert!(is_tool_name(&"a".repeat(128)));
        assert!(!is_tool_name(&"a".repeat(129)));
        assert!(!is_tool_name(""));
        assert!(!is_tool_name("read file"));
        assert!(!is_tool_name("ns/tool"));
        assert!(!is_tool_name("café"));
    }
}
