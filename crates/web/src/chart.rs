//! Charts drawn on the server as SVG: no JavaScript, readable by screen readers (each chart
//! has a title and its numbers as text), and styled by the page's CSS (light and dark).

/// Escapes text for SVG and HTML.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// One bar: its label, its value (any unit, compared with the others) and the value as text.
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) value: f64,
    pub(crate) shown: String,
}

/// Horizontal bars, largest first as given, scaled to the largest. The SVG has no viewBox:
/// widths are percentages of the card and text keeps the page's size on any screen.
pub(crate) fn bars(title: &str, bars: &[Bar]) -> String {
    const ROW: usize = 44;
    let largest = bars.iter().map(|bar| bar.value).fold(0.0_f64, f64::max);
    let height = ROW * bars.len().max(1);
    // Each chart's title needs an id of its own on the page.
    let id: String =
        title.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
    let mut svg = format!(
        r#"<svg class="chart" role="img" width="100%" height="{height}" aria-labelledby="chart-{id}"><title id="chart-{id}">{}</title>"#,
        escape(title)
    );
    for (index, bar) in bars.iter().enumerate() {
        let y = index * ROW;
        let percent = if largest > 0.0 { (bar.value / largest * 100.0).max(1.0) } else { 1.0 };
        svg.push_str(&format!(
            r#"<g><text class="chart-label" x="0" y="{}">{}</text><text class="chart-value" x="100%" y="{}" text-anchor="end">{}</text><rect class="chart-bar chart-bar-{}" x="0" y="{}" width="{percent:.1}%" height="12" rx="3"/></g>"#,
            y + 16,
            escape(&bar.label),
            y + 16,
            escape(&bar.shown),
            index % 8,
            y + 24,
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// One point of a line: its label, its value (negative too) and the value as text.
pub(crate) struct Point {
    pub(crate) label: String,
    pub(crate) value: f64,
    pub(crate) shown: String,
}

/// A line through the points, oldest first, with a zero line when the values cross it; each
/// point's label and value are text in the SVG (a list a screen reader reads in order).
pub(crate) fn line(title: &str, points: &[Point]) -> String {
    const WIDTH: f64 = 600.0;
    const HEIGHT: f64 = 160.0;
    let id: String =
        title.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_lowercase();
    let (low, high) = points
        .iter()
        .fold((0.0_f64, 0.0_f64), |(low, high), p| (low.min(p.value), high.max(p.value)));
    let span = if high > low { high - low } else { 1.0 };
    let y = |value: f64| HEIGHT - (value - low) / span * HEIGHT;
    let step = if points.len() > 1 { WIDTH / (points.len() - 1) as f64 } else { 0.0 };
    let mut svg = format!(
        r#"<svg class="chart chart-line" role="img" viewBox="-10 -10 {} {}" width="100%" aria-labelledby="chart-{id}"><title id="chart-{id}">{}</title>"#,
        WIDTH + 20.0,
        HEIGHT + 40.0,
        escape(title)
    );
    if low < 0.0 && high > 0.0 {
        svg.push_str(&format!(
            r#"<line class="chart-zero" x1="0" x2="{WIDTH}" y1="{0:.1}" y2="{0:.1}"/>"#,
            y(0.0)
        ));
    }
    let path: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", i as f64 * step, y(p.value)))
        .collect();
    svg.push_str(&format!(
        r#"<polyline class="chart-path" fill="none" points="{}"/>"#,
        path.join(" ")
    ));
    for (i, point) in points.iter().enumerate() {
        let (x, py) = (i as f64 * step, y(point.value));
        svg.push_str(&format!(
            r#"<g><circle class="chart-dot" cx="{x:.1}" cy="{py:.1}" r="4"><title>{label}: {shown}</title></circle><text class="chart-label" x="{x:.1}" y="{}" text-anchor="middle">{label}</text></g>"#,
            HEIGHT + 24.0,
            label = escape(&point.label),
            shown = escape(&point.shown),
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// The monthly cost by category of a spending summary (Overview, the assistant's total screen).
pub(crate) fn by_category(summary: &ops::reports::SpendingSummary, title: &str) -> String {
    let rows: Vec<Bar> = summary
        .groups
        .iter()
        .map(|group| Bar {
            label: group.label.clone(),
            value: group.monthly.amount.to_f64(),
            shown: crate::reader::amount(&group.monthly),
        })
        .collect();
    bars(title, &rows)
}

/// One bar per charge, newest first (the assistant's charges screen).
pub(crate) fn charges(items: &[ops::charges::Charge], title: &str) -> String {
    let rows: Vec<Bar> = items
        .iter()
        .map(|charge| Bar {
            label: format!(
                "{} {}",
                crate::reader::day(charge.charged_on),
                charge.subscription.name
            ),
            value: charge.amount.amount.to_f64(),
            shown: crate::reader::amount(&charge.amount),
        })
        .collect();
    bars(title, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_and_escape_labels() {
        let svg = bars(
            "Monthly by category",
            &[
                Bar { label: "Streaming <&>".into(), value: 40.0, shown: "€40.00".into() },
                Bar { label: "Cloud".into(), value: 10.0, shown: "€10.00".into() },
            ],
        );
        assert!(svg.contains(r#"width="100.0%""#), "{svg}");
        assert!(svg.contains(r#"width="25.0%""#), "{svg}");
        assert!(svg.contains("Streaming &lt;&amp;&gt;"), "{svg}");
        assert!(!svg.contains("<&>"));
    }
}
