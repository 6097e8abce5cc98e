// The message list: history rows as messages, compaction-event rows and live events as
// bubbles (seed §8.3), compacted rows marked in the full view, pending messages until their
// reply. Buttons inside carry data-action; app.js handles them (one listener on the list).

import { failureReason, has, SETTINGS_FIXES, t } from "./i18n.js";
import { renderMarkdown } from "./markdown.js";
import { markPins } from "./pins.js";

const EVENT_TYPE = "compaction_event";
const MAX_CALL_CHARS = 240;

export function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

function action(name, label, data = {}) {
  const button = el("button", { type: "button", class: "link", "data-action": name }, label);
  button.dataset.testid = `bubble-${name}`;
  for (const [key, value] of Object.entries(data)) button.dataset[key] = String(value);
  return button;
}

export const isEventRow = (row) => row.metadata?.systemType === EVENT_TYPE;

/** The stage a start or done names; rows from before the stages name none: the history's. */
const stageOf = (info) => info.stage || "history";

function savedPercent(before, after) {
  return before ? Math.round((1 - after / before) * 100) : 0;
}

/** The server's own words (English, one line) after the bubble's text, as its detail. */
function detail(box, text) {
  if (!text) return;
  box.append(el("span", { class: "bubble-detail", "data-testid": "bubble-detail" }, text), " ");
}

/** A done bubble's sentence; a prune-only run (no summary, no message removed) says what it
 * pruned instead of "0 messages removed". */
function doneLine(info, loop) {
  const p = savedPercent(info.tokensBefore, info.tokensAfter);
  if (!info.removedCount && !info.summaryMessageId && info.prunedCount) {
    return t("bubblePrunedOnly", { n: info.prunedCount, p });
  }
  const line = t(loop ? "bubbleDoneLoop" : "bubbleDone", { n: info.removedCount ?? 0, p });
  return info.prunedCount ? line + t("bubblePruned", { n: info.prunedCount }) : line;
}

/**
 * A compaction bubble. `info`: {state: start|done|failed|skipped|restored, requestId, stage,
 * removedCount, prunedCount, tokensBefore, tokensAfter, summaryMessageId, runId, summarizer,
 * error, code, restoredMessages}.
 */
export function eventBubble(info) {
  const box = el("div", {
    class: `bubble bubble-${info.state}`,
    "data-testid": "compaction-bubble",
    "data-state": info.state,
    "data-request-id": info.requestId || "",
    "data-stage": stageOf(info),
    role: info.state === "failed" ? "alert" : "status",
  });
  const text = el("span", { class: "bubble-text", "data-testid": "bubble-text" });
  box.append(text);
  // the loop stage compacts the current task's tool steps (docs/architecture.md, "The job")
  const loop = stageOf(info) === "loop";
  if (info.state === "start") {
    box.prepend(el("span", { class: "spinner", "aria-hidden": "true" }));
    text.textContent = t(loop ? "bubbleStartLoop" : "bubbleStart");
  } else if (info.state === "done") {
    text.textContent = doneLine(info, loop);
    // the extractive summary stood in for the model: never shown as the model's
    if (info.summarizer === "offline") {
      const tagged = { class: "tag tag-offline", "data-testid": "bubble-offline" };
      box.append(" ", el("span", tagged, t("bubbleOffline")));
    }
    // the receipt's reminder (docs/architecture.md, "Receipt"): constraints now live there
    const users = info.receipt?.userMessages;
    if (users && users.total > users.verbatim) {
      const folded = { class: "bubble-reminder", "data-testid": "bubble-folded" };
      box.append(" ", el("span", folded, t("receiptFolded", { n: users.total - users.verbatim })));
    }
    if (info.summaryMessageId) {
      const run = info.runId ? { runId: info.runId } : {};
      box.append(
        action("view-summary", t("viewSummary"), { summaryId: info.summaryMessageId, ...run }),
      );
    }
    // an undone run offers no second undo (its restored row names it: renderMessages)
    if (info.undone) {
      box.append(el("span", { class: "tag", "data-testid": "bubble-undone" }, t("bubbleUndone")));
    } else if (info.runId) box.append(action("undo", t("undo"), { runId: info.runId }));
  } else if (info.state === "failed") {
    // the code in the console's language; the server's one line only as the detail
    text.textContent = `${t("bubbleFailed", { reason: failureReason(info.code) })} `;
    detail(box, info.error);
    if (SETTINGS_FIXES.has(info.code)) box.append(action("open-settings", t("openSettings")), " ");
    box.append(el("span", {}, `${t("bubbleFailedTail")} `), action("new-chat", t("newChat")));
  } else if (info.state === "skipped") {
    const key = `skip_${info.code}`;
    text.textContent = has(key) ? t(key) : t("bubbleSkipped", { code: info.code });
    detail(box, info.detail);
  } else if (info.state === "restored") {
    text.textContent = t("bubbleRestored", { n: info.restoredMessages ?? 0 });
  }
  return box;
}

/** A live wire event as bubble info (null: not a compaction bubble). */
export function infoFromEvent(event) {
  const states = {
    compaction_start: "start",
    compaction_done: "done",
    compaction_failed: "failed",
    compaction_skipped: "skipped",
  };
  const state = states[event.type];
  return state ? { ...event, state } : null;
}

function infoFromRow(row, runs, undone = new Set()) {
  const meta = row.metadata || {};
  const run = runs.get(meta.runId);
  const info = { ...meta, state: meta.event, undone: undone.has(meta.runId) };
  if (run?.status === "restored") info.undone = true;
  // rendered from the row's codes and figures; its content is the fallback for exports
  if (meta.event === "failed") info.error = run?.error;
  // a done row names no pruned count: its run does (a prune-only run says what it pruned)
  if (meta.event === "done" && meta.prunedCount == null) info.prunedCount = run?.prunedCount;
  return info;
}

function toolCalls(row) {
  const box = el("div", { class: "tool-calls" });
  for (const call of row.toolCalls || []) {
    const args =
      typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const line = el("div", { class: "tool-call", "data-testid": "tool-call" });
    const text = `${call.name}(${args})`;
    // long arguments (a whole file written) are cut; the full call is the hover text
    const shown = text.length > MAX_CALL_CHARS ? `${text.slice(0, MAX_CALL_CHARS)}…` : text;
    const code = el("code", { title: text.length > MAX_CALL_CHARS ? text : undefined }, shown);
    line.append(el("span", { class: "tag" }, t("toolCall")), code);
    box.append(line);
  }
  return box;
}

function tag(key, testid) {
  return el("span", { class: `tag tag-${key}`, "data-testid": testid }, t(key));
}

const FIRST_LINE_CHARS = 160;

/** A collapsed tool result: its label, then its first non-blank line (cut), so that a reader
 * sees what it says without opening it. */
function toolSummary(row) {
  const summary = el("summary", { title: row.toolCallId || undefined });
  const first = (row.content || "").split("\n").find((line) => line.trim()) || "";
  const shown = first.length > FIRST_LINE_CHARS ? `${first.slice(0, FIRST_LINE_CHARS)}…` : first;
  summary.append(
    el("span", { class: "tag tool-result-tag" }, t("toolResult")),
    el("span", { class: "tool-first-line", "data-testid": "tool-first-line" }, shown.trim()),
  );
  return summary;
}

/** A history row (not an event row) as a message element. */
export function messageElement(row) {
  const node = el("article", {
    class: `msg msg-${row.role}`,
    "data-testid": row.isCompactionSummary ? "summary-message" : "message",
    "data-role": row.role,
    "data-id": row.id ?? "",
  });
  const head = el("header", { class: "msg-head" });
  // a summary is the service's, not the user's words: a card of its own (issue 23)
  const who = row.isCompactionSummary ? "summaryLabel" : row.role === "user" ? "you" : row.role;
  if (row.isCompactionSummary) node.className = "msg msg-summary";
  head.append(el("span", { class: "role" }, t(who)));
  if (row.compactedAt) {
    node.classList.add("compacted");
    node.dataset.compacted = "true";
    const restored = row.isCompactionSummary && row.metadata?.restoredByRunId;
    head.append(tag(restored ? "restoredTag" : "compactedTag", "compacted-tag"));
  }
  if (row.prunedAt) head.append(tag("prunedTag", "pruned-tag"));
  markPins(node, head, row); // pinned: marked, and a toggle (pins.js)
  node.append(head);
  const body = el("div", { class: "msg-body" });
  if (row.isCompactionSummary) {
    head.append(tag("summaryTag", "summary-tag"));
    const details = el("details", { class: "summary-card" });
    const label = row.summaryOf ? t("summaryOf", { n: row.summaryOf }) : t("summaryCard");
    details.append(el("summary", { "data-testid": "summary-card-label" }, label));
    const content = el("div", { class: "markdown" });
    content.innerHTML = renderMarkdown(row.content);
    details.append(content);
    body.append(details);
  } else if (row.role === "tool") {
    const details = el("details", { class: "tool-result" });
    details.append(toolSummary(row));
    details.append(el("pre", { class: "tool-output" }, row.content));
    body.append(details);
  } else if (row.role === "assistant") {
    const content = el("div", { class: "markdown" });
    content.innerHTML = renderMarkdown(row.content);
    body.append(content);
  } else {
    body.append(el("div", { class: "plain" }, row.content));
  }
  if (row.toolCalls?.length) body.append(toolCalls(row));
  node.append(body);
  return node;
}

/** A stage of a request: each stage of a two-stage request has its own bubbles. */
const stageKey = (info) => `${info.requestId}/${stageOf(info)}`;

/**
 * The whole list from history rows; a start row is hidden once its stage is done or its request
 * failed (a failed row names no stage: it ends whichever stage was running).
 */
export function renderMessages(container, rows, runs = new Map()) {
  const events = rows.filter(isEventRow).map((r) => r.metadata);
  const done = new Set(events.filter((m) => m.event === "done").map(stageKey));
  // a skipped row (a stage's result not applied) ends its request like a failed one
  const endsRequest = (m) => m.event === "failed" || m.event === "skipped";
  const failed = new Set(events.filter(endsRequest).map((m) => m.requestId));
  const undone = new Set(events.filter((m) => m.event === "restored").map((m) => m.runId));
  // a summary card says how many messages it stands for (its done row's count)
  const counts = new Map(
    events.filter((m) => m.event === "done").map((m) => [m.summaryMessageId, m.removedCount]),
  );
  const nodes = [];
  for (const row of rows) {
    if (!isEventRow(row)) {
      const summaryOf = row.isCompactionSummary ? counts.get(row.id) : undefined;
      nodes.push(messageElement(summaryOf ? { ...row, summaryOf } : row));
      continue;
    }
    const meta = row.metadata;
    const ended = done.has(stageKey(meta)) || failed.has(meta.requestId);
    if (meta.event === "start" && meta.requestId && ended) continue;
    const bubble = eventBubble(infoFromRow(row, runs, undone));
    bubble.dataset.id = row.id;
    nodes.push(bubble);
  }
  const focused = focusedAction(container);
  container.replaceChildren(...nodes);
  refocus(container, focused);
}

/** The list's focused control, by what it does and names: a redraw keeps the keyboard's place. */
function focusedAction(container) {
  const active = document.activeElement;
  if (!active || !container.contains(active) || !active.dataset.action) return null;
  const { action, summaryId, runId } = active.dataset;
  return { action, summaryId, runId };
}

function refocus(container, key) {
  if (!key) return;
  const same = [...container.querySelectorAll(`[data-action="${CSS.escape(key.action)}"]`)].find(
    (n) => n.dataset.summaryId === key.summaryId && n.dataset.runId === key.runId,
  );
  same?.focus();
}

/** The start rows still open after a load (their compaction is running now): [request id, stage]. */
export function openStarts(container) {
  return [...container.querySelectorAll('[data-testid="compaction-bubble"][data-state="start"]')]
    .filter((b) => b.dataset.requestId)
    .map((b) => [b.dataset.requestId, b.dataset.stage || "history"]);
}

/**
 * A live event: replaces the bubble of its request's stage (a failure: its open start), else
 * goes at the end, so the history's done stays when the loop's start follows.
 */
export function placeEvent(container, info) {
  const bubble = eventBubble(info);
  const bubbles = '[data-testid="compaction-bubble"]';
  const stage = `[data-stage="${CSS.escape(stageOf(info))}"]`;
  const own = info.state === "failed" ? '[data-state="start"]' : stage;
  const sameRequest = info.requestId
    ? container.querySelector(`${bubbles}[data-request-id="${CSS.escape(info.requestId)}"]${own}`)
    : null;
  // an end whose start this page never saw (it came before the socket) replaces any start
  const ends = info.state === "done" || info.state === "failed";
  const anyStart = ends ? container.querySelector(`${bubbles}[data-state="start"]`) : null;
  const target = sameRequest || anyStart;
  if (target) target.replaceWith(bubble);
  else container.append(bubble);
  return bubble;
}

// Pending messages: shown at once, bound to their stored row when it comes back, resolved by
// the reply (a message sent during a compaction waits on the server until it ends).

export function appendPending(container, content) {
  const node = messageElement({ role: "user", content });
  node.dataset.pending = "true";
  const note = el("span", { class: "pending-note", "data-testid": "pending-note" }, t("pending"));
  node.querySelector(".msg-head").append(note);
  container.append(node);
  return node;
}

/** A stored user row: binds the first unbound pending message with that content. */
export function bindPending(container, row) {
  for (const node of container.querySelectorAll('[data-pending="true"]')) {
    if (!node.dataset.id && node.querySelector(".plain")?.textContent === row.content) {
      node.dataset.id = row.id;
      return true;
    }
  }
  return false;
}

function oldestPending(container) {
  return container.querySelector('[data-pending="true"]');
}

export function resolvePending(container) {
  const node = oldestPending(container);
  if (!node) return;
  delete node.dataset.pending;
  node.querySelector(".pending-note")?.remove();
}

/** The pending message a failure answers: the oldest, or with `newest` the one sent last (a
 * `busy` refusal answers the message sent while another turn runs). */
export function failPending(container, message, newest = false) {
  const pending = container.querySelectorAll('[data-pending="true"]');
  const node = newest ? pending[pending.length - 1] : oldestPending(container);
  if (!node) return;
  node.dataset.pending = "failed";
  const note = node.querySelector(".pending-note");
  note.textContent = t("sendFailed", { error: message });
  note.classList.add("error");
}

/** After the list was redrawn: pending messages stay pending (on their stored row once it
 * is in the history, else at the end). */
export function keepPending(container, nodes) {
  for (const node of nodes) {
    const id = node.dataset.id;
    const stored = id ? container.querySelector(`[data-id="${CSS.escape(id)}"]`) : null;
    if (stored) {
      stored.dataset.pending = node.dataset.pending;
      stored.querySelector(".msg-head").append(node.querySelector(".pending-note"));
    } else {
      container.append(node);
    }
  }
}
