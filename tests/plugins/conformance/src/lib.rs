//! `conformance`: a test-only plugin that offers the fixtures the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) calls in its server scenarios, with the names,
//! texts, MIME types and data the scenarios check. It is written against the SDK alone, as a
//! third-party plugin would be.
//!
//! - [`tools`]: `test_simple_text`, `test_image_content`, `test_audio_content`,
//!   `test_embedded_resource`, `test_multiple_content_types`, `test_error_handling`,
//!   `test_tool_with_logging`, `test_tool_with_progress`, `json_schema_2020_12_tool`, and the
//!   2026-07-28 draft's `test_logging_tool` and `test_custom_header`. All are in category
//!   `conformance` (so nothing enables them by accident) and read-only.
//! - [`resources`]: `test://static-text`, `test://static-binary`, `test://watched-resource` and
//!   the template `test://template/{id}/data`, whose `id` completes.
//! - [`prompts`]: `test_simple_prompt`, `test_prompt_with_arguments`,
//!   `test_prompt_with_embedded_resource` and `test_prompt_with_image`, whose arguments
//!   complete.
//!
//! - [`client`]: `test_sampling`, `test_elicitation`, `test_elicitation_sep1034_defaults` and
//!   `test_elicitation_sep1330_enums`, which ask the client through the host.
//!
//! The fixtures that need host features beyond the contract (closing an SSE stream mid-call,
//! changing the tool list, tasks, `input_required` results) are not here.

mod client;
mod prompts;
mod resources;
mod tools;

/// A 1x1 red pixel: the PNG the suite's reference server sends (base64
/// `iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==`).
const RED_PIXEL_PNG: &[u8] = b"\x89PNG\x0d\x0a\x1a\x0a\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0dIDATx\xdac\xfc\xcf\xc0\xf0\x1f\x00\x05\x05\x02\x00_\xc8\xf1\xd2\x00\x00\x00\x00IEND\xaeB`\x82";

/// One silent sample of 16-bit mono PCM at 8 kHz: the reference server's WAV header, with the
/// two data bytes its header announces.
const SILENT_WAV: &[u8] = b"RIFF&\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x00}\x00\x00\x02\x00\x10\x00data\x02\x00\x00\x00\x00\x00";

toolcell_sdk::export_plugin! {
    tools: all_tools,
    resources: resources::resources,
    templates: resources::templates,
    prompts: prompts::prompts,
}

/// The tools of [`tools`] and of [`client`].
fn all_tools() -> Vec<toolcell_sdk::Tool> {
    let mut tools = tools::tools();
    tools.extend(client::tools());
    tools
}

/// The values of `candidates` that start with what the user typed, ignoring case.
fn completions(candidates: &[&str], typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    candidates
        .iter()
        .filter(|candidate| candidate.to_lowercase().starts_with(&typed))
        .map(|candidate| candidate.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_media_are_well_formed() {
        assert!(RED_PIXEL_PNG.starts_with(b"\x89PNG"));
        assert_eq!(RED_PIXEL_PNG.len(), 70);
        // The RIFF size counts everything after its own 8 bytes.
        let riff = u32::from_le_bytes([SILENT_WAV[4], SILENT_WAV[5], SILENT_WAV[6], SILENT_WAV[7]]);
        assert_eq!(riff as usize, SILENT_WAV.len() - 8);
    }

    #[test]
    fn completions_match_prefixes() {
        assert_eq!(
            completions(&["paris", "Park", "rome"], "PA"),
            ["paris", "Park"]
        );
        assert_eq!(completions(&["a", "b"], ""), ["a", "b"]);
    }
}
