//! arXiv identifiers and the arXiv API's Atom feed.
//!
//! [`is_id`] checks an identifier, [`query_url`] builds the request, and [`parse_feed`] reads
//! the answer into a [`Feed`]: the [`Entry`] found, or why there is none. Everything here is
//! plain functions over text, tested at the end; the fetch itself is in `add.rs`.

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;

/// Whether `id` is a new-style arXiv identifier: `^\d{4}\.\d{4,5}(v\d+)?$`.
pub(crate) fn is_id(id: &str) -> bool {
    let (number, version) = match id.split_once('v') {
        Some((number, version)) => (number, Some(version)),
        None => (id, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((year_month, serial)) = number.split_once('.') else {
        return false;
    };
    year_month.len() == 4
        && all_digits(year_month)
        && (4..=5).contains(&serial.len())
        && all_digits(serial)
        && version.is_none_or(all_digits)
}

/// `id` without its version suffix: `1810.04805v2` is `1810.04805`.
pub(crate) fn base_id(id: &str) -> &str {
    id.split_once('v').map_or(id, |(base, _)| base)
}

/// The API request for `id` against `base` (such as `https://export.arxiv.org`).
pub(crate) fn query_url(base: &str, id: &str) -> String {
    format!("{}/api/query?id_list={id}", base.trim_end_matches('/'))
}

/// One paper, as the feed describes it, with whitespace normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The entry's `<id>`, such as `http://arxiv.org/abs/1810.04805v2`.
    pub id: String,
    /// The title.
    pub title: String,
    /// The abstract.
    pub summary: String,
    /// The date of the first version, `YYYY-MM-DD`.
    pub published: String,
    /// The authors, in order.
    pub authors: Vec<String>,
}

impl Entry {
    /// The year of the first version.
    pub(crate) fn year(&self) -> u16 {
        self.published[..4].parse().unwrap_or(0)
    }
}

/// What the feed says about the paper asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Feed {
    /// The paper.
    Found(Entry),
    /// No such paper; arXiv's own message, when it gave one.
    NotFound(Option<String>),
}

/// The element an event belongs to, as far as this parser cares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Id,
    Title,
    Summary,
    Published,
    AuthorName,
}

#[derive(Default)]
struct RawEntry {
    id: String,
    title: String,
    summary: String,
    published: String,
    authors: Vec<String>,
}

/// Reads the arXiv API's answer for `wanted`.
///
/// Only unprefixed (Atom) elements are read: `feed`, its `entry`s, and each entry's `id`,
/// `title`, `summary`, `published` and `author/name`. An empty feed, or an entry whose id is
/// one of arXiv's error ids (`http://arxiv.org/api/errors#...`) or that has no title, is
/// [`Feed::NotFound`]. The error is a sentence for the model: text that is not well-formed XML,
/// not an Atom feed, or an entry that lacks a field or is for another paper.
pub(crate) fn parse_feed(xml: &str, wanted: &str) -> Result<Feed, String> {
    let mut reader = Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut entries: Vec<RawEntry> = Vec::new();
    let mut field: Option<Field> = None;
    let mut saw_root = false;
    let malformed = |at: u64, e: &dyn std::fmt::Display| {
        format!("the response is not well-formed XML (at byte {at}): {e}")
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|e| malformed(reader.error_position(), &e))?;
        match event {
            Event::Start(start) => {
                let name = start.name().into_inner().to_string();
                if path.is_empty() {
                    if saw_root {
                        return Err(malformed(
                            reader.buffer_position(),
                            &"more than one root element",
                        ));
                    }
                    saw_root = true;
                    if name != "feed" {
                        return Err(format!(
                            "the response is not an Atom feed: its root element is `<{name}>`"
                        ));
                    }
                }
                path.push(name);
                field = entry_field(&path);
                if path.len() == 2 && path[1] == "entry" {
                    entries.push(RawEntry::default());
                }
                if field == Some(Field::AuthorName)
                    && let Some(entry) = entries.last_mut()
                {
                    entry.authors.push(String::new());
                }
            }
            Event::Empty(start) => {
                if path.is_empty() {
                    let name = start.name().into_inner().to_string();
                    return Err(format!(
                        "the response is not an Atom feed: its root element is `<{name}/>`"
                    ));
                }
            }
            Event::End(_) => {
                path.pop();
                field = entry_field(&path);
            }
            Event::Text(text) => push_text(&mut entries, field, &text.xml10_content()),
            Event::CData(text) => push_text(&mut entries, field, &text.xml10_content()),
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => match resolve_predefined_entity(&reference) {
                        Some(text) => text.to_string(),
                        None => {
                            return Err(malformed(
                                reader.buffer_position(),
                                &format!("unknown entity `&{};`", &*reference),
                            ));
                        }
                    },
                    Err(e) => return Err(malformed(reader.buffer_position(), &e)),
                };
                push_text(&mut entries, field, &resolved);
            }
            Event::Eof => {
                if !path.is_empty() {
                    return Err(malformed(
                        reader.buffer_position(),
                        &format!("it ends inside `<{}>`", path.join("><")),
                    ));
                }
                if !saw_root {
                    return Err("the response is not XML: it holds no element".to_string());
                }
                break;
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }

    let Some(raw) = entries.into_iter().next() else {
        return Ok(Feed::NotFound(None));
    };
    let clean = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let entry = Entry {
        id: clean(&raw.id),
        title: clean(&raw.title),
        summary: clean(&raw.summary),
        published: clean(&raw.published),
        authors: raw
            .authors
            .iter()
            .map(|a| clean(a))
            .filter(|a| !a.is_empty())
            .collect(),
    };
    if entry.id.contains("/api/errors") {
        let message = Some(entry.summary).filter(|s| !s.is_empty());
        return Ok(Feed::NotFound(message));
    }
    if entry.title.is_empty() {
        return Ok(Feed::NotFound(None));
    }
    let found = entry.id.rsplit('/').next().unwrap_or_default();
    if base_id(found) != base_id(wanted) {
        return Err(format!(
            "arXiv answered with an entry for `{}`, not for `{wanted}`",
            entry.id
        ));
    }
    let date = entry.published.get(..10).unwrap_or_default();
    if !crate::registry::is_date(date) {
        return Err(format!(
            "the entry for `{wanted}` has no valid <published> date (it has `{}`)",
            entry.published
        ));
    }
    Ok(Feed::Found(Entry {
        published: date.to_string(),
        ..entry
    }))
}

/// Which field of the first-level entry `path` points into, if any.
fn entry_field(path: &[String]) -> Option<Field> {
    let names: Vec<&str> = path.iter().map(String::as_str).collect();
    match names.as_slice() {
        ["feed", "entry", "id"] => Some(Field::Id),
        ["feed", "entry", "title"] => Some(Field::Title),
        ["feed", "entry", "summary"] => Some(Field::Summary),
        ["feed", "entry", "published"] => Some(Field::Published),
        ["feed", "entry", "author", "name"] => Some(Field::AuthorName),
        _ => None,
    }
}

fn push_text(entries: &mut [RawEntry], field: Option<Field>, text: &str) {
    let (Some(field), Some(entry)) = (field, entries.last_mut()) else {
        return;
    };
    let target = match field {
        Field::Id => &mut entry.id,
        Field::Title => &mut entry.title,
        Field::Summary => &mut entry.summary,
        Field::Published => &mut entry.published,
        Field::AuthorName => match entry.authors.last_mut() {
            Some(name) => name,
            None => return,
        },
    };
    target.push_str(text);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The shape of the arXiv API's answer for one paper, abridged.
    const BERT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D1810.04805%26start%3D0%26max_results%3D10" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=&amp;id_list=1810.04805&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>
  <updated>2024-05-01T00:00:00-04:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">1</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/1810.04805v2</id>
    <updated>2019-05-24T20:37:26Z</updated>
    <published>2018-10-11T00:50:01Z</published>
    <title>BERT: Pre-training of Deep Bidirectional Transformers for Language
  Understanding</title>
    <summary>  We introduce a new language representation model called BERT, which
stands for &quot;Bidirectional&quot; Encoder Representations from Transformers.
</summary>
    <author>
      <name>Jacob Devlin</name>
    </author>
    <author>
      <name>Ming-Wei Chang</name>
    </author>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>
"#;

    #[test]
    fn ids() {
        for good in [
            "1810.04805",
            "1810.04805v2",
            "0704.0001",
            "1706.03762v7",
            "2106.9685",
        ] {
            assert!(is_id(good), "{good}");
        }
        for bad in [
            "",
            "1810.048",
            "1810.048055",
            "181.04805",
            "1810-04805",
            "1810.04805v",
            "1810.04805v2a",
            "v1810.04805",
            "hep-th/9901001",
            " 1810.04805",
            "1810.04805 ",
            "１８１０.04805",
        ] {
            assert!(!is_id(bad), "{bad:?}");
        }
        assert_eq!(base_id("1810.04805v2"), "1810.04805");
        assert_eq!(base_id("1810.04805"), "1810.04805");
    }

    #[test]
    fn urls() {
        assert_eq!(
            query_url("https://export.arxiv.org/", "1810.04805"),
            "https://export.arxiv.org/api/query?id_list=1810.04805"
        );
        assert_eq!(
            query_url("http://127.0.0.1:8080", "1810.04805v2"),
            "http://127.0.0.1:8080/api/query?id_list=1810.04805v2"
        );
    }

    #[test]
    fn an_entry_is_read_with_whitespace_normalised() {
        let Feed::Found(entry) = parse_feed(BERT, "1810.04805").unwrap() else {
            panic!("not found");
        };
        assert_eq!(entry.id, "http://arxiv.org/abs/1810.04805v2");
        assert_eq!(
            entry.title,
            "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
        );
        assert_eq!(
            entry.summary,
            "We introduce a new language representation model called BERT, which stands for \
             \"Bidirectional\" Encoder Representations from Transformers."
        );
        assert_eq!(entry.published, "2018-10-11");
        assert_eq!(entry.year(), 2018);
        assert_eq!(entry.authors, ["Jacob Devlin", "Ming-Wei Chang"]);
        assert!(matches!(
            parse_feed(BERT, "1810.04805v2"),
            Ok(Feed::Found(_))
        ));
    }

    #[test]
    fn an_empty_feed_or_an_error_entry_is_not_found() {
        let empty = r#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
            <title>ArXiv Query</title><opensearch:totalResults xmlns:opensearch="x">0</opensearch:totalResults></feed>"#;
        assert_eq!(parse_feed(empty, "1810.04805"), Ok(Feed::NotFound(None)));

        let error = r#"<feed xmlns="http://www.w3.org/2005/Atom"><entry>
            <id>http://arxiv.org/api/errors#incorrect_id_format_for_1810.4805</id>
            <title>Error</title>
            <summary>incorrect id format for 1810.4805</summary>
            </entry></feed>"#;
        assert_eq!(
            parse_feed(error, "1810.4805"),
            Ok(Feed::NotFound(Some(
                "incorrect id format for 1810.4805".to_string()
            )))
        );

        let blank = r#"<feed><entry><id>http://arxiv.org/abs/9912.99999</id><title/>
            <published/></entry></feed>"#;
        assert_eq!(parse_feed(blank, "9912.99999"), Ok(Feed::NotFound(None)));
    }

    #[test]
    fn malformed_answers_are_errors_that_say_so() {
        let truncated = &BERT[..BERT.find("<author>").unwrap()];
        let error = parse_feed(truncated, "1810.04805").unwrap_err();
        assert!(
            error.starts_with("the response is not well-formed XML"),
            "{error}"
        );

        let mismatched = "<feed><entry><id>x</title></entry></feed>";
        let error = parse_feed(mismatched, "1810.04805").unwrap_err();
        assert!(
            error.starts_with("the response is not well-formed XML"),
            "{error}"
        );

        let html = "<html><body>Service unavailable</body></html>";
        let error = parse_feed(html, "1810.04805").unwrap_err();
        assert_eq!(
            error,
            "the response is not an Atom feed: its root element is `<html>`"
        );

        for text in ["", "not xml at all"] {
            let error = parse_feed(text, "1810.04805").unwrap_err();
            assert_eq!(error, "the response is not XML: it holds no element");
        }

        let entity = "<feed><entry><title>&bogus;</title></entry></feed>";
        let error = parse_feed(entity, "1810.04805").unwrap_err();
        assert!(error.contains("unknown entity `&bogus;`"), "{error}");

        let other = BERT.replace("abs/1810.04805v2", "abs/1706.03762v7");
        let error = parse_feed(&other, "1810.04805").unwrap_err();
        assert!(error.contains("not for `1810.04805`"), "{error}");

        let undated = BERT.replace("2018-10-11T00:50:01Z", "soon");
        let error = parse_feed(&undated, "1810.04805").unwrap_err();
        assert!(error.contains("no valid <published> date"), "{error}");
    }

    #[test]
    fn character_references_and_cdata_are_text() {
        let xml = "<feed><entry><id>http://arxiv.org/abs/1810.04805v1</id>\
                   <title>A &#x3B1;-test &amp; <![CDATA[<more>]]></title>\
                   <published>2018-10-11T00:50:01Z</published></entry></feed>";
        let Feed::Found(entry) = parse_feed(xml, "1810.04805").unwrap() else {
            panic!("not found");
        };
        assert_eq!(entry.title, "A α-test & <more>");
    }
}
