// The confirmation card: a change waiting for the person (Confirm), a change made (Undo), a
// preview, or a refusal. The confirmation id comes with the result for the view; the model is
// given neither it nor confirm_change, so only the person's press applies the change.
render.takesRefusals = true;
const lines = (changes) => {
  const list = element("ul");
  for (const change of changes || []) list.append(element("li", change.summary));
  return list;
};
const button = (text, className) => {
  const node = element("button", text, className);
  node.type = "button";
  return node;
};
function render(result) {
  // Hosts hand the view the result's _meta, or only its structured content.
  const waiting = (result._meta && result._meta["exhale/confirmation"])
    || (result.structuredContent && result.structuredContent.confirmation);
  const output = dataOf(result);
  if (waiting && waiting.confirmation_id) {
    view.dataset.status = "pending";
    view.append(element("h1", said("Confirm: {title}", { title: waiting.title })), lines(waiting.changes));
    const confirm = button(said("Confirm"));
    const actions = element("div", undefined, "actions");
    actions.append(confirm, element("span", said("Nothing changes until you confirm, by {time}.", { time: time(waiting.expires_at) }), "muted"));
    view.append(actions);
    confirm.addEventListener("click", () => call("confirm_change", { confirmation_id: waiting.confirmation_id }, [confirm]));
  } else if (result.isError) {
    view.dataset.status = "refused";
    view.append(element("h1", said("Not done")), element("p", textOf(result), "error"));
  } else if (output && output.dry_run === true) {
    view.dataset.status = "preview";
    view.append(element("h1", said("A preview: nothing changed")), lines(output.changes));
  } else if (output && Array.isArray(output.changes)) {
    // Undo's own result lists what it reverted.
    const undone = Array.isArray(output.reverted);
    view.dataset.status = undone ? "undone" : "applied";
    view.append(element("h1", undone ? said("Undone") : said("Done")), lines(output.changes));
    if (output.batch_id && !undone) {
      const undo = button(said("Undo"), "secondary");
      const actions = element("div", undefined, "actions");
      actions.append(undo);
      view.append(actions);
      undo.addEventListener("click", () => call("undo", { batch_id: output.batch_id }, [undo]));
    }
  } else {
    // A read called through call_tool: the model has its data; the card has nothing to show.
    view.dataset.status = "other";
    if (!output) view.append(element("p", textOf(result)));
  }
}
