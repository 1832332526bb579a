//! The real [`Client`] against a local HTTP server that speaks the providers' wire: it records
//! each request and answers from a script (a stream, an error status, a stream cut off or one
//! that stalls), so the retry, the timeouts and the headers are those of the real code.

use std::time::Duration;

use serde_json::json;
use test_support::provider::{Answer, fake, status, stream};

use super::*;

fn client(protocol: Protocol, url: &str, key: Option<&str>, timeouts: Timeouts) -> Client {
    Client::new(Endpoint {
        protocol,
        base_url: url.into(),
        api_key: key.map(ApiKey::new),
        timeouts,
    })
    .unwrap()
}

fn request() -> Request {
    Request {
        model: "qwen2.5".into(),
        system: "rules".into(),
        messages: vec![Message::user_text("What do we pay for streaming?")],
        tools: vec![ToolDef {
            name: "list_subscriptions".into(),
            description: "List".into(),
            parameters: json!({"type": "object"}),
        }],
        max_tokens: 8192,
        temperature: None,
    }
}

async fn complete(client: &Client) -> (Vec<Event>, Result<Completion, LlmError>) {
    let mut events = Vec::new();
    let result = client.complete(&request(), &mut |event| events.push(event)).await;
    (events, result)
}

const OPENAI_ANSWER: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"€25.98 a month.\"},\"finish_reason\":\"stop\"}]}\n\n: keep-alive\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n";

#[tokio::test]
async fn an_openai_compatible_server_is_asked_and_its_stream_read() {
    let server = fake(vec![stream(OPENAI_ANSWER), stream(OPENAI_ANSWER)]).await;
    let keyed =
        client(Protocol::OpenAiCompatible, &server.url, Some("sk-secret"), Timeouts::default());
    let (events, completion) = complete(&keyed).await;
    assert_eq!(events, vec![Event::Text("€25.98 a month.".into())]);
    let completion = completion.unwrap();
    assert_eq!(completion.message.text(), "€25.98 a month.");
    assert_eq!(completion.usage.unwrap().output, 5);
    // A local server without a key: no Authorization header at all.
    let local = client(Protocol::OpenAiCompatible, &server.url, None, Timeouts::default());
    assert!(complete(&local).await.1.is_ok());
    let received = server.received.lock().await;
    assert_eq!(received[0].line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(received[0].header("authorization"), Some("Bearer sk-secret"));
    assert_eq!(received[0].body["stream"], true);
    assert_eq!(received[0].body["messages"][1]["content"], "What do we pay for streaming?");
    assert_eq!(received[1].header("authorization"), None);
}

#[tokio::test]
async fn anthropic_is_asked_with_its_key_and_version_headers() {
    let answer = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Two.\"}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let server = fake(vec![stream(answer)]).await;
    let claude =
        client(Protocol::Anthropic, &server.url, Some("sk-ant-secret"), Timeouts::default());
    let completion = complete(&claude).await.1.unwrap();
    assert_eq!(completion.message.text(), "Two.");
    assert_eq!(completion.stop, StopReason::EndTurn);
    let received = server.received.lock().await;
    assert_eq!(received[0].line, "POST /v1/messages HTTP/1.1");
    assert_eq!(received[0].header("x-api-key"), Some("sk-ant-secret"));
    assert_eq!(received[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(received[0].header("authorization"), None);
    assert_eq!(received[0].body["tools"][0]["name"], "list_subscriptions");
}

#[tokio::test]
async fn a_transient_error_is_retried_once_and_a_lasting_one_never() {
    let cases: Vec<(Vec<Answer>, usize, Result<(), LlmError>)> = vec![
        // 429 asking for no wait, then the answer.
        (vec![status(429, vec![("retry-after", "0")], "{}"), stream(OPENAI_ANSWER)], 2, Ok(())),
        // Overloaded twice: one retry, then the error in the provider's words.
        (
            vec![
                status(
                    529,
                    vec![("retry-after", "0")],
                    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
                ),
                status(
                    529,
                    vec![("retry-after", "0")],
                    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
                ),
            ],
            2,
            Err(LlmError::Status { status: 529, message: "Overloaded".into() }),
        ),
        // A spend limit does not lift by asking again.
        (
            vec![status(
                429,
                vec![],
                "{\"error\":{\"message\":\"limit\",\"details\":{\"error_code\":\"enforced_spend_limit_reached\"}}}",
            )],
            1,
            Err(LlmError::RateLimited { retry_after_secs: None }),
        ),
        // Nor does llama-server's grammar failure at temperature 0.
        (
            vec![status(
                500,
                vec![],
                "{\"error\":{\"message\":\"The model produced output that does not match the expected peg-native format\"}}",
            )],
            1,
            Err(LlmError::Status {
                status: 500,
                message:
                    "The model produced output that does not match the expected peg-native format"
                        .into(),
            }),
        ),
        // A bad request is never retried...
        (
            vec![status(400, vec![], "{\"error\":{\"message\":\"Unknown model qwen2.5\"}}")],
            1,
            Err(LlmError::Status { status: 400, message: "Unknown model qwen2.5".into() }),
        ),
        // ...but one naming the other token-limit field is asked again with it, once.
        (
            vec![
                status(
                    400,
                    vec![],
                    "{\"error\":{\"message\":\"Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.\"}}",
                ),
                stream(OPENAI_ANSWER),
            ],
            2,
            Ok(()),
        ),
        // A wait longer than Exhale waits is the person's to wait.
        (
            vec![status(429, vec![("retry-after", "120")], "{}")],
            1,
            Err(LlmError::RateLimited { retry_after_secs: Some(120) }),
        ),
    ];
    for (answers, asked, expected) in cases {
        let server = fake(answers).await;
        let result =
            complete(&client(Protocol::OpenAiCompatible, &server.url, None, Timeouts::default()))
                .await
                .1;
        assert_eq!(result.map(|_| ()), expected);
        let received = server.received.lock().await;
        assert_eq!(received.len(), asked, "{expected:?}");
        // Asked again with the same body, or with the token limit under its other name.
        if let [first, second] = &received[..] {
            let renamed = first.body.get("max_tokens").is_some()
                && second.body.get("max_tokens").is_none()
                && second.body["max_completion_tokens"] == 8192;
            assert!(second.body == first.body || renamed, "{second:?}");
        }
    }
}

#[tokio::test]
async fn a_stream_cut_off_or_stalled_is_an_error_never_a_short_answer() {
    let cut = OPENAI_ANSWER.replace("data: [DONE]\n\n", "");
    let server = fake(vec![stream(&cut)]).await;
    let result =
        complete(&client(Protocol::OpenAiCompatible, &server.url, None, Timeouts::default())).await;
    assert_eq!(result.0, vec![Event::Text("€25.98 a month.".into())], "what came was shown");
    assert_eq!(result.1, Err(LlmError::Truncated));

    let stalled = Answer {
        stall: true,
        ..stream("data: {\"choices\":[{\"delta\":{\"content\":\"€\"}}]}\n\n")
    };
    let server = fake(vec![stalled]).await;
    let quick = Timeouts { call: Duration::from_secs(30), idle: Duration::from_millis(300) };
    let result = complete(&client(Protocol::OpenAiCompatible, &server.url, None, quick)).await.1;
    assert_eq!(result, Err(LlmError::Timeout(Duration::from_millis(300))));

    // A server reading a long prompt sends nothing for longer than the idle timeout before its
    // first piece: only the call's deadline bounds that wait.
    let thinking = Answer { thinking: Duration::from_millis(900), ..stream(OPENAI_ANSWER) };
    let server = fake(vec![thinking.clone()]).await;
    let result = complete(&client(Protocol::OpenAiCompatible, &server.url, None, quick)).await;
    assert_eq!(result.0, vec![Event::Text("€25.98 a month.".into())]);
    assert!(result.1.is_ok(), "{:?}", result.1);
    let server = fake(vec![thinking]).await;
    let short = Timeouts { call: Duration::from_millis(400), idle: Duration::from_millis(300) };
    let result = complete(&client(Protocol::OpenAiCompatible, &server.url, None, short)).await.1;
    assert_eq!(result, Err(LlmError::Timeout(Duration::from_millis(400))));

    let nobody = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let result =
        complete(&client(Protocol::OpenAiCompatible, &nobody, None, Timeouts::default())).await.1;
    assert_eq!(result, Err(LlmError::Unreachable(format!("nothing answered at {nobody}"))));
}

#[test]
fn a_key_is_never_printed() {
    let endpoint = Endpoint {
        protocol: Protocol::Anthropic,
        base_url: "https://api.anthropic.com".into(),
        api_key: Some(ApiKey::new("sk-ant-secret")),
        timeouts: Timeouts::default(),
    };
    assert!(!format!("{endpoint:?}").contains("sk-ant-secret"));
}

#[tokio::test]
async fn a_cloud_provider_is_reached_over_tls_and_an_untrusted_one_refused() {
    let authority = test_support::TestAuthority::for_localhost();
    let reply =
        test_support::http_reply(200, &[("content-type", "text/event-stream")], OPENAI_ANSWER);
    let (port, _server) = authority.serve(move |_| std::future::ready(Some(reply.clone()))).await;
    let endpoint = Endpoint {
        protocol: Protocol::OpenAiCompatible,
        base_url: format!("https://localhost:{port}/v1"),
        api_key: Some(ApiKey::new("sk-secret")),
        timeouts: Timeouts::default(),
    };
    let trusted = Client::trusting(endpoint.clone(), std::slice::from_ref(&authority.der)).unwrap();
    assert_eq!(complete(&trusted).await.1.unwrap().message.text(), "€25.98 a month.");
    let result = complete(&Client::new(endpoint).unwrap()).await.1;
    assert!(
        matches!(&result, Err(LlmError::Unreachable(why)) if why.contains("TLS certificate cannot be trusted")),
        "{result:?}"
    );
}
