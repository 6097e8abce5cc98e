// What the message list keeps when it is drawn again from the history (issue 23, "The console
// shows what happened, at once"), and the keyboard's way through tool results.
//
// A compaction's done event redraws the list from the display view at once, so the messages it
// folded into the summary card leave the screen without a reload. Rows that came live while the
// history was being fetched (a reply, a new compaction's start) are newer than anything the
// answer holds: they are kept, not lost under the redraw.

const BUBBLE = '[data-testid="compaction-bubble"]';
const MESSAGE = '[data-testid="message"], [data-testid="summary-message"]';
const ENDS = new Set(["done", "failed", "skipped"]);

/** The list's live nodes before a redraw: stored messages (not pending ones: keepPending's)
 * and bubbles that no history row drew (they carry no data-id). */
export function liveNodes(container) {
  return [...container.children].filter((node) =>
    node.matches(BUBBLE) ? !node.dataset.id : node.matches(MESSAGE) && !node.dataset.pending,
  );
}

function keepBubble(container, node) {
  const request = node.dataset.requestId;
  if (!request) return;
  const same = [...container.querySelectorAll(BUBBLE)].filter(
    (b) => b.dataset.requestId === request && b.dataset.stage === node.dataset.stage,
  );
  if (!same.length) container.append(node);
  // the history caught its start only: the live end replaces it
  else if (ENDS.has(node.dataset.state) && same.every((b) => b.dataset.state === "start")) {
    same[0].replaceWith(node);
    same.slice(1).forEach((b) => b.remove());
  }
}

/** After a redraw from `rows`: the live `nodes` the history did not hold yet come back. */
export function keepLive(container, nodes, rows) {
  const newest = Math.max(0, ...rows.map((r) => Number(r.id) || 0));
  for (const node of nodes) {
    if (node.matches(BUBBLE)) keepBubble(container, node);
    else if (Number(node.dataset.id) > newest) container.append(node);
  }
}

// Tool results: one tab stop per group (the tool results between two other messages), the
// arrow keys move within it; a long agent loop no longer takes a tab stop per result.

const TOOL = "tool-result";

function toolGroups(container) {
  const groups = [];
  let current = null;
  for (const node of container.children) {
    const summary = node.querySelector?.(`details.${TOOL} > summary`);
    const other = node.matches(BUBBLE) || (node.dataset.role === "user" && !summary);
    if (summary) {
      if (!current) groups.push((current = []));
      current.push(summary);
    } else if (other) {
      current = null; // a user message or a bubble ends the group; an assistant step does not
    }
  }
  return groups;
}

function groupStops(container) {
  for (const group of toolGroups(container)) {
    const open = group.findIndex((s) => s === document.activeElement);
    group.forEach((summary, index) => {
      summary.tabIndex = index === Math.max(0, open) ? 0 : -1;
    });
  }
}

function onArrow(container, event) {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const summary = event.target.closest?.(`details.${TOOL} > summary`);
  if (!summary) return;
  const group = toolGroups(container).find((g) => g.includes(summary));
  const next = group[group.indexOf(summary) + (event.key === "ArrowDown" ? 1 : -1)];
  if (!next) return;
  event.preventDefault();
  summary.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

/** Keeps the tool results' tab stops grouped as the list changes (redraws, live rows). */
export function watchToolStops(container) {
  new MutationObserver(() => groupStops(container)).observe(container, { childList: true });
  container.addEventListener("keydown", (event) => onArrow(container, event));
  groupStops(container);
}
