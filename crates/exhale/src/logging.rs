//! Logs on standard error, one line an event, each cut to [`MAX_LINE_CHARS`] and with control
//! characters escaped. Requests put their own text into logs, ours and our libraries' (rmcp
//! logs a client's name and an unknown tool's name whole): a 100 KB name must not make a
//! 100 KB line, and a newline or a terminal escape in it must not forge a line or recolour a
//! terminal. Hence no ANSI colours: an escaped escape code would only be noise.

use std::io::Write as _;

use tracing_subscriber::fmt::MakeWriter;

/// Long enough for any event of ours with its spans; far shorter than an attacker's text.
pub(crate) const MAX_LINE_CHARS: usize = 2_000;

/// Sends events, filtered by `filter` (as `RUST_LOG`), to standard error; and, when a collector
/// is configured, the assistant's GenAI spans to it, whatever the log filter says.
pub(crate) fn init(filter: &str, collector: Option<crate::telemetry::Collector>) {
    use tracing_subscriber::{Layer as _, layer::SubscriberExt as _, util::SubscriberInitExt as _};
    let env_filter =
        tracing_subscriber::EnvFilter::try_new(filter).unwrap_or_else(|_| "info".into());
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(SafeStderr)
        .with_filter(env_filter);
    let spans = collector.map(|collector| {
        crate::telemetry::OtlpLayer::start(collector)
            .with_filter(tracing_subscriber::filter::filter_fn(crate::telemetry::is_exported))
    });
    tracing_subscriber::registry().with(lines).with(spans).init();
}

struct SafeStderr;

impl<'a> MakeWriter<'a> for SafeStderr {
    type Writer = EventLine;

    fn make_writer(&'a self) -> Self::Writer {
        EventLine(Vec::new())
    }
}

/// One event, gathered as it is formatted and written out, made safe, when dropped.
struct EventLine(Vec<u8>);

impl std::io::Write for EventLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // Past twice the limit nothing more can be shown; keep memory bounded too.
        let room = (MAX_LINE_CHARS * 8).saturating_sub(self.0.len());
        self.0.extend_from_slice(&bytes[..bytes.len().min(room)]);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventLine {
    fn drop(&mut self) {
        let line = safe_line(&String::from_utf8_lossy(&self.0));
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `event` on one line: control characters escaped, cut to [`MAX_LINE_CHARS`], ending in a
/// newline.
fn safe_line(event: &str) -> String {
    let mut line = String::with_capacity(event.len().min(MAX_LINE_CHARS) + 40);
    let mut chars = event.trim_end_matches('\n').chars();
    for c in chars.by_ref().take(MAX_LINE_CHARS) {
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    let cut = chars.count();
    if cut > 0 {
        line.push_str(&format!(" … [{cut} more characters not logged]"));
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_cut_and_cannot_forge_another() {
        let hostile = format!("unknown tool {}\nINFO forged\x1b[31m", "A".repeat(100_000));
        let line = safe_line(&hostile);
        assert_eq!(line.matches('\n').count(), 1);
        assert!(line.ends_with("not logged]\n"), "{}", &line[line.len() - 80..]);
        assert!(line.chars().count() < MAX_LINE_CHARS + 60);
        let short = safe_line("INFO ok\nforged\x1b[31m\n");
        assert_eq!(short, "INFO ok\\nforged\\u{1b}[31m\n");
    }
}
