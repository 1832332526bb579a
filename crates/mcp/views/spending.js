// What the household spends a month and a year, by group, with a bar for each group's share
// of the monthly total; amounts in currencies without an exchange rate are shown apart, never
// guessed.
let groupBy = "category";
function render(result) {
  const summary = dataOf(result);
  if (!summary || !summary.monthly) {
    view.append(element("p", textOf(result)));
    return;
  }
  groupBy = summary.group_by || groupBy;
  view.dataset.status = "shown";
  view.append(element("h1", said("Spending")));
  view.append(figures([[said("A month"), money(summary.monthly)], [said("A year"), money(summary.yearly)]]));
  const groups = ["category", "member", "payment_method", "tag", "none"].map((name) => [name, said(name)]);
  const by = choice(said("By"), groups, groupBy, (value) => call("get_spending_summary", { group_by: value }, [by.querySelector("select")]));
  view.append(by);
  // Each group's share of the monthly total (a tag's shares can add up to more).
  const whole = Number(summary.monthly.amount);
  const rows = summary.groups.map((g) => {
    const share = whole > 0 ? Math.round((Number(g.monthly.amount) / whole) * 100) : 0;
    return [g.label, [money(g.monthly), "amount"], [money(g.yearly), "amount"], g.subscription_count, `${share}%`];
  });
  const headings = [said("Group"), [said("A month"), "amount"], [said("A year"), "amount"], said("Subscriptions"), said("Share")];
  const drawn = table(said("Subscriptions: {count}", { count: summary.subscription_count }), headings, rows);
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
    view.append(table(said("Without an exchange rate"), [said("Currency"), [said("A month"), "amount"], said("Subscriptions")],
      summary.unconverted.map((u) => [u.currency, [money(u.monthly), "amount"], u.subscription_count])));
  }
}
