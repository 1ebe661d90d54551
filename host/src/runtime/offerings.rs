//! What contract 0.2.0 adds beside tools: resources, resource templates and
//! prompts. A plugin lists them when it loads; [`check`] holds what it
//! listed to the contract's rules and the listing caps, so that a plugin
//! cannot make a listing unbounded or serve a URI that is not one. What it
//! returns for a read, a prompt or a completion is the contract's data;
//! `protocol::mcp` turns it into MCP within the output cap.

use anyhow::{Result, bail};

use crate::limits::{MAX_LISTED, MAX_NAME_BYTES};
use crate::runtime::contract::v2;

/// What a plugin offers besides tools, as it listed them at load time.
#[derive(Default)]
pub struct Offerings {
    /// Fixed resources listed without mounts.
    pub resources: Vec<v2::ResourceDescriptor>,
    /// Resource templates.
    pub templates: Vec<v2::ResourceTemplate>,
    /// Prompts.
    pub prompts: Vec<v2::PromptDescriptor>,
}

/// Why a plugin answered a read, a prompt or a completion with no value.
#[derive(Debug, PartialEq)]
pub enum Failure {
    /// No such resource or prompt.
    NotFound(String),
    /// The arguments are wrong.
    Invalid(String),
    /// Anything else.
    Failed(String),
}

impl From<v2::Failure> for Failure {
    fn from(failure: v2::Failure) -> Failure {
        match failure {
            v2::Failure::NotFound(text) => Failure::NotFound(text),
            v2::Failure::Invalid(text) => Failure::Invalid(text),
            v2::Failure::Failed(text) => Failure::Failed(text),
        }
    }
}

/// Whether `uri` looks like a URI: a scheme (`letter *(letter / digit / + - .)`),
/// a colon, and no whitespace or control characters.
fn valid_uri(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && uri.len() <= MAX_NAME_BYTES
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn check_count(what: &str, count: usize) -> Result<()> {
    if count > MAX_LISTED {
        bail!("it lists {count} {what}, over the limit of {MAX_LISTED}");
    }
    Ok(())
}

/// Checks a fixed resource's descriptor.
pub fn check_resource(descriptor: &v2::ResourceDescriptor) -> Result<()> {
    if !valid_uri(&descriptor.uri) {
        bail!(
            "resource `{}` has no valid URI (a scheme such as `file:`, at most {MAX_NAME_BYTES} \
             bytes, no spaces)",
            descriptor.uri
        );
    }
    Ok(())
}

/// Checks a resource template.
pub fn check_template(descriptor: &v2::ResourceTemplate) -> Result<()> {
    let literal = template_prefix(&descriptor.uri_template);
    let balanced = descriptor.uri_template.matches('{').count()
        == descriptor.uri_template.matches('}').count();
    if !balanced || !valid_uri(&format!("{literal}x")) || !literal.contains(':') {
        bail!(
            "resource template `{}` is not a URI template that starts with a scheme",
            descriptor.uri_template
        );
    }
    Ok(())
}

/// The literal start of a URI template, before its first expression: every
/// URI the template matches starts with it.
pub fn template_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or_default()
}

/// Checks a prompt's descriptor.
pub fn check_prompt(descriptor: &v2::PromptDescriptor) -> Result<()> {
    let name = &descriptor.name;
    if name.is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
        bail!("prompt `{name}` has no valid name");
    }
    let arguments = descriptor.arguments.iter().map(|argument| &argument.name);
    if let Some(argument) = first_repeat(arguments) {
        bail!("prompt `{name}` lists argument `{argument}` twice");
    }
    Ok(())
}

/// Checks what a plugin listed at load time.
pub fn check(
    resources: Vec<v2::ResourceDescriptor>,
    templates: Vec<v2::ResourceTemplate>,
    prompts: Vec<v2::PromptDescriptor>,
) -> Result<Offerings> {
    check_count("resources", resources.len())?;
    check_count("resource templates", templates.len())?;
    check_count("prompts", prompts.len())?;
    resources.iter().try_for_each(check_resource)?;
    templates.iter().try_for_each(check_template)?;
    prompts.iter().try_for_each(check_prompt)?;
    if let Some(uri) = first_repeat(resources.iter().map(|r| &r.uri)) {
        bail!("it lists resource `{uri}` twice");
    }
    if let Some(template) = first_repeat(templates.iter().map(|t| &t.uri_template)) {
        bail!("it lists resource template `{template}` twice");
    }
    if let Some(name) = first_repeat(prompts.iter().map(|p| &p.name)) {
        bail!("it lists prompt `{name}` twice");
    }
    Ok(Offerings {
        resources,
        templates,
        prompts,
    })
}

fn first_repeat<'a>(items: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().find(|item| !seen.insert(*item))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(uri: &str) -> v2::ResourceDescriptor {
        v2::ResourceDescriptor {
            uri: uri.to_string(),
            name: "r".to_string(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    fn template_of(uri_template: &str) -> v2::ResourceTemplate {
        v2::ResourceTemplate {
            uri_template: uri_template.to_string(),
            name: "t".to_string(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    #[test]
    fn resource_uris_need_a_scheme() {
        assert!(check_resource(&descriptor("test://static-text")).is_ok());
        assert!(check_resource(&descriptor("file:///a/b.txt")).is_ok());
        for bad in ["", "no-scheme", "1x://a", "test://with space", "://x"] {
            assert!(check_resource(&descriptor(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn templates_start_with_a_scheme_and_balance_their_braces() {
        assert!(check_template(&template_of("test://template/{id}/data")).is_ok());
        assert!(check_template(&template_of("file:///{+path}")).is_ok());
        assert_eq!(template_prefix("file:///{+path}"), "file:///");
        for bad in ["{scheme}://x", "test://{id", "no scheme {id}"] {
            assert!(check_template(&template_of(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn repeated_names_are_refused() {
        let twice = check(
            vec![descriptor("test://a"), descriptor("test://a")],
            vec![],
            vec![],
        );
        let error = twice.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("`test://a` twice"), "{error}");
    }
}
