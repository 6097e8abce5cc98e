// A compaction's receipt in the summary drawer (docs/architecture.md, "Receipt"): how many exact
// identifiers of the compacted span the result kept and which it did not, how many of the
// user's instructions were folded into the summary (the reminder: constraints now live there),
// the auxiliary model's tokens, and the cost of the run and of the session.
//
// data-testid hooks: summary-receipt (the section), receipt-identifiers, receipt-missing (one
// list per kind, data-kind), receipt-folded (the reminder), receipt-folded-list, receipt-aux,
// receipt-cost.

import { el } from "./bubbles.js";
import { num, t } from "./i18n.js";

const KINDS = ["errors", "commands", "paths", "urls", "ids", "values"];

/** USD as a person reads it: small amounts keep their significant digits. */
export function usd(value) {
  if (value === null || value === undefined) return "—";
  const digits = value > 0 && value < 0.01 ? 4 : 2;
  return `$${Number(value).toFixed(digits)}`;
}

/** The run `runs` holds for the drawer: by its id, else by the summary it wrote. */
export function runFor(runs, runId, summaryId) {
  return (
    runs.find((r) => runId && String(r.id) === String(runId)) ||
    runs.find((r) => summaryId && String(r.summaryMessageId) === String(summaryId)) ||
    null
  );
}

function identifiers(box, ids) {
  const missing = Object.values(ids.missingCounts || {}).reduce((a, b) => a + b, 0);
  const line = el("p", { "data-testid": "receipt-identifiers" });
  line.textContent =
    t("receiptKept", { kept: num(ids.kept), total: num(ids.total) }) +
    (missing ? t("receiptNotKept", { n: num(missing) }) : "");
  box.append(line);
  for (const kind of KINDS) {
    const items = (ids.missing || {})[kind] || [];
    if (!items.length) continue;
    const more = (ids.missingCounts?.[kind] || items.length) - items.length;
    const list = el("ul", { "data-testid": "receipt-missing", "data-kind": kind });
    for (const item of items) {
      const entry = el("li");
      entry.append(el("code", {}, item));
      list.append(entry);
    }
    if (more > 0) list.append(el("li", {}, `… +${num(more)}`));
    box.append(el("p", {}, `${t(`kind_${kind}`)}:`), list);
  }
}

function instructions(box, users) {
  const folded = users.total - users.verbatim;
  if (folded > 0) {
    const reminder = { class: "reminder", "data-testid": "receipt-folded", role: "note" };
    box.append(el("p", reminder, t("receiptFolded", { n: num(folded) })));
    const list = el("ul", { "data-testid": "receipt-folded-list" });
    for (const line of users.folded || []) list.append(el("li", {}, line));
    box.append(list);
  }
  if (users.total) {
    box.append(el("p", {}, t("receiptVerbatim", { v: num(users.verbatim), total: num(users.total) })));
  }
}

/** Fill `box` with the receipt of `run` (a run of the runs API); `runs`: the session's runs
 * (the session's cost is their sum). Hidden when the run recorded none. */
export function renderReceipt(box, run, runs) {
  box.replaceChildren();
  box.hidden = false;
  box.append(el("h3", { id: "receipt-title" }, t("receiptTitle")));
  if (!run || !run.receipt) {
    box.append(el("p", { class: "muted" }, t("receiptMissing")));
    return;
  }
  identifiers(box, run.receipt.identifiers);
  instructions(box, run.receipt.userMessages);
  const aux = run.inputTokens || run.outputTokens;
  const tokens = { input: num(run.inputTokens), output: num(run.outputTokens) };
  box.append(el("p", { "data-testid": "receipt-aux" }, aux ? t("receiptAux", tokens) : t("receiptNoAux")));
  const priced = runs.filter((r) => r.cost !== null && r.cost !== undefined);
  const session = priced.reduce((sum, r) => sum + r.cost, 0);
  const cost =
    run.cost === null || run.cost === undefined
      ? t("receiptNoPrice")
      : t("receiptCost", { run: usd(run.cost), session: usd(session) });
  box.append(el("p", { "data-testid": "receipt-cost" }, cost));
}
