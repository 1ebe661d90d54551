//! Outbound HTTP is a granted capability: a plugin reaches exactly the hosts its `network`
//! entry names, and nothing else: not another port, not another plugin's host, not a raw socket.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Fixture, Server, hostile_wasm};

/// A loopback HTTP server that answers every request with `body`; counts requests.
async fn http_server(body: &'static str) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0u8; 8192];
                let _ = socket.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (port, hits)
}

fn fixture(config: &str) -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    fixture.write(
        "plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).expect("read hostile.wasm"),
    );
    let path = fixture.config(config);
    (fixture, path)
}

#[tokio::test]
async fn a_granted_host_is_reachable_and_nothing_else_is() {
    let (granted, hits) = http_server("granted").await;
    let (other, other_hits) = http_server("other").await;
    let (_fixture, config) = fixture(&format!(
        r#"
[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"
network = ["127.0.0.1:{granted}"]
"#
    ));
    let server = Server::start(&config).await;

    let ok = server
        .call(
            "fetch",
            json!({"name": format!("http://127.0.0.1:{granted}/x")}),
        )
        .await;
    assert_eq!(ok.ok_text(), "200 granted");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // Another port on the same address, another name for the same address, and a public host.
    for url in [
        format!("http://127.0.0.1:{other}/"),
        format!("http://localhost:{granted}/"),
        "https://example.com/".to_string(),
    ] {
        let refused = server.call("fetch", json!({"name": url})).await;
        let text = refused.error_text();
        assert!(text.contains("refused the request"), "{url}: {text}");
        assert!(text.contains("network"), "{url}: {text}");
    }
    assert_eq!(
        other_hits.load(Ordering::SeqCst),
        0,
        "no connection was made"
    );
    server
        .log()
        .wait_for("not in the plugin's `network` grant")
        .await;

    // Raw sockets stay closed even to the granted host.
    let socket = server
        .call("socket", json!({"name": format!("127.0.0.1:{granted}")}))
        .await;
    assert!(socket.error_text().contains("connect failed"));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_plugin_without_a_grant_cannot_reach_another_plugins_host() {
    let (port, hits) = http_server("granted").await;
    let (_fixture, config) = fixture(&format!(
        r#"
[[plugin]]
name = "granted"
path = "plugins/hostile.wasm"
network = ["127.0.0.1:{port}"]
tools = ["fetch"]

[[plugin]]
name = "ungranted"
path = "plugins/hostile.wasm"
tools = ["fetch2"]
"#
    ));
    let server = Server::start(&config).await;
    let url = format!("http://127.0.0.1:{port}/");
    let refused = server.call("fetch2", json!({"name": url})).await;
    assert!(
        refused
            .error_text()
            .contains("refused the request to `127.0.0.1"),
        "{}",
        refused.error_text()
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let ok = server.call("fetch", json!({"name": url})).await;
    assert_eq!(ok.ok_text(), "200 granted");
}

#[tokio::test]
async fn bad_network_entries_are_config_errors() {
    let (_fixture, config) = fixture(
        r#"
[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"
network = ["https://export.arxiv.org", "*.example.com", "host:0", "Upper.Case"]
"#,
    );
    let check = crate::support::cli(&["check", "--config", config.to_str().expect("utf-8")]).await;
    assert_eq!(
        check.code(),
        2,
        "a configuration error exits 2, as for every command"
    );
    for entry in [
        "https://export.arxiv.org",
        "*.example.com",
        "host:0",
        "Upper.Case",
    ] {
        assert!(
            check.stderr.contains(entry),
            "{entry} not reported:\n{}",
            check.stderr
        );
    }
}
