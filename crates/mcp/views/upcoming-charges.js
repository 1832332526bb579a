// The charges expected over a period, with their totals per currency; the period is chosen
// here and read again through the host.
let days = "30";
function render(result) {
  const upcoming = result.structuredContent || { items: [], totals: [] };
  view.dataset.status = "listed";
  view.append(element("h1", `Upcoming charges, ${upcoming.from} to ${upcoming.to}`));
  const period = choice("Over", [["7", "a week"], ["30", "30 days"], ["90", "90 days"], ["365", "a year"]], days, (value) => {
    days = value;
    call("list_upcoming_charges", { days: Number(value) }, [period.querySelector("select")]);
  });
  view.append(period);
  view.append(figures(upcoming.totals.map((total) => [`In ${total.currency}`, total.display])));
  view.append(table(`${upcoming.items.length} charges`, ["Date", "Subscription", ["Amount", "amount"], "Paid with"],
    upcoming.items.map((c) => [c.charge_on, c.subscription.name, [c.amount.display, "amount"], c.payment_method ? c.payment_method.name : ""])));
}
