//! The calendar feed as iCalendar (RFC 5545), written by hand: one all-day event per expected
//! charge, with a stable UID per subscription and date so a calendar app updates an event
//! instead of adding another. Text is escaped (`\`, `;`, `,`, newlines) and lines are folded at
//! 75 octets on character boundaries, with CRLF line ends.

use std::fmt::Write as _;

/// One expected charge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Unique and stable: the subscription and the date.
    pub uid: String,
    /// The charge's date, `YYYY-MM-DD`.
    pub date: String,
    pub summary: String,
    pub description: String,
}

/// TEXT as RFC 5545 section 3.3.11 escapes it.
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// A content line folded to at most 75 octets per line (the leading space of a continuation
/// counts), never inside a character, each line ended by CRLF.
pub fn fold_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + line.len() / 70 * 3 + 2);
    let mut width = 0;
    for c in line.chars() {
        let size = c.len_utf8();
        if width + size > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += size;
    }
    out.push_str("\r\n");
    out
}

/// `2026-12-15` as `20261215`.
fn compact(date: &str) -> String {
    date.chars().filter(char::is_ascii_digit).collect()
}

/// The day after `date` (`YYYY-MM-DD`), for an all-day event's exclusive end.
fn next_day(date: &str) -> Option<String> {
    let date: jiff::civil::Date = date.parse().ok()?;
    Some(compact(&date.tomorrow().ok()?.to_string()))
}

/// A whole calendar; `stamp` (`YYYYMMDDTHHMMSSZ`) is when it was computed.
pub fn calendar(name: &str, stamp: &str, events: &[Event]) -> String {
    let mut lines = vec![
        "BEGIN:VCALENDAR".to_owned(),
        "VERSION:2.0".to_owned(),
        "PRODID:-//Exhale//Charges feed//EN".to_owned(),
        "CALSCALE:GREGORIAN".to_owned(),
        "METHOD:PUBLISH".to_owned(),
        format!("X-WR-CALNAME:{}", escape_text(name)),
        "REFRESH-INTERVAL;VALUE=DURATION:PT12H".to_owned(),
        "X-PUBLISHED-TTL:PT12H".to_owned(),
    ];
    for event in events {
        let Some(end) = next_day(&event.date) else { continue };
        lines.extend([
            "BEGIN:VEVENT".to_owned(),
            format!("UID:{}", escape_text(&event.uid)),
            format!("DTSTAMP:{stamp}"),
            format!("DTSTART;VALUE=DATE:{}", compact(&event.date)),
            format!("DTEND;VALUE=DATE:{end}"),
            format!("SUMMARY:{}", escape_text(&event.summary)),
            format!("DESCRIPTION:{}", escape_text(&event.description)),
            "TRANSP:TRANSPARENT".to_owned(),
            "END:VEVENT".to_owned(),
        ]);
    }
    lines.push("END:VCALENDAR".to_owned());
    let mut out = String::new();
    for line in lines {
        let _ = write!(out, "{}", fold_line(&line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape_text("Netflix, Premium; a\\b\nnext"),
            "Netflix\\, Premium\\; a\\\\b\\nnext"
        );
    }

    #[test]
    fn long_lines_fold_at_75_octets_without_splitting_a_character() {
        let line = format!("DESCRIPTION:{}", "€".repeat(40));
        let folded = fold_line(&line);
        for physical in folded.split("\r\n").filter(|l| !l.is_empty()) {
            assert!(physical.len() <= 75, "{} octets: {physical}", physical.len());
        }
        let unfolded = folded.replace("\r\n ", "");
        assert_eq!(unfolded, format!("{line}\r\n"));
    }

    #[test]
    fn an_all_day_event_ends_the_next_day() {
        let events = [Event {
            uid: "charge-42-2026-12-31@exhale".into(),
            date: "2026-12-31".into(),
            summary: "Netflix €17.99".into(),
            description: "Charged to Visa".into(),
        }];
        let ics = calendar("Exhale – Ana", "20261201T000000Z", &events);
        assert!(
            ics.contains("DTSTART;VALUE=DATE:20261231\r\nDTEND;VALUE=DATE:20270101\r\n"),
            "{ics}"
        );
        assert!(ics.starts_with("BEGIN:VCALENDAR\r\n") && ics.ends_with("END:VCALENDAR\r\n"));
    }
}
