//! The HTTP of a model call: one POST, one retry before the first streamed byte, timeouts, and
//! the provider's errors in words (llm.md section 4).
//!
//! A call is retried once on 429, 500, 502, 503, 504 or 529, after the provider's `retry-after`
//! when it asks for at most [`MAX_RETRY_WAIT_SECS`], and never when the error cannot change
//! (Anthropic's spend limit, llama-server's "does not match the expected format" at temperature
//! 0) or once the answer has started. The stream must end with its protocol's last frame: an
//! answer cut off is an error, never a short answer. The key and the words are never logged.
//!
//! HTTP/1.1 on hyper's client, plain to a local server and over rustls (ring, the Mozilla roots
//! built in) to a cloud one, as the CIMD fetcher does: no second HTTP stack in the binary, no
//! CA bundle needed in a minimal container, and no proxy asked.

use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::{
    Request as HttpRequest, Response, StatusCode,
    body::{Bytes, Incoming},
    header,
};
use hyper_util::rt::TokioIo;
use ops::BoxFuture;

use super::{
    Completion, Decoder, Endpoint, Event, Flow, LlmError, Protocol, Provider, Request, anthropic,
    openai, sse::SseReader,
};

/// The longest `retry-after` waited for before the one retry; a longer one is the person's to
/// wait ("try again in N s").
const MAX_RETRY_WAIT_SECS: u64 = 10;
/// The most of an error body read, to find its message.
const MAX_ERROR_BYTES: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client of one configured endpoint.
pub struct Client {
    endpoint: Endpoint,
    tls: tokio_rustls::TlsConnector,
}

/// An answer being read, and the task driving its connection, stopped when the answer is
/// dropped.
struct Answer {
    response: Response<Incoming>,
    connection: tokio::task::JoinHandle<()>,
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

impl Client {
    pub fn new(endpoint: Endpoint) -> Result<Self, LlmError> {
        Self::trusting(endpoint, &[])
    }

    /// A client that also trusts these authorities (DER), besides the built-in roots.
    pub fn trusting(endpoint: Endpoint, extra_roots: &[Vec<u8>]) -> Result<Self, LlmError> {
        let tls = outbound::tls_connector(extra_roots).map_err(LlmError::Unreachable)?;
        Ok(Self { endpoint, tls })
    }

    async fn call(
        &self,
        request: &Request,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Completion, LlmError> {
        let limit = self.endpoint.timeouts.call;
        tokio::time::timeout(limit, self.call_within_time(request, on_event))
            .await
            .map_err(|_| LlmError::Timeout(limit))?
    }

    async fn call_within_time(
        &self,
        request: &Request,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Completion, LlmError> {
        let base = &self.endpoint.base_url;
        let (url, body, mut decoder): (String, _, Box<dyn Decoder>) = match self.endpoint.protocol {
            Protocol::OpenAiCompatible => (
                openai::url(base),
                openai::body(request, base),
                Box::<openai::OpenAiDecoder>::default(),
            ),
            Protocol::Anthropic => (
                anthropic::url(base),
                anthropic::body(request),
                Box::<anthropic::AnthropicDecoder>::default(),
            ),
        };
        let url = url::Url::parse(&url)
            .map_err(|_| LlmError::Unreachable(format!("{base} is not a URL")))?;
        let mut body = body;
        let (mut retried, mut switched) = (false, false);
        let mut answer = loop {
            let bytes = Bytes::from(
                serde_json::to_vec(&body).map_err(|err| LlmError::Protocol(err.to_string()))?,
            );
            let answer = self.post(&url, bytes).await?;
            let status = answer.response.status();
            let request_id = ["request-id", "x-request-id"].iter().find_map(|name| {
                answer.response.headers().get(*name)?.to_str().ok().map(str::to_owned)
            });
            tracing::debug!(status = status.as_u16(), request_id, "model call answered");
            if status.is_success() {
                break answer;
            }
            let retry_after = answer
                .response
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok());
            let text = error_text(answer).await;
            let transient = matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504 | 529)
                && !text.contains("enforced_spend_limit_reached")
                && !text.contains("does not match the expected");
            // The endpoint wants the other name for the token limit: asked again once.
            if status == StatusCode::BAD_REQUEST
                && self.endpoint.protocol == Protocol::OpenAiCompatible
                && !switched
                && openai::switch_token_field(&mut body, &error_message(&text))
            {
                switched = true;
                continue;
            }
            if transient && !retried && retry_after.unwrap_or(0) <= MAX_RETRY_WAIT_SECS {
                retried = true;
                tokio::time::sleep(backoff(retry_after)).await;
                continue;
            }
            return Err(if status == StatusCode::TOO_MANY_REQUESTS {
                LlmError::RateLimited { retry_after_secs: retry_after }
            } else {
                LlmError::Status { status: status.as_u16(), message: error_message(&text) }
            });
        };
        let idle = self.endpoint.timeouts.idle;
        let mut reader = SseReader::default();
        let body = answer.response.body_mut();
        // Before the first piece the server is reading the prompt, which on a small machine
        // takes longer than any pause while it writes: only the call's deadline bounds it.
        let mut first = true;
        loop {
            let next = body.frame();
            let frame = if first {
                first = false;
                next.await
            } else {
                tokio::time::timeout(idle, next).await.map_err(|_| LlmError::Timeout(idle))?
            };
            let bytes = match frame {
                None | Some(Err(_)) => return Err(LlmError::Truncated),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(bytes) => bytes,
                    Err(_) => continue,
                },
            };
            let events = reader
                .feed(&bytes)
                .map_err(|_| LlmError::Protocol("a streamed line is longer than 1 MiB".into()))?;
            for event in events {
                if decoder.event(&event, on_event)? == Flow::Done {
                    return decoder.finish();
                }
            }
        }
    }

    /// One POST of `body` to `url` with the endpoint's headers, over a new connection.
    async fn post(&self, url: &url::Url, body: Bytes) -> Result<Answer, LlmError> {
        let base = &self.endpoint.base_url;
        let unreachable = || LlmError::Unreachable(format!("nothing answered at {base}"));
        let host = url.host_str().ok_or_else(unreachable)?.trim_matches(['[', ']']).to_owned();
        let port = url.port_or_known_default().ok_or_else(unreachable)?;
        let tcp = tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::TcpStream::connect((host.as_str(), port)),
        )
        .await
        .map_err(|_| unreachable())?
        .map_err(|_| unreachable())?;
        let (path, authority) = outbound::request_target(url);
        let mut request = HttpRequest::post(path)
            .header(header::HOST, authority)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "text/event-stream")
            .header(header::USER_AGENT, "Exhale (assistant)");
        let key = self.endpoint.api_key.as_ref().map(|key| key.expose());
        request = match (self.endpoint.protocol, key) {
            (Protocol::OpenAiCompatible, Some(key)) => {
                request.header(header::AUTHORIZATION, format!("Bearer {key}"))
            }
            (Protocol::OpenAiCompatible, None) => request,
            (Protocol::Anthropic, key) => {
                let request = request.header("anthropic-version", anthropic::VERSION);
                match key {
                    Some(key) => request.header("x-api-key", key),
                    None => request,
                }
            }
        };
        let request = request.body(Full::new(body)).map_err(|_| {
            LlmError::Protocol("the request cannot be written (a header is not valid)".into())
        })?;
        if url.scheme() == "https" {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|_| LlmError::Unreachable(format!("{host} is not a valid host name")))?;
            let tls = self.tls.connect(name, tcp).await.map_err(|err| {
                LlmError::Unreachable(format!("{host}'s TLS certificate cannot be trusted ({err})"))
            })?;
            exchange(TokioIo::new(tls), request).await
        } else {
            exchange(TokioIo::new(tcp), request).await
        }
    }
}

/// Sends `request` over a fresh HTTP/1.1 connection on `io`.
async fn exchange<IO>(io: IO, request: HttpRequest<Full<Bytes>>) -> Result<Answer, LlmError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let broken = |err: hyper::Error| LlmError::Unreachable(format!("the connection failed: {err}"));
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(broken)?;
    let connection = tokio::spawn(async move {
        let _ = connection.await;
    });
    match sender.send_request(request).await {
        Ok(response) => Ok(Answer { response, connection }),
        Err(err) => {
            connection.abort();
            Err(broken(err))
        }
    }
}

impl Provider for Client {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_event: &'a mut (dyn FnMut(Event) + Send),
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(self.call(request, on_event))
    }
}

/// The wait before the one retry: what the provider asked, else a second, with up to a quarter
/// second of jitter so clients that failed together do not retry together.
fn backoff(retry_after: Option<u64>) -> Duration {
    use std::hash::{BuildHasher as _, Hasher as _};
    // Each RandomState has fresh keys: an unpredictable number without a generator.
    let jitter = std::collections::hash_map::RandomState::new().build_hasher().finish() % 250;
    let base = retry_after.map_or(Duration::from_secs(1), Duration::from_secs);
    base + Duration::from_millis(jitter)
}

/// An error body, as text, within [`MAX_ERROR_BYTES`].
async fn error_text(mut answer: Answer) -> String {
    let mut text = Vec::new();
    let body = answer.response.body_mut();
    while let Some(Ok(frame)) = body.frame().await {
        if let Some(bytes) = frame.data_ref() {
            text.extend_from_slice(bytes);
        }
        if text.len() >= MAX_ERROR_BYTES {
            text.truncate(MAX_ERROR_BYTES);
            break;
        }
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The provider's own message (`error.message` in both protocols), else the start of the body.
fn error_message(text: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|body| body["error"]["message"].as_str().map(str::to_owned));
    let message = from_json.unwrap_or_else(|| text.trim().to_owned());
    let mut shortened: String = message.chars().take(300).collect();
    if shortened.len() < message.len() {
        shortened.push('…');
    }
    shortened
}
