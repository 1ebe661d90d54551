//! The `research` plugin: `research_query` on the sample registry (`plugins/research/registry`),
//! skipped records, and `research_add` against a fake arXiv API on 127.0.0.1.
//!
//! [`FakeArxiv`] is a tiny HTTP/1.1 server that answers canned responses and counts requests,
//! so the tests can show when the plugin fetched and when it refused before fetching. No test
//! touches the internet. Every refusal is checked on disk: the registry directory must be
//! byte-for-byte what it was ([`Files`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::support::{Fixture, Server, cli, workspace_root};

/// The sample registry's ids, sorted.
const SAMPLE_IDS: [&str; 10] = [
    "chain-of-thought",
    "compute-optimal-scaling",
    "flash-attention",
    "lora",
    "mixture-of-experts",
    "qlora",
    "react",
    "retrieval-augmented-generation",
    "rotary-embeddings",
    "transformer",
];

/// The arXiv API's answer for `id_list=1810.04805`, written by hand in the API's format.
const BERT_FEED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D1810.04805%26start%3D0%26max_results%3D10" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=&amp;id_list=1810.04805&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/Pq7s5MHyDGI4Af9Q4OEYNl0qj5s</id>
  <updated>2024-05-01T00:00:00-04:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">1</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">10</opensearch:itemsPerPage>
  <entry>
    <id>http://arxiv.org/abs/1810.04805v2</id>
    <updated>2019-05-24T20:37:26Z</updated>
    <published>2018-10-11T00:50:01Z</published>
    <title>BERT: Pre-training of Deep Bidirectional Transformers for Language
  Understanding</title>
    <summary>  We introduce a new language representation model called BERT, which stands
for Bidirectional Encoder Representations from Transformers. Unlike recent
language representation models, BERT is designed to pre-train deep
bidirectional representations from unlabeled text by jointly conditioning on
both left and right context in all layers. As a result, the pre-trained BERT
model can be fine-tuned with just one additional output layer to create
state-of-the-art models for a wide range of tasks, such as question answering
and language inference, without substantial task-specific architecture
modifications.
</summary>
    <author>
      <name>Jacob Devlin</name>
    </author>
    <author>
      <name>Ming-Wei Chang</name>
    </author>
    <author>
      <name>Kenton Lee</name>
    </author>
    <author>
      <name>Kristina Toutanova</name>
    </author>
    <link href="http://arxiv.org/abs/1810.04805v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/1810.04805v2" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>
"#;

/// The abstract above, as the record holds it: whitespace normalised.
const BERT_ABSTRACT: &str = "We introduce a new language representation model called BERT, \
    which stands for Bidirectional Encoder Representations from Transformers. Unlike recent \
    language representation models, BERT is designed to pre-train deep bidirectional \
    representations from unlabeled text by jointly conditioning on both left and right context \
    in all layers. As a result, the pre-trained BERT model can be fine-tuned with just one \
    additional output layer to create state-of-the-art models for a wide range of tasks, such \
    as question answering and language inference, without substantial task-specific \
    architecture modifications.";

/// The API's answer for an id it does not have: a feed with no entry.
const EMPTY_FEED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="html">ArXiv Query: search_query=&amp;id_list=9912.99999&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/x1Xk7bMFw9cTAlXgRM2Cq3V0bTo</id>
  <updated>2024-05-01T00:00:00-04:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:totalResults>
</feed>
"#;

/// A fake arXiv API on 127.0.0.1: one canned answer per `id_list`, 404 for any other path.
///
/// - `1810.04805` (any version): [`BERT_FEED`]
/// - `9912.99999`: [`EMPTY_FEED`] (no such paper)
/// - `1111.11111`: a feed cut off in the middle (malformed XML)
/// - `2222.22222`: 503 Service Unavailable
struct FakeArxiv {
    port: u16,
    /// The request target of every request, in order.
    requests: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl FakeArxiv {
    async fn start() -> FakeArxiv {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let port = listener.local_addr().expect("a local address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move { answer(stream, &log).await });
            }
        });
        FakeArxiv {
            port,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`.
    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The request targets so far.
    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("request log").clone()
    }
}

impl Drop for FakeArxiv {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request's head and writes the canned response, then closes the connection.
async fn answer(mut stream: tokio::net::TcpStream, log: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let target = head
        .lines()
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_string();
    log.lock().expect("request log").push(target.clone());

    let truncated = &BERT_FEED[..BERT_FEED.find("<author>").expect("the feed has authors")];
    let (status, body) = match target.split_once("?id_list=") {
        Some(("/api/query", id)) if id.starts_with("1810.04805") => ("200 OK", BERT_FEED),
        Some(("/api/query", "9912.99999")) => ("200 OK", EMPTY_FEED),
        Some(("/api/query", "1111.11111")) => ("200 OK", truncated),
        Some(("/api/query", "2222.22222")) => ("503 Service Unavailable", "try later\n"),
        _ => ("404 Not Found", "Not Found\n"),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/atom+xml; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Every file in a directory (the registry is flat), by name, with its bytes.
#[derive(Debug, PartialEq, Eq)]
struct Files(BTreeMap<String, Vec<u8>>);

impl Files {
    fn of(dir: &Path) -> Files {
        let files = std::fs::read_dir(dir)
            .expect("list the registry")
            .map(|entry| {
                let path = entry.expect("a directory entry").path();
                let name = path.file_name().expect("a name").to_string_lossy().into();
                (name, std::fs::read(&path).expect("read a registry file"))
            })
            .collect();
        Files(files)
    }

    /// Asserts that `dir` holds exactly these files, byte for byte.
    #[track_caller]
    fn assert_unchanged(&self, dir: &Path, after: &str) {
        let now = Files::of(dir);
        if &now != self {
            let names = |files: &Files| files.0.keys().cloned().collect::<Vec<_>>();
            panic!(
                "{after} changed the registry: before {:?}, after {:?}",
                names(self),
                names(&now)
            );
        }
    }
}

/// A fixture holding a copy of the sample registry in `registry/`, plus `extra` files.
fn registry_fixture(extra: &[(&str, &str)]) -> Fixture {
    let fixture = Fixture::new();
    let sample = workspace_root().join("plugins/research/registry");
    for entry in std::fs::read_dir(&sample).expect("the sample registry exists") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().expect("a name").to_string_lossy();
        fixture.write(
            &format!("registry/{name}"),
            std::fs::read(&path).expect("read a sample record"),
        );
    }
    for (name, contents) in extra {
        fixture.write(&format!("registry/{name}"), contents);
    }
    fixture
}

/// A config serving the research plugin with `registry/` mounted `mode`, `network` granted,
/// and `arxiv_base_url` set when given.
fn research_config(
    fixture: &Fixture,
    mode: &str,
    network: &[String],
    base_url: Option<&str>,
) -> PathBuf {
    let config = base_url
        .map(|url| format!("config = {{ arxiv_base_url = \"{url}\" }}"))
        .unwrap_or_default();
    fixture.config(&format!(
        r#"
[server]
categories = ["read", "network"]

[[plugin]]
name = "research"
path = "builtin:research"
mounts = [{{ host = "registry", mode = "{mode}" }}]
network = {network:?}
{config}
"#
    ))
}

/// A server for the sample registry mounted read-only, with no network.
async fn query_server(fixture: &Fixture) -> Server {
    Server::start(&research_config(fixture, "ro", &[], None)).await
}

/// A server whose research_add reaches `arxiv`, with the registry mounted read-write.
async fn add_server(fixture: &Fixture, arxiv: &FakeArxiv) -> Server {
    let network = [format!("127.0.0.1:{}", arxiv.port)];
    let config = research_config(fixture, "rw", &network, Some(&arxiv.base_url()));
    Server::start(&config).await
}

/// `research_query` with `arguments`, expecting success; returns the structured content.
async fn query(server: &Server, arguments: Value) -> Value {
    let result = server.call("research_query", arguments.clone()).await;
    assert!(
        !result.is_error(),
        "research_query {arguments} failed: {}",
        result.text()
    );
    result.structured().clone()
}

/// The `id`s of a JSON array of objects.
fn ids(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"))
        .iter()
        .map(|item| item["id"].as_str().expect("an id"))
        .collect()
}

#[tokio::test]
async fn the_tools_have_the_documented_annotations_and_categories() {
    let fixture = registry_fixture(&[]);
    let config = research_config(&fixture, "ro", &[], None);
    let server = Server::start(&config).await;
    let tools = server.tools().await;
    let tool = |name: &str| {
        tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not in tools/list: {tools:?}"))
            .clone()
    };
    let query = tool("research_query");
    assert_eq!(
        query["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true,
               "openWorldHint": false})
    );
    assert_eq!(query["outputSchema"]["type"], "object", "{query}");
    let add = tool("research_add");
    assert_eq!(
        add["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true,
               "openWorldHint": true})
    );
    assert_eq!(add["outputSchema"]["type"], "object", "{add}");
    server.stop().await;

    let out = cli(&["tools", "--config", &config.display().to_string()]).await;
    assert_eq!(out.code(), 0, "{out:?}");
    let row = |name: &str| {
        out.stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for `{name}`:\n{}", out.stdout))
            .to_string()
    };
    assert!(row("research_query").contains("read"), "{}", out.stdout);
    assert!(row("research_add").contains("network"), "{}", out.stdout);
}

#[tokio::test]
async fn research_add_is_not_served_without_the_network_category() {
    let fixture = registry_fixture(&[]);
    let config = fixture.config(
        r#"
[[plugin]]
name = "research"
path = "builtin:research"
mounts = [{ host = "registry", mode = "ro" }]
"#,
    );
    let server = Server::start(&config).await;
    assert_eq!(server.tool_names().await, ["research_query"]);
    server.stop().await;
}

#[tokio::test]
async fn search_ranks_by_weighted_field_hits() {
    let fixture = registry_fixture(&[]);
    let server = query_server(&fixture).await;

    // flash-attention: id 4 + name 3 + tags 2 + description 1; the other two: tags 2 +
    // description 1, tied, so by id.
    let result = query(&server, json!({"action": "search", "query": "Attention"})).await;
    let matches = &result["matches"];
    assert_eq!(
        ids(matches),
        ["flash-attention", "rotary-embeddings", "transformer"]
    );
    assert_eq!(matches[0]["score"], 10);
    assert_eq!(
        matches[0]["fields"],
        json!(["id", "name", "tags", "description"])
    );
    assert_eq!(matches[1]["score"], 3);
    assert_eq!(matches[2]["score"], 3);
    assert_eq!(result["action"], "search");
    assert_eq!(result["warnings"], json!([]));

    // Matching both words beats matching one: qlora has both (tags 2 + tags 2 + description
    // 1), lora only `low-rank` (tags 2 + description 1).
    let result = query(
        &server,
        json!({"action": "search", "query": "low-rank quantization"}),
    )
    .await;
    assert_eq!(ids(&result["matches"]), ["qlora", "lora"]);
    assert_eq!(result["matches"][0]["words_matched"], 2);
    assert_eq!(result["matches"][0]["score"], 5);
    assert_eq!(result["matches"][1]["score"], 3);

    // The status filter applies to search too.
    let result = query(
        &server,
        json!({"action": "search", "query": "attention", "status": "implemented"}),
    )
    .await;
    assert_eq!(
        ids(&result["matches"]),
        ["rotary-embeddings", "transformer"]
    );

    let text = server
        .call(
            "research_query",
            json!({"action": "search", "query": "reasoning"}),
        )
        .await
        .ok_text();
    assert!(
        text.starts_with("2 techniques match \"reasoning\""),
        "{text}"
    );
    assert!(text.contains("- chain-of-thought ("), "{text}");

    let none = query(&server, json!({"action": "search", "query": "blockchain"})).await;
    assert_eq!(none["matches"], json!([]));
    server.stop().await;
}

#[tokio::test]
async fn status_groups_techniques_by_status_then_priority() {
    let fixture = registry_fixture(&[]);
    let server = query_server(&fixture).await;
    let result = query(&server, json!({"action": "status"})).await;
    let groups = result["groups"].as_array().expect("groups");
    let summary: Vec<(&str, Vec<&str>)> = groups
        .iter()
        .map(|g| {
            (
                g["status"].as_str().expect("a status"),
                ids(&g["techniques"]),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "implemented",
                vec![
                    "lora",
                    "transformer",
                    "chain-of-thought",
                    "rotary-embeddings"
                ]
            ),
            ("planned", vec!["flash-attention", "react", "qlora"]),
            (
                "not-started",
                vec!["retrieval-augmented-generation", "mixture-of-experts"]
            ),
            ("rejected", vec!["compute-optimal-scaling"]),
        ]
    );
    assert_eq!(groups[0]["count"], 4);
    assert_eq!(groups[0]["techniques"][0]["priority"], "P1");

    let result = query(&server, json!({"action": "status", "status": "planned"})).await;
    assert_eq!(result["status"], "planned");
    let groups = result["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1);
    assert_eq!(
        ids(&groups[0]["techniques"]),
        ["flash-attention", "react", "qlora"]
    );
    let text = server
        .call(
            "research_query",
            json!({"action": "status", "status": "rejected"}),
        )
        .await
        .ok_text();
    assert_eq!(
        text,
        "rejected (1):\n- compute-optimal-scaling (Compute-optimal scaling (Chinchilla)) [P4, \
         scaling]\n"
    );
    server.stop().await;
}

#[tokio::test]
async fn stats_counts_by_status_topic_and_priority() {
    let fixture = registry_fixture(&[]);
    let server = query_server(&fixture).await;
    let result = query(&server, json!({"action": "stats"})).await;
    assert_eq!(
        result["stats"],
        json!({
            "total": 10,
            "by_status": {"implemented": 4, "planned": 3, "not-started": 2, "rejected": 1},
            "by_priority": {"P1": 4, "P2": 4, "P3": 1, "P4": 1},
            "by_topic": {
                "agents": 1, "architecture": 3, "efficiency": 1, "fine-tuning": 2,
                "prompting": 1, "retrieval": 1, "scaling": 1
            }
        })
    );
    let text = server
        .call("research_query", json!({"action": "stats"}))
        .await
        .ok_text();
    assert!(text.starts_with("10 techniques\n"), "{text}");
    assert!(
        text.contains("by status: implemented 4, planned 3, not-started 2, rejected 1\n"),
        "{text}"
    );

    let fine = query(&server, json!({"action": "stats", "status": "not-started"})).await;
    assert_eq!(fine["stats"]["total"], 2);
    assert_eq!(
        fine["stats"]["by_topic"],
        json!({"architecture": 1, "retrieval": 1})
    );
    server.stop().await;
}

#[tokio::test]
async fn overlap_is_jaccard_over_tags_topic_and_papers() {
    let fixture = registry_fixture(&[]);
    let server = query_server(&fixture).await;

    // lora {adapters, low-rank, parameter-efficient, fine-tuning, 2106.09685} and qlora
    // {low-rank, memory, parameter-efficient, quantization, fine-tuning, 2305.14314}: 3 of 8.
    let result = query(
        &server,
        json!({"action": "overlap", "technique_id": "lora"}),
    )
    .await;
    let overlap = &result["overlap"];
    assert_eq!(overlap["technique_id"], "lora");
    assert_eq!(overlap["threshold"], 0.3);
    assert_eq!(ids(&overlap["similar"]), ["qlora"]);
    assert_eq!(overlap["similar"][0]["similarity"], 3.0 / 8.0);
    assert_eq!(
        overlap["similar"][0]["shared"],
        json!(["fine-tuning", "low-rank", "parameter-efficient"])
    );
    assert_eq!(overlap["similar"][0]["union"], 8);

    // transformer: rotary-embeddings shares attention, transformer and architecture (3 of 7),
    // flash-attention attention and transformer (2 of 9), mixture-of-experts architecture
    // (1 of 9).
    let similar = |threshold: f64| {
        let server = &server;
        async move {
            let result = query(
                server,
                json!({"action": "overlap", "technique_id": "transformer", "threshold": threshold}),
            )
            .await;
            result["overlap"]["similar"]
                .as_array()
                .expect("similar")
                .iter()
                .map(|s| {
                    (
                        s["id"].as_str().expect("an id").to_string(),
                        s["similarity"].as_f64().expect("a number"),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        similar(0.3).await,
        [("rotary-embeddings".to_string(), 3.0 / 7.0)]
    );
    assert_eq!(
        similar(0.2).await,
        [
            ("rotary-embeddings".to_string(), 3.0 / 7.0),
            ("flash-attention".to_string(), 2.0 / 9.0)
        ]
    );
    assert_eq!(
        similar(0.1).await,
        [
            ("rotary-embeddings".to_string(), 3.0 / 7.0),
            ("flash-attention".to_string(), 2.0 / 9.0),
            ("mixture-of-experts".to_string(), 1.0 / 9.0)
        ]
    );
    assert!(similar(0.5).await.is_empty());

    // The status filter narrows the candidates, not the technique compared.
    let result = query(
        &server,
        json!({"action": "overlap", "technique_id": "transformer", "threshold": 0.1,
               "status": "planned"}),
    )
    .await;
    assert_eq!(ids(&result["overlap"]["similar"]), ["flash-attention"]);

    let text = server
        .call(
            "research_query",
            json!({"action": "overlap", "technique_id": "lora"}),
        )
        .await
        .ok_text();
    assert!(
        text.contains("- qlora (QLoRA) 0.375: shares fine-tuning, low-rank, parameter-efficient"),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test]
async fn missing_or_wrong_arguments_are_errors_that_name_them() {
    let fixture = registry_fixture(&[]);
    let server = query_server(&fixture).await;
    let cases = [
        (
            json!({"action": "search"}),
            "action `search` needs the argument `query`",
        ),
        (
            json!({"action": "overlap", "query": "x"}),
            "action `overlap` needs the argument `technique_id`",
        ),
        (
            json!({"action": "search", "query": "  "}),
            "`query` is empty",
        ),
    ];
    for (arguments, expected) in cases {
        let result = server.call("research_query", arguments.clone()).await;
        let text = result.error_text();
        assert!(text.contains(expected), "{arguments}: {text}");
    }
    let result = server
        .call(
            "research_query",
            json!({"action": "overlap", "technique_id": "bert"}),
        )
        .await;
    let text = result.error_text();
    assert!(
        text.starts_with("no technique `bert` in the registry"),
        "{text}"
    );
    assert!(
        text.contains("chain-of-thought, compute-optimal-scaling"),
        "{text}"
    );

    // The schema refuses what the plugin never sees, naming the field and what it takes.
    let cases = [
        (
            json!({"action": "delete"}),
            "`action`: \"delete\" is not one of \"search\"",
        ),
        (
            json!({"action": "overlap", "technique_id": "lora", "threshold": 1.5}),
            "threshold",
        ),
        (
            json!({"action": "stats", "status": "done"}),
            "`status`: \"done\" is not one of \"all\"",
        ),
    ];
    for (arguments, expected) in cases {
        let result = server.call("research_query", arguments.clone()).await;
        let text = result.error_text();
        assert!(text.contains(expected), "{arguments}: {text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn an_unparsable_record_is_skipped_by_name_and_reported() {
    let fixture = registry_fixture(&[
        ("broken.toml", "id = \"broken\"\nname = [\n"),
        (
            "done.toml",
            "id = \"done\"\nname = \"Done\"\ndescription = \"d\"\ntopic = \"t\"\n\
             status = \"done\"\npriority = \"P1\"\n",
        ),
        ("README.md", "not a record"),
    ]);
    let server = query_server(&fixture).await;
    for action in ["search", "status", "stats", "overlap"] {
        let arguments = json!({"action": action, "query": "lora", "technique_id": "lora"});
        let result = server.call("research_query", arguments).await;
        let text = result.ok_text();
        let warnings = result.structured()["warnings"]
            .as_array()
            .expect("warnings")
            .clone();
        assert_eq!(warnings.len(), 2, "{action}: {warnings:?}");
        let broken = warnings[0].as_str().expect("a warning");
        assert!(
            broken.starts_with("skipped `broken.toml`: line 2"),
            "{broken}"
        );
        let done = warnings[1].as_str().expect("a warning");
        assert!(
            done.starts_with("skipped `done.toml`: line 5, column 10: unknown variant `done`"),
            "{done}"
        );
        assert!(
            text.contains("warning: skipped `broken.toml`"),
            "{action}: {text}"
        );
    }
    let stats = query(&server, json!({"action": "stats"})).await;
    assert_eq!(
        stats["stats"]["total"], 10,
        "the good records are all there"
    );
    server.stop().await;
}

#[tokio::test]
async fn research_add_fetches_the_paper_and_writes_a_new_record() {
    let arxiv = FakeArxiv::start().await;
    let fixture = registry_fixture(&[]);
    let registry = fixture.path("registry");
    let server = add_server(&fixture, &arxiv).await;

    let result = server
        .call(
            "research_add",
            json!({"arxiv_id": "1810.04805", "topic": "pretraining", "priority": "P2"}),
        )
        .await;
    let text = result.ok_text();
    let path = registry.join("bert.toml");
    assert!(
        text.starts_with(&format!("added technique `bert` as `{}`", path.display())),
        "{text}"
    );
    assert_eq!(arxiv.requests(), ["/api/query?id_list=1810.04805"]);
    let structured = result.structured();
    assert_eq!(structured["id"], "bert");
    assert_eq!(structured["written"], true);
    assert_eq!(structured["path"], path.display().to_string());
    assert_eq!(
        structured["paper"],
        json!({
            "arxiv_id": "1810.04805",
            "title": "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
            "published": "2018-10-11",
            "authors": ["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"],
        })
    );

    let written = std::fs::read_to_string(&path).expect("bert.toml was written");
    assert_eq!(structured["record"], written.as_str());
    let record: toml::Table = written.parse().expect("the record is TOML");
    assert_eq!(record["id"].as_str(), Some("bert"));
    assert_eq!(record["name"].as_str(), Some("BERT"));
    assert_eq!(record["description"].as_str(), Some(BERT_ABSTRACT));
    assert_eq!(record["topic"].as_str(), Some("pretraining"));
    assert_eq!(record["status"].as_str(), Some("not-started"));
    assert_eq!(record["priority"].as_str(), Some("P2"));
    let paper = &record["papers"][0];
    assert_eq!(paper["arxiv"].as_str(), Some("1810.04805"));
    assert_eq!(paper["year"].as_integer(), Some(2018));
    let history = &record["history"][0];
    assert_eq!(history["decision"].as_str(), Some("added"));
    let date = history["date"].as_str().expect("a date");
    assert!(
        date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
        "{date}"
    );
    let names: Vec<String> = Files::of(&registry).0.into_keys().collect();
    assert_eq!(
        names.len(),
        SAMPLE_IDS.len() + 1,
        "no temporary file is left: {names:?}"
    );

    // The new record is part of the registry at once.
    let found = query(
        &server,
        json!({"action": "search", "query": "bidirectional"}),
    )
    .await;
    assert_eq!(ids(&found["matches"]), ["bert"]);
    let stats = query(&server, json!({"action": "stats"})).await;
    assert_eq!(stats["stats"]["by_status"]["not-started"], 3);
    assert_eq!(stats["warnings"], json!([]));

    // Adding it again, by any version, is refused before any request.
    let before = Files::of(&registry);
    for id in ["1810.04805", "1810.04805v2"] {
        let result = server.call("research_add", json!({"arxiv_id": id})).await;
        let text = result.error_text();
        assert_eq!(
            text,
            "arXiv 1810.04805 is already in the registry: technique `bert` (bert.toml) lists it"
        );
    }
    assert_eq!(arxiv.requests().len(), 1);
    before.assert_unchanged(&registry, "a duplicate research_add");
    server.stop().await;
}

#[tokio::test]
async fn a_dry_run_fetches_but_writes_nothing() {
    let arxiv = FakeArxiv::start().await;
    let fixture = registry_fixture(&[]);
    let registry = fixture.path("registry");
    let before = Files::of(&registry);
    let server = add_server(&fixture, &arxiv).await;

    let result = server
        .call(
            "research_add",
            json!({"arxiv_id": "1810.04805v2", "technique_id": "bert-base", "dry_run": true}),
        )
        .await;
    let text = result.ok_text();
    assert!(
        text.starts_with("dry run: would add technique `bert-base` as `"),
        "{text}"
    );
    assert!(text.contains("nothing was written"), "{text}");
    assert!(text.contains("\nid = \"bert-base\"\n"), "{text}");
    assert!(text.contains("\ntopic = \"unsorted\"\n"), "{text}");
    assert!(text.contains("\npriority = \"P3\"\n"), "{text}");
    assert!(text.contains("\narxiv = \"1810.04805v2\"\n"), "{text}");
    assert_eq!(result.structured()["written"], false);
    assert_eq!(arxiv.requests(), ["/api/query?id_list=1810.04805v2"]);
    before.assert_unchanged(&registry, "a dry run");
    server.stop().await;
}

#[tokio::test]
async fn research_add_failures_leave_the_registry_unchanged() {
    let arxiv = FakeArxiv::start().await;
    // A record file named `bert.toml` that does not list the paper (it does not even parse),
    // so the derived id is taken although no record lists 1810.04805.
    let fixture = registry_fixture(&[("bert.toml", "this is not a record\n")]);
    let registry = fixture.path("registry");
    let before = Files::of(&registry);
    let server = add_server(&fixture, &arxiv).await;

    // (arguments, expected error, requests made by the call)
    let cases = [
        (
            json!({"arxiv_id": "1810.048"}),
            "`1810.048` is not an arXiv identifier",
            0,
        ),
        (
            json!({"arxiv_id": "arxiv.org/abs/1810.04805"}),
            "is not an arXiv identifier",
            0,
        ),
        (
            json!({"arxiv_id": "2106.09685"}),
            "arXiv 2106.09685 is already in the registry: technique `lora` (lora.toml) lists it",
            0,
        ),
        (
            json!({"arxiv_id": "9912.99999", "technique_id": "lora"}),
            "technique `lora` already exists",
            0,
        ),
        (
            json!({"arxiv_id": "9912.99999", "technique_id": "Not_An_Id"}),
            "`Not_An_Id` is not a technique id",
            0,
        ),
        (
            json!({"arxiv_id": "9912.99999"}),
            "arXiv has no paper `9912.99999`; check the identifier",
            1,
        ),
        (
            json!({"arxiv_id": "1111.11111"}),
            "cannot read arXiv's answer for `1111.11111`",
            1,
        ),
        (
            json!({"arxiv_id": "2222.22222"}),
            "failed with HTTP 503, a server error",
            1,
        ),
        (
            json!({"arxiv_id": "1810.04805"}),
            "technique `bert` already exists",
            1,
        ),
    ];
    for (arguments, expected, requests) in cases {
        let made = arxiv.requests().len();
        let result = server.call("research_add", arguments.clone()).await;
        let text = result.error_text();
        assert!(text.contains(expected), "{arguments}: {text}");
        assert_eq!(
            arxiv.requests().len() - made,
            requests,
            "{arguments}: requests {:?}",
            arxiv.requests()
        );
        before.assert_unchanged(&registry, &format!("research_add {arguments}"));
    }
    let malformed = server
        .call("research_add", json!({"arxiv_id": "1111.11111"}))
        .await
        .error_text();
    assert!(
        malformed.contains("the response is not well-formed XML"),
        "{malformed}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_404_from_arxiv_is_an_error_and_changes_nothing() {
    let arxiv = FakeArxiv::start().await;
    let fixture = registry_fixture(&[]);
    let registry = fixture.path("registry");
    let before = Files::of(&registry);
    let network = [format!("127.0.0.1:{}", arxiv.port)];
    let base = format!("{}/moved", arxiv.base_url());
    let server = Server::start(&research_config(&fixture, "rw", &network, Some(&base))).await;

    let text = server
        .call("research_add", json!({"arxiv_id": "1810.04805"}))
        .await
        .error_text();
    assert!(text.contains("answered 404 Not Found"), "{text}");
    assert!(text.contains("arxiv_base_url"), "{text}");
    assert_eq!(arxiv.requests(), ["/moved/api/query?id_list=1810.04805"]);
    before.assert_unchanged(&registry, "a 404");
    server.stop().await;
}

#[tokio::test]
async fn a_host_not_granted_is_refused_by_name() {
    let granted = FakeArxiv::start().await;
    let other = FakeArxiv::start().await;
    let fixture = registry_fixture(&[]);
    let registry = fixture.path("registry");
    let before = Files::of(&registry);
    let network = [format!("127.0.0.1:{}", granted.port)];
    let config = research_config(&fixture, "rw", &network, Some(&other.base_url()));
    let server = Server::start(&config).await;

    let text = server
        .call("research_add", json!({"arxiv_id": "1810.04805"}))
        .await
        .error_text();
    assert!(
        text.contains(&format!("127.0.0.1:{}", other.port)),
        "the error should name the host: {text}"
    );
    assert_eq!(other.requests(), Vec::<String>::new(), "nothing reached it");
    assert_eq!(granted.requests(), Vec::<String>::new());
    before.assert_unchanged(&registry, "a refused request");
    server.stop().await;
}

#[tokio::test]
async fn research_add_with_a_read_only_registry_writes_nothing() {
    let arxiv = FakeArxiv::start().await;
    let fixture = registry_fixture(&[]);
    let registry = fixture.path("registry");
    let before = Files::of(&registry);
    let network = [format!("127.0.0.1:{}", arxiv.port)];
    let config = research_config(&fixture, "ro", &network, Some(&arxiv.base_url()));
    let server = Server::start(&config).await;

    let text = server
        .call("research_add", json!({"arxiv_id": "1810.04805"}))
        .await
        .error_text();
    assert!(
        text.contains("the registry directory is not writable"),
        "{text}"
    );
    assert!(text.contains("`rw`"), "{text}");
    before.assert_unchanged(&registry, "research_add on a read-only mount");
    server.stop().await;
}

#[tokio::test]
async fn structured_results_conform_to_the_output_schemas() {
    let arxiv = FakeArxiv::start().await;
    let fixture = registry_fixture(&[("broken.toml", "id = [\n")]);
    let server = add_server(&fixture, &arxiv).await;
    let tools = server.tools().await;
    let validator = |name: &str| {
        let tool = tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not in tools/list"));
        jsonschema::validator_for(&tool["outputSchema"]).expect("a valid output schema")
    };
    let query_schema = validator("research_query");
    for arguments in [
        json!({"action": "search", "query": "attention"}),
        json!({"action": "status"}),
        json!({"action": "status", "status": "planned"}),
        json!({"action": "stats"}),
        json!({"action": "overlap", "technique_id": "lora", "threshold": 0.0}),
    ] {
        let structured = query(&server, arguments.clone()).await;
        let errors: Vec<String> = query_schema
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{arguments}: {errors:?}\n{structured}");
    }
    let result = server
        .call(
            "research_add",
            json!({"arxiv_id": "1810.04805", "dry_run": true}),
        )
        .await;
    assert!(!result.is_error(), "{}", result.text());
    let errors: Vec<String> = validator("research_add")
        .iter_errors(result.structured())
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{}", result.structured());
    server.stop().await;
}

#[tokio::test]
async fn techniques_are_resources_and_a_prompt_reviews_one() {
    let fixture = registry_fixture(&[]);
    let config = research_config(&fixture, "ro", &[], None);
    let mut server = crate::support::RawServer::spawn(&config, &[]);
    server.initialize().await;
    let response = |message: &Value| {
        message
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{message}"))
    };

    let listed = response(&server.request(1, "resources/list", json!({})).await);
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(uris.len(), 10, "{listed}");
    assert!(uris.contains(&"research://technique/lora"), "{listed}");

    let read = response(
        &server
            .request(
                2,
                "resources/read",
                json!({"uri": "research://technique/lora"}),
            )
            .await,
    );
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "application/toml", "{read}");
    let text = contents["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("id = \"lora\"") && text.contains("2106.09685"),
        "{read}"
    );

    let missing = server
        .request(
            3,
            "resources/read",
            json!({"uri": "research://technique/nope"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    let completed = response(
        &server
            .request(
                4,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "review_technique"},
                       "argument": {"name": "technique_id", "value": "lo"}}),
            )
            .await,
    );
    assert_eq!(
        completed["completion"]["values"],
        json!(["lora"]),
        "{completed}"
    );

    let prompt = response(
        &server
            .request(
                5,
                "prompts/get",
                json!({"name": "review_technique", "arguments": {"technique_id": "lora"}}),
            )
            .await,
    );
    let messages = prompt["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"]["type"], "resource", "{prompt}");
    assert_eq!(
        messages[0]["content"]["resource"]["uri"],
        "research://technique/lora"
    );
    assert_eq!(
        messages[1]["content"]["uri"], "https://arxiv.org/abs/2106.09685",
        "{prompt}"
    );
    let request = messages.last().unwrap()["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(request.contains("Review the technique `lora`"), "{prompt}");

    let unknown = server
        .request(
            6,
            "prompts/get",
            json!({"name": "review_technique", "arguments": {"technique_id": "nope"}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    server.finish().await;
}
