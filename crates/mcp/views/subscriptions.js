// The subscriptions list: a status filter and the household's monthly and yearly totals
// (get_spending_summary, in the main currency), both read through the host.
let status = "";
async function totals(into) {
  try {
    const summary = (await request("tools/call", { name: "get_spending_summary", arguments: { group_by: "none" } })).structuredContent;
    if (!summary) return;
    into.replaceWith(figures([["A month", summary.monthly.display], ["A year", summary.yearly.display]]));
    resize();
  } catch {
    into.remove();
  }
}
function render(result) {
  const page = result.structuredContent || { items: [], total: 0 };
  view.dataset.status = "listed";
  view.append(element("h1", "Subscriptions"));
  const waiting = element("p", "…", "muted");
  view.append(waiting);
  totals(waiting);
  const statuses = [["", "All"], ["active", "Active"], ["trial", "In a trial"], ["paused", "Paused"], ["cancelled", "Cancelled"]];
  const filter = choice("Show", statuses, status, (value) => {
    status = value;
    call("list_subscriptions", value ? { status: [value] } : {}, [filter.querySelector("select")]);
  });
  view.append(filter);
  const rows = page.items.map((item) => [
    item.name,
    [item.price.display, "amount"],
    item.cycle,
    item.status,
    item.next_charge_on || "",
    item.category || "",
    item.owner,
  ]);
  view.append(table(`${page.total} subscriptions`, ["Name", ["Price", "amount"], "Every", "Status", "Next charge", "Category", "Owner"], rows));
  if (page.truncated || page.next_cursor) view.append(element("p", "More are left out; ask for them by name or filter.", "muted"));
}
