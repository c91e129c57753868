//! Connection hygiene on a real socket: the header, idle and body timeouts close connections that
//! send nothing, trickle or stall; at the connection cap idle connections make room, so `/healthz`
//! still answers; shutdown closes idle connections and lets a request in flight finish; a large
//! request head is still read.

use crate::common::*;
use serde_json::json;
use std::time::{Duration, Instant};
use svc_server::ConnectionSettings;
use tokio::io::AsyncWriteExt;

/// Short timeouts so that the tests see them pass; each test shortens the one it checks.
fn settings(header: u64, idle: u64, body: u64, max_connections: usize) -> ConnectionSettings {
    ConnectionSettings {
        header_timeout: Duration::from_secs(header),
        idle_timeout: Duration::from_secs(idle),
        body_timeout: Duration::from_secs(body),
        max_connections,
    }
}

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: svc\r\n\r\n";

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_timeout() {
    let app = TestApp::new().await;
    let server = Running::start(&app, settings(1, 30, 30, 64)).await;
    let started = Instant::now();
    let mut idle = server.connect().await;
    let received = wait_closed(&mut idle, Duration::from_secs(10)).await;
    let after = started.elapsed();
    assert!(received.is_empty(), "no answer to a request never sent: {:?}", String::from_utf8_lossy(&received));
    assert!(after >= Duration::from_millis(950), "closed after {after:?}, before the 1 s header timeout");
}

#[tokio::test]
async fn a_request_head_that_trickles_in_is_cut_off_at_the_header_timeout() {
    let app = TestApp::new().await;
    let server = Running::start(&app, settings(1, 30, 30, 64)).await;
    let started = Instant::now();
    let (mut reader, mut writer) = server.connect().await.into_split();
    // Slowloris: a header line every 100 ms, never the blank line that ends the head.
    let trickle = tokio::spawn(async move {
        writer.write_all(b"GET /healthz HTTP/1.1\r\nHost: svc\r\n").await.unwrap();
        for n in 0u32.. {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer.write_all(format!("X-Slow-{n}: a\r\n").as_bytes()).await.is_err() {
                return n;
            }
        }
        unreachable!()
    });
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        use tokio::io::AsyncReadExt;
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the trickling connection was still open after 10 s");
    let after = started.elapsed();
    assert!(received.is_empty(), "no answer to an unfinished head: {:?}", String::from_utf8_lossy(&received));
    assert!(after >= Duration::from_millis(950), "closed after {after:?}, before the 1 s header timeout");
    let lines_sent = tokio::time::timeout(Duration::from_secs(10), trickle).await.expect("writes fail").unwrap();
    assert!(lines_sent >= 5, "the client kept sending until the close ({lines_sent} lines)");
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_after_the_idle_timeout_not_the_header_timeout() {
    let app = TestApp::new().await;
    let server = Running::start(&app, settings(30, 1, 30, 64)).await;
    // Connected at the same time and silent: held to the 30 s header timeout.
    let mut silent = server.connect().await;
    let mut kept = server.connect().await;
    for _ in 0..2 {
        kept.write_all(HEALTHZ).await.unwrap();
        let response = read_response(&mut kept).await;
        assert_eq!(response.status, 200);
        assert_eq!(response.json(), json!({"ok": true}));
    }
    let answered = Instant::now();
    wait_closed(&mut kept, Duration::from_secs(10)).await;
    let after = answered.elapsed();
    assert!(after >= Duration::from_millis(950), "closed {after:?} after the answer, before the 1 s idle timeout");
    assert!(still_open_and_silent(&silent), "a new connection gets the header timeout, not the idle one");
    // And the silent one still may send its request.
    silent.write_all(HEALTHZ).await.unwrap();
    assert_eq!(read_response(&mut silent).await.status, 200);
}

#[tokio::test]
async fn a_request_body_that_stalls_is_cut_off_at_the_body_timeout_without_an_answer() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let server = Running::start(&app, settings(30, 30, 1, 64)).await;
    let mut stream = server.connect().await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: svc\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    let started = Instant::now();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
    let received = wait_closed(&mut stream, Duration::from_secs(10)).await;
    let after = started.elapsed();
    assert!(received.is_empty(), "no answer to a body that never came: {:?}", String::from_utf8_lossy(&received));
    assert!(after >= Duration::from_millis(950), "closed after {after:?}, before the 1 s body timeout");

    // A body that arrives in time is answered as usual.
    let mut stream = server.connect().await;
    let ping = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: svc\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        ping.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&ping).await.unwrap();
    let response = read_response(&mut stream).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
}

#[tokio::test]
async fn at_the_connection_cap_the_longest_idle_connection_makes_room_and_healthz_answers() {
    let app = TestApp::new().await;
    let server = Running::start(&app, settings(30, 30, 30, 8)).await;
    // The cap, filled with connections that send nothing (in the incident: 300 with 256 descriptors).
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(server.connect().await);
    }
    // A health check still gets through: the longest-idle connection is closed for it.
    let mut health = server.connect().await;
    health.write_all(HEALTHZ).await.unwrap();
    let response = read_response(&mut health).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"ok": true}));
    wait_closed(&mut idle[0], Duration::from_secs(5)).await;
    for (n, connection) in idle.iter().enumerate().skip(1) {
        assert!(still_open_and_silent(connection), "idle connection {n} should still be open");
    }

    // The cap holds: each new connection costs the longest-idle one its place, never more.
    let mut again = server.connect().await;
    again.write_all(HEALTHZ).await.unwrap();
    assert_eq!(read_response(&mut again).await.status, 200);
    wait_closed(&mut idle[1], Duration::from_secs(5)).await;
    for (n, connection) in idle.iter().enumerate().skip(2) {
        assert!(still_open_and_silent(connection), "idle connection {n} should still be open");
    }
    assert!(still_open_and_silent(&health), "the first health check's connection is newer than idle 2..7");
}

#[tokio::test]
async fn shutdown_closes_idle_connections_and_lets_a_request_in_flight_finish() {
    let app = TestApp::new().await;
    let (_, key) = app.mint(&["feedback:read"]).await;
    let mut server = Running::start(&app, ConnectionSettings::default()).await;
    let mut idle = server.connect().await;
    idle.write_all(HEALTHZ).await.unwrap();
    assert_eq!(read_response(&mut idle).await.status, 200);

    // A request in flight: the server has read its head and asked for the body (100 Continue).
    let mut busy = server.connect().await;
    let ping = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": "last", "method": "ping"})).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: svc\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        ping.len()
    );
    busy.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut busy).await.status, 100);

    server.shut_down();
    assert!(wait_closed(&mut idle, Duration::from_secs(5)).await.is_empty(), "the idle connection is closed");
    busy.write_all(&ping).await.unwrap();
    let response = read_response(&mut busy).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"jsonrpc": "2.0", "id": "last", "result": {}}));
    wait_closed(&mut busy, Duration::from_secs(5)).await;
    assert!(server.finished(Duration::from_secs(5)).await, "serve returns once every connection closed");
    assert!(tokio::net::TcpStream::connect(server.address).await.is_err(), "no new connections after shutdown");
}

#[tokio::test]
async fn a_request_head_of_40_kib_is_served() {
    // The connection's read buffer is capped at 64 KiB (uploads' memory, bench/README.md); heads
    // as large as a busy site's cookies make them still fit.
    let app = TestApp::new().await;
    let server = Running::start(&app, ConnectionSettings::default()).await;
    let mut connection = server.connect().await;
    let head = format!("GET /healthz HTTP/1.1\r\nHost: svc\r\nCookie: c={}\r\n\r\n", "x".repeat(40 * 1024));
    connection.write_all(head.as_bytes()).await.unwrap();
    let response = read_response(&mut connection).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"ok": true}));
}
