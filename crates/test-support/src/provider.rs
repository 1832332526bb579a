//! A model provider's HTTP API on 127.0.0.1:0, for tests of the real provider clients: it
//! records each request and answers from a script (a stream, an error status, a stream cut off
//! or one that stalls), one answer per connection. Also the streams of OpenAI-compatible chat
//! completions a script is made of.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpListener,
    sync::Mutex,
};

/// One answer of the fake: a status line's code, extra headers, and the body; `stall` keeps the
/// connection open after the body without ending it.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, &'static str)>,
    pub body: String,
    pub stall: bool,
    /// How long the server reads the prompt: the headers go at once, the body after this.
    pub thinking: std::time::Duration,
}

pub fn stream(body: &str) -> Answer {
    Answer {
        status: 200,
        headers: vec![("content-type", "text/event-stream")],
        body: body.into(),
        stall: false,
        thinking: std::time::Duration::ZERO,
    }
}

pub fn status(status: u16, headers: Vec<(&'static str, &'static str)>, body: &str) -> Answer {
    Answer { status, headers, body: body.into(), stall: false, thinking: std::time::Duration::ZERO }
}

/// A request as the fake received it: the request line, the headers (lower-cased names) and
/// the body as JSON.
#[derive(Debug)]
pub struct Received {
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub struct Fake {
    pub url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
}

/// Serves `answers` in order, one per connection.
pub async fn fake(answers: Vec<Answer>) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let url = format!("http://{}", listener.local_addr().expect("a local address"));
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    tokio::spawn(async move {
        for answer in answers {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let mut bytes = Vec::new();
            let mut buffer = [0u8; 4096];
            let (head, body) = loop {
                let n = socket.read(&mut buffer).await.expect("read a request");
                bytes.extend_from_slice(&buffer[..n]);
                if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().expect("a content length"))
                        })
                        .unwrap_or(0);
                    while bytes.len() < end + 4 + length {
                        let n = socket.read(&mut buffer).await.expect("read a request");
                        bytes.extend_from_slice(&buffer[..n]);
                    }
                    break (head, bytes[end + 4..end + 4 + length].to_vec());
                }
            };
            let mut lines = head.lines();
            let line = lines.next().unwrap_or_default().to_owned();
            let headers = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                .collect();
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            seen.lock().await.push(Received { line, headers, body });
            let mut reply = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", answer.status);
            for (name, value) in &answer.headers {
                reply.push_str(&format!("{name}: {value}\r\n"));
            }
            if answer.stall {
                reply.push_str("\r\n");
            } else {
                reply.push_str(&format!("content-length: {}\r\n\r\n", answer.body.len()));
            }
            socket.write_all(reply.as_bytes()).await.expect("write the headers");
            if !answer.thinking.is_zero() {
                // A model reading a long prompt: nothing comes for a while after the headers.
                tokio::time::sleep(answer.thinking).await;
            }
            socket.write_all(answer.body.as_bytes()).await.expect("write an answer");
            if answer.stall {
                // Held open, silent, until the client gives up and the test ends.
                tokio::spawn(async move {
                    let mut rest = Vec::new();
                    let _ = socket.read_to_end(&mut rest).await;
                });
            }
        }
    });
    Fake { url, received }
}

/// An OpenAI-compatible stream that writes `pieces` of text and stops.
pub fn openai_text(pieces: &[&str]) -> Answer {
    let mut body = String::new();
    for piece in pieces {
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 1200, "completion_tokens": 40}});
    body.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    stream(&body)
}

/// An OpenAI-compatible stream that calls the tool `name`, its arguments split across chunks.
pub fn openai_tool_call(name: &str, arguments: &Value) -> Answer {
    let arguments = arguments.to_string();
    let (first, second) = arguments.split_at(arguments.len() / 2);
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": first}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": second}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
               "usage": {"prompt_tokens": 1000, "completion_tokens": 20}}),
    ];
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    stream(&body)
}
