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

/// Horizontal bars, largest first as given, scaled to the largest.
pub(crate) fn bars(title: &str, bars: &[Bar]) -> String {
    const ROW: usize = 28;
    const LABEL_WIDTH: f64 = 190.0;
    const BAR_WIDTH: f64 = 300.0;
    let largest = bars.iter().map(|bar| bar.value).fold(0.0_f64, f64::max);
    let height = ROW * bars.len().max(1);
    let mut svg = format!(
        r#"<svg class="chart" role="img" viewBox="0 0 600 {height}" aria-labelledby="chart-title"><title id="chart-title">{}</title>"#,
        escape(title)
    );
    for (index, bar) in bars.iter().enumerate() {
        let y = index * ROW;
        let width = if largest > 0.0 { (bar.value / largest * BAR_WIDTH).max(2.0) } else { 2.0 };
        svg.push_str(&format!(
            r#"<g><text class="chart-label" x="0" y="{}">{}</text><rect class="chart-bar chart-bar-{}" x="{LABEL_WIDTH}" y="{}" width="{width:.1}" height="18" rx="3"/><text class="chart-value" x="{:.1}" y="{}">{}</text></g>"#,
            y + 18,
            escape(&bar.label),
            index % 8,
            y + 4,
            LABEL_WIDTH + width + 8.0,
            y + 18,
            escape(&bar.shown),
        ));
    }
    svg.push_str("</svg>");
    svg
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
        assert!(svg.contains(r#"width="300.0""#), "{svg}");
        assert!(svg.contains(r#"width="75.0""#), "{svg}");
        assert!(svg.contains("Streaming &lt;&amp;&gt;"), "{svg}");
        assert!(!svg.contains("<&>"));
    }
}
