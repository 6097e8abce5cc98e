// The input box and the live events: `/compact [focus]` is a command (seed §8.2), anything
// else a message; events from the session's socket update the bubbles, the bar and pending
// messages. `ctx` is the page's state and the few things app.js does for it.

import { api, sessionPath } from "./api.js";
import { renderBar, mergeTokenUpdate } from "./bar.js";
import {
  appendPending,
  bindPending,
  failPending,
  infoFromEvent,
  messageElement,
  placeEvent,
  resolvePending,
} from "./bubbles.js";
import { renderGate } from "./gate.js";
import { errorText } from "./i18n.js";
import { onDraft } from "./review.js";

const $ = (id) => document.getElementById(id);

/** `{command: "compact", focus, review}` for `/compact`, `/compact <focus>` and
 * `/compact --review [focus]` (a draft to review: review.js); null for a message. */
export function parseSlashCommand(raw) {
  const match = String(raw)
    .trim()
    .match(/^\/compact(\s+--review(?=\s|$))?(?:\s+([\s\S]*))?$/);
  if (!match) return null;
  const focus = (match[2] || "").trim();
  return { command: "compact", focus: focus || null, review: Boolean(match[1]) };
}

function scrollToEnd(force = false) {
  const list = $("messages");
  const near = list.scrollHeight - list.scrollTop - list.clientHeight < 160;
  if (force || near) list.scrollTop = list.scrollHeight;
}

/** /compact over the socket, else POST .../compact; `review`: a draft to review first. */
export async function requestCompact(ctx, focus, review = false) {
  const id = ctx.state.current;
  if (!id) return;
  const body = { ...(focus ? { focus } : {}), ...(review ? { review } : {}) };
  if (ctx.state.socket?.send({ type: "compact", ...body })) return;
  try {
    await api(`${sessionPath(id)}/compact`, { method: "POST", body });
  } catch (err) {
    ctx.showError(err.message);
  }
}

async function sendMessage(ctx, content) {
  const id = ctx.state.current;
  appendPending($("messages"), content);
  scrollToEnd(true);
  if (ctx.state.socket?.send({ type: "message", content })) return;
  try {
    await api(`${sessionPath(id)}/messages`, { method: "POST", body: { content } });
    if (ctx.state.current !== id) return;
    resolvePending($("messages"));
    await ctx.reload();
  } catch (err) {
    const message = errorText(err.code, err.message);
    failPending($("messages"), message, err.code === "busy");
    ctx.showError(message);
  }
}

/** The composer's submit: a command or a message; the input is cleared either way. */
export async function submitInput(ctx) {
  const input = $("input");
  const raw = input.value;
  if (!raw.trim() || !ctx.state.current) return;
  input.value = "";
  const command = parseSlashCommand(raw);
  if (command) await requestCompact(ctx, command.focus, command.review);
  else await sendMessage(ctx, raw.trim());
}

function onMessage(ctx, row) {
  const list = $("messages");
  if (row.id != null && list.querySelector(`[data-id="${CSS.escape(String(row.id))}"]`)) return;
  if (row.role === "user" && bindPending(list, row)) return;
  if (row.role === "assistant") resolvePending(list);
  list.append(messageElement(row));
  scrollToEnd();
}

function onCompaction(ctx, event, info) {
  const { state } = ctx;
  // A skip ends a running compaction only when it names its stage (`not_smaller`: the stage
  // ran, its result was not applied); any other names a request that did not start.
  const ends = info.state !== "skipped" || Boolean(event.stage);
  if (info.state === "start") {
    state.compacting.set(event.requestId || "?", info.stage || "history");
  }
  // a done naming the next stage leaves its request running (docs/architecture.md, "Events")
  else if (ends && !event.nextStage) {
    const known = state.compacting.delete(event.requestId) || state.compacting.delete("?");
    if (!known) state.compacting.clear(); // started before this page listened
  }
  // auto skips happen on every busy turn; only a skip the user asked for, or one that ends a
  // stage, is shown
  if (info.state !== "skipped" || event.reason !== "auto" || ends) {
    placeEvent($("messages"), info);
    scrollToEnd();
  }
  renderBar(state.stats, state.compacting);
  // the compacted view at once (issue 23): the list is drawn again from the history, the
  // messages a stage folded leave it; what comes meanwhile is kept (fold.js)
  if (info.state === "done") ctx.reload();
  else if (info.state === "failed") ctx.refreshFigures();
}

/** One server frame from the session's socket. */
export function handleEvent(ctx, event) {
  const { state } = ctx;
  if (event.sessionId && event.sessionId !== state.current) return;
  if (event.type === "message" && event.message) {
    onMessage(ctx, event.message);
  } else if (event.type === "token_update") {
    state.stats = mergeTokenUpdate(state.stats, event);
    renderBar(state.stats, state.compacting);
    ctx.refreshBreakdown(); // the hover's figures follow every update (bar.js, mergeBreakdown)
    ctx.updateSessionFigures(event.context || {});
    renderGate(state.current, event.warning); // the gate's band (gate.js)
  } else if (event.type === "compaction_draft") {
    onDraft(ctx, event).finally(() => renderBar(state.stats, state.compacting));
  } else if (event.type === "error") {
    const message = errorText(event.error?.code, event.error?.message);
    failPending($("messages"), message, event.error?.code === "busy");
    ctx.showError(message);
  } else {
    const info = infoFromEvent(event);
    if (info) onCompaction(ctx, event, info);
  }
}

export function wireComposer(ctx) {
  const input = $("input");
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    submitInput(ctx);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submitInput(ctx);
    }
  });
  $("compact-button").addEventListener("click", () => requestCompact(ctx, null));
  $("preview-button").addEventListener("click", () => requestCompact(ctx, null, true));
}
