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

/// The monthly cost by category of a spending summary (Overview, the assistant's total screen).
pub(crate) fn by_category(summary: &ops::reports::SpendingSummary, title: &str) -> String {
    let rows: Vec<Bar> = summary
        .groups
        .iter()
        .map(|group| Bar {
            label: group.label.clone(),
            value: group.monthly.amount.parse().unwrap_or(0.0),
            shown: group.monthly.display.clone(),
        })
        .collect();
    bars(title, &rows)
}

/// One bar per charge, newest first (the assistant's charges screen).
pub(crate) fn charges(items: &[ops::charges::Charge], title: &str) -> String {
    let rows: Vec<Bar> = items
        .iter()
        .map(|charge| Bar {
            label: format!("{} {}", charge.charged_on, charge.subscription.name),
            value: charge.amount.amount.parse().unwrap_or(0.0),
            shown: charge.amount.display.clone(),
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
