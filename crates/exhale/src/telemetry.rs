//! Optional export of the built-in assistant's spans to an OpenTelemetry collector the owner
//! names (`otlp_endpoint`, off by default: nothing leaves unless configured). Only the GenAI
//! spans are sent, model calls (`chat`) and tool calls (`execute_tool`), with their attributes
//! as the assistant records them (provider, model, token counts, tool name; never the words or
//! a key), as OTLP/HTTP JSON to `{endpoint}/v1/traces`, in batches, from a thread of its own.
//! A collector that is down loses spans, never slows a request: the queue is bounded and a full
//! one drops.
//!
//! Plain `http://` only, as a collector or agent on the same machine or network is reached; a
//! remote collector goes behind one.

use std::{
    io::{Read as _, Write as _},
    net::TcpStream,
    sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde_json::{Value, json};
use tracing::{
    Subscriber,
    field::{Field, Visit},
    span::{Attributes, Id, Record},
};
use tracing_subscriber::{Layer, layer::Context, registry::LookupSpan};

/// The spans exported: the OpenTelemetry GenAI conventions' operations.
const EXPORTED: &[&str] = &["chat", "execute_tool"];
/// Spans waiting for the exporter; more are dropped.
const QUEUE: usize = 1024;
/// Spans in one request, and how long the first of a batch waits for company.
const BATCH: usize = 64;
const LINGER: Duration = Duration::from_secs(2);

/// Whether the layer wants a callsite: only the exported spans, so no other span is built for it.
pub(crate) fn is_exported(metadata: &tracing::Metadata<'_>) -> bool {
    metadata.is_span() && EXPORTED.contains(&metadata.name())
}

/// Where the spans go: `host:port` and the path, from `http://host:port[/prefix]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Collector {
    address: String,
    path: String,
}

impl Collector {
    /// An `http://host:port` endpoint (a path prefix may follow), or why not.
    pub(crate) fn parse(endpoint: &str) -> Result<Self, String> {
        let rest = endpoint.trim().trim_end_matches('/').strip_prefix("http://").ok_or_else(|| {
            format!("otlp_endpoint {endpoint} must start with http:// (a collector on this machine or network)")
        })?;
        let (address, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if address.is_empty() || address.contains(['@', '?', '#', ' ']) {
            return Err(format!(
                "otlp_endpoint {endpoint} is not an address such as http://127.0.0.1:4318"
            ));
        }
        let address =
            if address.contains(':') { address.to_owned() } else { format!("{address}:4318") };
        let prefix = if prefix.is_empty() { String::new() } else { format!("/{prefix}") };
        Ok(Self { address, path: format!("{prefix}/v1/traces") })
    }
}

/// A span being recorded.
struct Open {
    trace_id: String,
    span_id: String,
    parent_span_id: Option<String>,
    name: &'static str,
    start: u128,
    attributes: Vec<(String, Value)>,
}

struct Fields<'a>(&'a mut Vec<(String, Value)>);

impl Fields<'_> {
    fn set(&mut self, field: &Field, value: Value) {
        let name = field.name().to_owned();
        match self.0.iter_mut().find(|(key, _)| *key == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, json!({"stringValue": value}));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, json!({"intValue": value.to_string()}));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, json!({"intValue": value.to_string()}));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, json!({"boolValue": value}));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, json!({"stringValue": format!("{value:?}")}));
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "a span's wall-clock start and end, for the collector"
)]
fn now_nanos() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    if getrandom::fill(&mut buffer).is_err() {
        // An id that is not random is still an id; the span is not lost.
        buffer.iter_mut().enumerate().for_each(|(i, b)| *b = (now_nanos() >> (i % 16)) as u8);
    }
    buffer.iter().map(|b| format!("{b:02x}")).collect()
}

/// The layer that records the GenAI spans and hands each finished one to the exporter.
pub(crate) struct OtlpLayer {
    sender: SyncSender<Value>,
}

impl OtlpLayer {
    /// The layer, and the exporter's thread sending to `collector`.
    pub(crate) fn start(collector: Collector) -> Self {
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || export(&collector, &receiver))
            .map(drop)
            .unwrap_or_else(|err| eprintln!("exhale: spans are not exported: {err}"));
        Self { sender }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for OtlpLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let name = attrs.metadata().name();
        let Some(name) = EXPORTED.iter().find(|exported| **exported == name).copied() else {
            return;
        };
        let Some(span) = ctx.span(id) else { return };
        // Within an exported span, the same trace; otherwise a trace of its own.
        let parent = span.scope().skip(1).find_map(|ancestor| {
            ancestor
                .extensions()
                .get::<Open>()
                .map(|open| (open.trace_id.clone(), open.span_id.clone()))
        });
        let (trace_id, parent_span_id) = match parent {
            Some((trace, span)) => (trace, Some(span)),
            None => (random_hex(16), None),
        };
        let mut attributes = Vec::new();
        attrs.record(&mut Fields(&mut attributes));
        let open = Open {
            trace_id,
            span_id: random_hex(8),
            parent_span_id,
            name,
            start: now_nanos(),
            attributes,
        };
        span.extensions_mut().insert(open);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.attributes));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Open>() else { return };
        let attributes: Vec<Value> = open
            .attributes
            .into_iter()
            .map(|(key, value)| json!({"key": key, "value": value}))
            .collect();
        let mut exported = json!({
            "traceId": open.trace_id,
            "spanId": open.span_id,
            "name": open.name,
            // SPAN_KIND_CLIENT: a call to a model, or to a tool on the model's behalf.
            "kind": 3,
            "startTimeUnixNano": open.start.to_string(),
            "endTimeUnixNano": now_nanos().to_string(),
            "attributes": attributes,
        });
        if let Some(parent) = open.parent_span_id {
            exported["parentSpanId"] = json!(parent);
        }
        if let Err(TrySendError::Full(_)) = self.sender.try_send(exported) {
            // The collector is behind; a request is never made to wait for it.
        }
    }
}

/// Sends batches until the layer is gone.
fn export(collector: &Collector, receiver: &Receiver<Value>) {
    loop {
        let Ok(first) = receiver.recv() else { return };
        let mut batch = vec![first];
        let deadline = std::time::Instant::now() + LINGER;
        while batch.len() < BATCH {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match receiver.recv_timeout(left) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    post(collector, &batch);
                    return;
                }
            }
        }
        post(collector, &batch);
    }
}

fn post(collector: &Collector, spans: &[Value]) {
    let body = json!({"resourceSpans": [{
        "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "exhale"}},
            {"key": "service.version", "value": {"stringValue": ops::VERSION}},
        ]},
        "scopeSpans": [{"scope": {"name": "exhale.assistant"}, "spans": spans}],
    }]})
    .to_string();
    let sent = (|| -> std::io::Result<()> {
        let mut stream = TcpStream::connect(&collector.address)?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        write!(
            stream,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            collector.path,
            collector.address,
            body.len()
        )?;
        let mut status = [0u8; 12];
        stream.read_exact(&mut status)?;
        Ok(())
    })();
    if let Err(err) = sent {
        tracing::warn!(error = %err, spans = spans.len(), "the OpenTelemetry collector did not take the spans");
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    #[test]
    fn endpoints_are_plain_http_addresses() {
        let collector = Collector::parse("http://127.0.0.1:4318/").unwrap();
        assert_eq!(
            (collector.address.as_str(), collector.path.as_str()),
            ("127.0.0.1:4318", "/v1/traces")
        );
        let prefixed = Collector::parse("http://otel.lan/otlp").unwrap();
        assert_eq!(
            (prefixed.address.as_str(), prefixed.path.as_str()),
            ("otel.lan:4318", "/otlp/v1/traces")
        );
        for bad in ["https://collector.example", "127.0.0.1:4318", "http://", "http://user@host"] {
            assert!(Collector::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_genai_spans_reach_the_collector_with_their_token_counts_and_nothing_else() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let layer = OtlpLayer::start(Collector::parse(&endpoint).unwrap());
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let chat = tracing::info_span!(
                "chat",
                gen_ai.operation.name = "chat",
                gen_ai.request.model = "qwen2.5:7b",
                gen_ai.usage.input_tokens = tracing::field::Empty,
            );
            chat.in_scope(|| {
                let tool =
                    tracing::info_span!("execute_tool", gen_ai.tool.name = "list_subscriptions");
                drop(tool);
            });
            chat.record("gen_ai.usage.input_tokens", 5590_u64);
            drop(chat);
            drop(tracing::info_span!("op", name = "get_context"));
        });
        // The layer is gone with the subscriber, so the exporter sends what it has at once.
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = String::new();
        let mut buffer = [0u8; 4096];
        while !request.contains("\"resourceSpans\"") || !request.ends_with("}]}]}]}") {
            let n = socket.read(&mut buffer).unwrap();
            assert!(n > 0, "the request ended early: {request}");
            request.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
        socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").unwrap();
        assert!(request.starts_with("POST /v1/traces HTTP/1.1\r\n"), "{request}");
        let body: Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        let spans = &body["resourceSpans"][0]["scopeSpans"][0]["spans"];
        let names: Vec<&str> =
            spans.as_array().unwrap().iter().filter_map(|s| s["name"].as_str()).collect();
        assert_eq!(names, ["execute_tool", "chat"], "the op span is not exported");
        let (tool, chat) = (&spans[0], &spans[1]);
        assert_eq!(tool["traceId"], chat["traceId"]);
        assert_eq!(tool["parentSpanId"], chat["spanId"]);
        let attribute = |span: &Value, key: &str| {
            span["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == key)
                .map(|a| a["value"].clone())
        };
        assert_eq!(attribute(chat, "gen_ai.usage.input_tokens"), Some(json!({"intValue": "5590"})));
        assert_eq!(
            attribute(chat, "gen_ai.request.model"),
            Some(json!({"stringValue": "qwen2.5:7b"}))
        );
        assert_eq!(
            attribute(tool, "gen_ai.tool.name"),
            Some(json!({"stringValue": "list_subscriptions"}))
        );
    }
}
