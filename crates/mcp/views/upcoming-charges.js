// The charges expected over a period, with their totals per currency; the period is chosen
// here and read again through the host.
let days = "30";
function render(result) {
  const upcoming = dataOf(result);
  if (!upcoming || !Array.isArray(upcoming.items)) {
    view.append(element("p", textOf(result)));
    return;
  }
  if (toolArguments.days) days = String(toolArguments.days);
  view.dataset.status = "listed";
  view.append(element("h1", said("Upcoming charges, {from} to {to}", { from: day(upcoming.from), to: day(upcoming.to) })));
  const periods = [["7", said("a week")], ["30", said("30 days")], ["90", said("90 days")], ["365", said("a year")]];
  const period = choice(said("Over"), periods, days, (value) => {
    days = value;
    toolArguments = { ...toolArguments, days: Number(value) };
    call("list_upcoming_charges", toolArguments, [period.querySelector("select")]);
  });
  view.append(period);
  view.append(figures(upcoming.totals.map((total) => [said("In {currency}", { currency: total.currency }), money(total)])));
  view.append(table(said("Charges: {count}", { count: upcoming.items.length }), [said("Date"), said("Subscription"), [said("Amount"), "amount"], said("Paid with")],
    upcoming.items.map((c) => [day(c.charge_on), c.subscription.name, [money(c.amount), "amount"], c.payment_method ? c.payment_method.name : ""])));
}
