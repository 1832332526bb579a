// The subscriptions list: a status filter and the household's monthly and yearly totals
// (get_spending_summary, in the main currency), both read through the host.
let status = "";
let totalsShown;
async function totals(into) {
  try {
    const summary = dataOf(await request("tools/call", { name: "get_spending_summary", arguments: { group_by: "none" } }));
    if (!summary || !summary.monthly) {
      into.remove();
      return;
    }
    totalsShown = figures([[said("A month"), money(summary.monthly)], [said("A year"), money(summary.yearly)]]);
    into.replaceWith(totalsShown);
    resize();
  } catch {
    into.remove();
  }
}
function render(result) {
  const page = dataOf(result);
  if (!page || !Array.isArray(page.items)) {
    view.append(element("p", textOf(result)));
    return;
  }
  view.dataset.status = "listed";
  view.append(element("h1", said("Subscriptions")));
  // The household's totals, read once: they do not depend on the filter.
  if (totalsShown) {
    view.append(totalsShown);
  } else {
    const waiting = element("p", "…", "muted");
    view.append(waiting);
    totals(waiting);
  }
  const statuses = [["", said("All")], ...["active", "trial", "paused", "cancelled"].map((name) => [name, said(name)])];
  const filter = choice(said("Show"), statuses, status, (value) => {
    status = value;
    const { status: _, cursor: __, ...kept } = toolArguments;
    call("list_subscriptions", value ? { ...kept, status: [value] } : kept, [filter.querySelector("select")]);
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
