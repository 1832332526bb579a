// One subscription: what it costs and when, its next charges, its price history and its
// recent charges.
function render(result) {
  // The subscription's own fields, with its history and charges beside them.
  const detail = result.structuredContent;
  if (!detail || !detail.name) {
    view.append(element("p", textOf(result)));
    return;
  }
  const subscription = detail;
  view.dataset.status = "shown";
  view.append(element("h1", subscription.name));
  view.append(figures([
    ["Price", `${subscription.price.display} ${subscription.cycle.description}`],
    ["Status", subscription.status],
    ["Next charge", subscription.next_charge_on || "none"],
    ["Category", subscription.category ? subscription.category.name : "none"],
  ]));
  view.append(table("Next charges", ["Date", ["Amount", "amount"], "Paid with"],
    detail.next_charges.map((c) => [c.charge_on, [c.amount.display, "amount"], c.payment_method ? c.payment_method.name : ""])));
  view.append(table("Price history", ["From", ["Price", "amount"]],
    detail.price_history.map((p) => [p.effective_on, [p.price.display, "amount"]])));
  view.append(table("Recent charges", ["Date", ["Amount", "amount"], "Status"],
    detail.recent_charges.map((c) => [c.charged_on, [c.amount.display, "amount"], c.status])));
}
