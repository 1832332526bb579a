//! Server-sent events as the providers stream them: bytes in, whole events out, whatever the
//! chunk boundaries (a line, a UTF-8 character or a CRLF may be split between two reads).
//!
//! Only what the providers use is kept: `event:` and `data:` (several `data:` lines join with a
//! newline). Comments (`: keep-alive`, `: OPENROUTER PROCESSING`), `id:` and `retry:` are
//! dropped, and so is an event whose data is empty. What an event means is the protocol's
//! business (`openai.rs`, `anthropic.rs`).

/// One event: its `event:` name (empty when none was sent) and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) name: String,
    pub(crate) data: String,
}

/// The longest line kept: a provider's event is a few KB; a runaway stream is cut off.
const MAX_LINE_BYTES: usize = 1 << 20;

/// Reads events from a byte stream fed in pieces.
#[derive(Default)]
pub(crate) struct SseReader {
    /// Bytes of the line not yet ended.
    line: Vec<u8>,
    name: String,
    data: Vec<String>,
    /// The previous byte was a CR, so an LF right after it ends nothing more.
    after_cr: bool,
}

/// A line longer than [`MAX_LINE_BYTES`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LineTooLong;

impl SseReader {
    /// Takes the next bytes; the events they complete, in order.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut events = Vec::new();
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_ended(&String::from_utf8_lossy(&line)) {
                        events.push(event);
                    }
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() >= MAX_LINE_BYTES {
                        return Err(LineTooLong);
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(events)
    }

    /// One whole line: a field, a comment, or the blank line that ends an event.
    fn line_ended(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let name = std::mem::take(&mut self.name);
            let data = std::mem::take(&mut self.data).join("\n");
            return (!data.is_empty()).then_some(SseEvent { name, data });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = value.to_owned(),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = ": OPENROUTER PROCESSING\r\n\r\nevent: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\ndata: one\ndata: two\n\ndata:\n\nid: 7\nretry: 10\ndata: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            SseEvent { name: "message_start".into(), data: "{\"a\":\"é\"}".into() },
            SseEvent { name: String::new(), data: "one\ntwo".into() },
            SseEvent { name: String::new(), data: "[DONE]".into() },
        ]
    }

    #[test]
    fn events_are_read_whole_and_comments_dropped() {
        assert_eq!(SseReader::default().feed(STREAM.as_bytes()).unwrap(), expected());
    }

    #[test]
    fn any_split_of_the_stream_reads_the_same_events() {
        let bytes = STREAM.as_bytes();
        for first in 0..bytes.len() {
            for second in first..bytes.len() {
                let mut reader = SseReader::default();
                let mut events = reader.feed(&bytes[..first]).unwrap();
                events.extend(reader.feed(&bytes[first..second]).unwrap());
                events.extend(reader.feed(&bytes[second..]).unwrap());
                assert_eq!(events, expected(), "split at {first} and {second}");
            }
        }
    }

    #[test]
    fn a_runaway_line_is_refused() {
        let mut reader = SseReader::default();
        assert_eq!(reader.feed(&vec![b'a'; MAX_LINE_BYTES + 1]), Err(LineTooLong));
    }
}
