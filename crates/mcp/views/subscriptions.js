// The subscriptions list: a status filter and the household's monthly and yearly totals
// (get_spending_summary, in the main currency), both read through the host.
let status = "";
async function totals(into) {
  try {
    const summary = (await request("tools/call", { name: "get_spending_summary", arguments: { group_by: "none" } })).structuredContent;
    if (!summary) return;
    into.replaceWith(figures([[said("A month"), money(summary.monthly)], [said("A year"), money(summary.yearly)]]));
    resize();
  } catch {
    into.remove();
  }
}
function render(result) {
  const page = result.structuredContent || { items: [], total: 0 };
  view.dataset.status = "listed";
  view.append(element("h1", said("Subscriptions")));
  const waiting = element("p", "…", "muted");
  view.append(waiting);
  totals(waiting);
  const statuses = [["", said("All")], ...["active", "trial", "paused", "cancelled"].map((name) => [name, said(name)])];
  const filter = choice(said("Show"), statuses, status, (value) => {
    status = value;
    call("list_subscriptions", value ? { status: [value] } : {}, [filter.querySelector("select")]);
  });
  view.append(filter);
  const rows = page.items.map((item) => [
    item.name,
    [money(item.price), "amount"],
    said(item.cycle),
    said(item.status),
    day(item.next_charge_on),
    item.category || "",
    item.owner,
  ]);
  const headings = [said("Name"), [said("Price"), "amount"], said("Every"), said("Status"), said("Next charge"), said("Category"), said("Owner")];
  view.append(table(said("Subscriptions: {count}", { count: page.total }), headings, rows));
  if (page.truncated || page.next_cursor) view.append(element("p", said("More are left out; ask for them by name or filter."), "muted"));
}
