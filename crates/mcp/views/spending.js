// What the household spends a month and a year, by group, with a bar for each group's share
// of the monthly total; amounts in currencies without an exchange rate are shown apart, never
// guessed.
let groupBy = "category";
function render(result) {
  const summary = result.structuredContent;
  if (!summary || !summary.monthly) {
    view.append(element("p", textOf(result)));
    return;
  }
  groupBy = summary.group_by || groupBy;
  view.dataset.status = "shown";
  view.append(element("h1", "Spending"));
  view.append(figures([["A month", summary.monthly.display], ["A year", summary.yearly.display]]));
  const groups = [["category", "category"], ["member", "owner"], ["payment_method", "payment method"], ["tag", "tag"]];
  const by = choice("By", groups, groupBy, (value) => call("get_spending_summary", { group_by: value }, [by.querySelector("select")]));
  view.append(by);
  // Each group's share of the monthly total (a tag's shares can add up to more).
  const whole = Number(summary.monthly.amount);
  const rows = summary.groups.map((g) => {
    const share = whole > 0 ? Math.round((Number(g.monthly.amount) / whole) * 100) : 0;
    return [g.label, [g.monthly.display, "amount"], [g.yearly.display, "amount"], g.subscription_count, `${share}%`];
  });
  const drawn = table(`${summary.subscription_count} subscriptions`, ["Group", ["A month", "amount"], ["A year", "amount"], "Subscriptions", "Share"], rows);
  // The share as a bar beside its number.
  drawn.querySelectorAll("tr").forEach((row, index) => {
    if (index === 0) return;
    const cell = row.lastElementChild;
    const bar = element("div", undefined, "bar");
    bar.style.width = `${Math.min(100, parseInt(cell.textContent, 10) || 0)}%`;
    bar.setAttribute("aria-hidden", "true");
    cell.append(bar);
  });
  view.append(drawn);
  if (summary.unconverted.length) {
    view.append(table("Without an exchange rate", ["Currency", ["A month", "amount"], "Subscriptions"],
      summary.unconverted.map((u) => [u.currency, [u.monthly.display, "amount"], u.subscription_count])));
  }
}
