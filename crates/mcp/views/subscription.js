// One subscription: what it costs and when, its next charges, its price history and its
// recent charges.
function render(result) {
  // The subscription's own fields, with its history and charges beside them.
  const detail = dataOf(result);
  if (!detail || !detail.name) {
    view.append(element("p", textOf(result)));
    return;
  }
  const subscription = detail;
  view.dataset.status = "shown";
  view.append(element("h1", subscription.name));
  view.append(figures([
    [said("Price"), `${money(subscription.price)} ${said(subscription.cycle.description)}`],
    [said("Status"), said(subscription.status)],
    [said("Next charge"), subscription.next_charge_on ? day(subscription.next_charge_on) : said("none")],
    [said("Category"), subscription.category ? subscription.category.name : said("none")],
  ]));
  view.append(table(said("Next charges"), [said("Date"), [said("Amount"), "amount"], said("Paid with")],
    detail.next_charges.map((c) => [day(c.charge_on), [money(c.amount), "amount"], c.payment_method ? c.payment_method.name : ""])));
  view.append(table(said("Price history"), [said("From"), [said("Price"), "amount"]],
    detail.price_history.map((p) => [day(p.effective_on), [money(p.price), "amount"]])));
  view.append(table(said("Recent charges"), [said("Date"), [said("Amount"), "amount"], said("Status")],
    detail.recent_charges.map((c) => [day(c.charged_on), [money(c.amount), "amount"], said(c.status)])));
}
