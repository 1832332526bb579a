//! How many requests larger than the server's `max_request_bytes` are read at once, on every
//! adapter together: each may hold a statement of several megabytes (an op that takes a file,
//! `ops::OpInfo::takes_large_input`), and memory is the small machine's.

/// At most this many large requests at once.
pub const MAX_LARGE_REQUESTS: usize = 4;

static LARGE_REQUESTS: tokio::sync::Semaphore =
    tokio::sync::Semaphore::const_new(MAX_LARGE_REQUESTS);

/// Held while a large request is read and answered.
pub struct LargeRequest(
    #[expect(dead_code, reason = "held for its drop")] tokio::sync::SemaphorePermit<'static>,
);

/// How many large requests are being read now.
pub fn large_requests_in_use() -> usize {
    MAX_LARGE_REQUESTS - LARGE_REQUESTS.available_permits()
}

/// A place for one more large request, or `None` when `MAX_LARGE_REQUESTS` are being read:
/// the caller answers 503 with `Retry-After`.
pub fn large_request() -> Option<LargeRequest> {
    LARGE_REQUESTS.try_acquire().ok().map(LargeRequest)
}
