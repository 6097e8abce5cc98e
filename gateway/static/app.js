// The web console (docs/architecture.md, "The gateway"): plain ES modules, no build step.
//
// Stable data-testid hooks (for the browser tests; keep them when changing the markup):
//   header:   skip-link (first in the tab order: focuses message-input), lang-select (zh|en),
//             settings-toggle (aria-expanded), connection-status (data-state="open"|"closed")
//   sessions: session-list; session-item (data-session-id; class "current"),
//             session-open (the button that opens it), session-figures ("{used}/{max} tokens ·
//             compacted N times"), session-view-toggle (only on compacted sessions or one in
//             the full view; data-view="display"|"full", aria-pressed), new-session,
//             import-label + import-file (a file input: a JSON list of OpenAI messages, or
//             {"messages": [...]}; creates a new session with them, named after the file),
//             session-name (the title, else the id), session-rename (inline: session-rename-form,
//             session-title-input; Enter saves, "" clears, Escape cancels)
//   main:     full-view-banner (sticky, only in the full view), banner-back (back to the
//             compacted view), error-banner + error-dismiss, empty-hint, message-list
//   messages: message (data-role, data-id; data-compacted="true" when compacted, with
//             compacted-tag; pruned-tag; data-pending="true" while waiting for its reply,
//             "failed" when refused, with pending-note), summary-message (a summary row, class
//             msg-summary, summary-tag, summary-card-label), tool-call, tool-first-line (a
//             collapsed tool result's first line; one tab stop per group, arrows within: fold.js)
//   bubbles:  compaction-bubble (data-state="start"|"done"|"failed"|"skipped"|"restored",
//             data-request-id, data-stage="history"|"loop"), bubble-text,
//             bubble-view-summary (opens the drawer), bubble-undo (restores the run; an undone
//             run shows bubble-undone instead),
//             bubble-new-chat (a new session, same agent), bubble-detail (the server's own
//             words), bubble-open-settings (a failure whose fix is a setting)
//   drawer:   summary-drawer (hidden until opened), summary-receipt (the run's receipt:
//             receipt.js), summary-content (Markdown, no raw HTML), drawer-close (Escape closes
//             it too)
//   bar:      context-bar (data-band="green"|"orange"|"red"|"compacting"|"none",
//             data-percent, data-threshold), context-bar-fill, threshold-tick (title
//             "Auto-compaction threshold 70%"), status-text (data-compacting), status-breakdown
//             (hover text), compact-button, chat-channel (who answers: answering.js)
//   input:    composer, message-input (Enter sends, Shift+Enter new line; "/compact [focus]"
//             compacts), send-button
//   settings: settings-panel, settings-close; agent-settings, agent-id, agent-form,
//             agent-aux-select ("" = inherit), agent-aux-effective, agent-strategy-select,
//             agent-threshold (range 30-95 step 5), agent-threshold-value,
//             agent-threshold-inherit (checkbox), agent-threshold-effective (class "overridden"
//             on agent-threshold while a token budget applies), agent-token-budget ("" = none
//             of its own; min 1000), agent-budget-effective, agent-protect-head ("" = inherit),
//             agent-head-effective, agent-save, agent-save-status
//   channels: channel-list, channel-item (data-channel-id, data-name) with channel-auxiliary-tag,
//             channel-default-tag, channel-edit, channel-make-default, channel-remove (a
//             refusal shows in channel-message, then a native confirm() offers force);
//             channel-add, channel-form, channel-form-title, channel-name, channel-provider,
//             channel-model, channel-base-url, channel-api-key (write-only), channel-auxiliary,
//             channel-default, channel-price-input, channel-price-output (USD per million
//             tokens; blank: no price), channel-save, channel-cancel, channel-form-error,
//             channel-message
//   token:    token-dialog, token-input, token-submit (shown when the API answers 401)

import { loadAnswering, wireAnswering } from "./answering.js";
import { api, sessionPath } from "./api.js";
import { mergeBreakdown, renderBar, statsFromContextStats } from "./bar.js";
import { isEventRow, keepPending, openStarts, renderMessages } from "./bubbles.js";
import { handleEvent, wireComposer } from "./chat.js";
import { renderGate, wireGate } from "./gate.js";
import { clearReview, loadReadyDraft } from "./review.js";
import { applyStatic, getLang, onLangChange, setLang, t } from "./i18n.js";
import { renderMarkdown } from "./markdown.js";
import { wirePins } from "./pins.js";
import { renderReceipt, runFor } from "./receipt.js";
import { keepLive, liveNodes, watchToolStops } from "./fold.js";
import {
  createSession,
  fetchSessions,
  renderSessions,
  titleOf,
  transcriptMessages,
} from "./sessions.js";
import { loadSettings, renderSettings, wireSettings } from "./settings.js";
import { SessionSocket } from "./socket.js";

const $ = (id) => document.getElementById(id);

const state = {
  sessions: [],
  current: null,
  views: new Map(), // session id -> "display" | "full"
  stats: null,
  compacting: new Map(), // request id -> stage, of the compactions running now
  socket: null,
  ticket: 0, // bumped on every switch: answers for an older session are dropped
};

const viewOf = (id) => state.views.get(id) || "display";
const currentSession = () => state.sessions.find((s) => s.id === state.current);

function showError(message) {
  $("error-text").textContent = message;
  $("error-banner").hidden = false;
}

function drawSessions() {
  renderSessions(state.sessions, state.current, state.views, {
    onOpen: (id) => openSession(id),
    onToggle: (id) => toggleView(id),
    onRenamed: () => refreshSessions(),
    onError: (message) => showError(message),
  });
}

async function refreshSessions() {
  try {
    state.sessions = await fetchSessions();
  } catch (err) {
    showError(err.message);
  }
  drawSessions();
}

/** loadHistory's calls in order: an answer older than the one drawn last is dropped. */
const drawn = { asked: 0, shown: 0 };

async function loadHistory() {
  const id = state.current;
  const ticket = state.ticket;
  const asked = ++drawn.asked;
  const view = viewOf(id);
  const data = await api(`${sessionPath(id)}/history?view=${view}`);
  const rows = data.messages || [];
  let runs = new Map();
  // a failed row's error and a done row's pruned count and status are its run's
  if (rows.some((r) => isEventRow(r) && ["failed", "done"].includes(r.metadata.event))) {
    const answer = await api(`${sessionPath(id)}/runs`);
    runs = new Map((answer.runs || []).map((run) => [run.id, run]));
  }
  if (ticket !== state.ticket || asked < drawn.shown) return;
  drawn.shown = asked;
  const list = $("messages");
  const pending = [...list.querySelectorAll("[data-pending]")];
  const live = liveNodes(list);
  renderMessages(list, rows, runs);
  keepPending(list, pending);
  keepLive(list, live, rows); // what came while the history was fetched (fold.js)
  state.compacting = new Map(openStarts(list));
  $("full-view-banner").hidden = view !== "full";
  list.scrollTop = list.scrollHeight;
}

async function loadStats() {
  const id = state.current;
  const ticket = state.ticket;
  const stats = await api(`${sessionPath(id)}/context-stats`);
  if (ticket !== state.ticket) return;
  state.stats = { ...statsFromContextStats(stats), current: state.stats?.current };
  renderBar(state.stats, state.compacting);
  renderGate(id, stats.warning);
  await loadAnswering(id, () => ticket === state.ticket); // who answers (answering.js)
}

/** The hover breakdown after a token_update (it goes stale otherwise): one fetch at a time,
 * and one more when updates came meanwhile. */
const breakdown = { busy: false, again: false };

async function refreshBreakdown() {
  if (breakdown.busy) {
    breakdown.again = true;
    return;
  }
  breakdown.busy = true;
  try {
    do {
      breakdown.again = false;
      const ticket = state.ticket;
      const stats = await api(`${sessionPath(state.current)}/context-stats`);
      if (ticket === state.ticket && state.stats) {
        state.stats = mergeBreakdown(state.stats, stats);
        renderBar(state.stats, state.compacting);
      }
    } while (breakdown.again);
  } catch (err) {
    showError(err.message);
  } finally {
    breakdown.busy = false;
  }
}

/** History, figures and list again (after a reconnect, a POSTed message, an undo). */
async function reload() {
  try {
    await loadHistory();
    await loadStats();
  } catch (err) {
    showError(err.message);
  }
  refreshSessions();
}

function updateSessionFigures(context) {
  const session = currentSession();
  if (!session) return;
  for (const key of ["usedTokens", "maxTokens", "percent", "thresholdPercent", "compactions"]) {
    if (context[key] !== undefined && context[key] !== null) session[key] = context[key];
  }
  drawSessions();
}

const ctx = {
  state,
  showError,
  reload,
  updateSessionFigures,
  refreshBreakdown,
  refreshFigures: () => {
    loadStats().catch((err) => showError(err.message));
    refreshSessions();
  },
};

function drawConnection() {
  const node = $("connection-status");
  if (!state.socket) return;
  node.textContent = t(node.dataset.state === "open" ? "connected" : "reconnecting");
}

function connect(id) {
  state.socket?.close();
  state.socket = new SessionSocket(id, {
    onEvent: (event) => handleEvent(ctx, event),
    onState: (open) => {
      $("connection-status").dataset.state = open ? "open" : "closed";
      drawConnection();
    },
    onReconnect: () => reload(), // events may have been missed while it was away
  });
}

async function openSession(id, { keepView = false } = {}) {
  const switched = id !== state.current;
  state.current = id;
  state.ticket += 1;
  if (switched) {
    state.stats = null;
    state.compacting = new Map();
    renderBar(null, null);
    $("messages").replaceChildren();
    clearReview();
    if (!keepView) state.views.delete(id);
    history.replaceState(null, "", `#session=${encodeURIComponent(id)}`);
    connect(id);
  }
  $("empty-hint").hidden = true;
  $("composer-wrap").hidden = false;
  drawSessions();
  await reload();
  if (switched) await loadReadyDraft(ctx); // a draft written while away (review.js)
  if (!$("settings-panel").hidden) await loadSettings(currentSession()?.agentId ?? null);
}

function toggleView(id) {
  state.views.set(id, viewOf(id) === "full" ? "display" : "full");
  openSession(id, { keepView: true });
}

async function newSession(body = {}) {
  try {
    const agentId = currentSession()?.agentId;
    const id = await createSession(agentId && !body.agentId ? { agentId, ...body } : body);
    await refreshSessions();
    await openSession(id);
  } catch (err) {
    showError(err.message);
  }
}

async function importTranscript(file) {
  try {
    const messages = transcriptMessages(await file.text());
    await newSession({ messages, title: titleOf(file.name) });
  } catch (err) {
    showError(t("importFailed", { error: err.message }));
  }
}

/** What opened the drawer: focus goes back to it when the drawer closes. */
let drawerOpener = null;

function closeDrawer() {
  if ($("summary-drawer").hidden) return;
  $("summary-drawer").hidden = true;
  const opener = drawerOpener;
  drawerOpener = null;
  // the list may have been drawn again meanwhile: the same summary's button, else the input
  const again = opener
    ? $("messages").querySelector(
        `[data-action="view-summary"][data-summary-id="${CSS.escape(String(opener.summaryId))}"]`,
      )
    : null;
  const target = opener?.node?.isConnected ? opener.node : again;
  (target || $("input")).focus();
}

function skipToInput(event) {
  event.preventDefault(); // the hash names the session: not changed
  const input = $("input");
  if (!$("composer-wrap").hidden) input.focus();
  else $("new-session").focus();
}

async function openSummary(summaryId, runId) {
  const body = $("summary-content");
  body.replaceChildren();
  $("summary-receipt").hidden = true;
  showReceipt(summaryId, runId);
  drawerOpener = { node: document.activeElement, summaryId };
  $("summary-drawer").hidden = false;
  $("drawer-close").focus();
  try {
    const data = await api(`${sessionPath(state.current)}/history?view=full`);
    const row = (data.messages || []).find((r) => String(r.id) === String(summaryId));
    if (row) body.innerHTML = renderMarkdown(row.content);
    else body.textContent = t("summaryMissing");
  } catch (err) {
    body.textContent = err.message;
  }
}

/** The run's receipt above its summary (gateway/static/receipt.js). */
async function showReceipt(summaryId, runId) {
  try {
    const { runs } = await api(`${sessionPath(state.current)}/runs`);
    renderReceipt($("summary-receipt"), runFor(runs, runId, summaryId), runs);
  } catch {
    $("summary-receipt").hidden = true; // the summary still shows
  }
}

async function undo(runId) {
  try {
    await api(`/api/runs/${encodeURIComponent(runId)}/restore`, { method: "POST" });
  } catch (err) {
    showError(err.message);
  }
  await reload();
}

function onListClick(event) {
  const button = event.target.closest("[data-action]");
  if (!button) return;
  if (button.dataset.action === "view-summary") {
    openSummary(button.dataset.summaryId, button.dataset.runId);
  }
  else if (button.dataset.action === "new-chat") newSession();
  else if (button.dataset.action === "undo") undo(button.dataset.runId);
  else if (button.dataset.action === "open-settings" && $("settings-panel").hidden) {
    toggleSettings();
  }
}

function toggleSettings() {
  const panel = $("settings-panel");
  panel.hidden = !panel.hidden;
  $("settings-toggle").setAttribute("aria-expanded", String(!panel.hidden));
  // the promise: answering.js focuses the agent's chat channel once it is drawn
  return panel.hidden ? undefined : loadSettings(currentSession()?.agentId ?? null);
}

function wire() {
  $("lang-select").value = getLang();
  $("lang-select").addEventListener("change", (e) => setLang(e.target.value));
  $("settings-toggle").addEventListener("click", toggleSettings);
  $("settings-close").addEventListener("click", toggleSettings);
  $("new-session").addEventListener("click", () => newSession());
  $("import-file").addEventListener("change", (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (file) importTranscript(file);
  });
  $("messages").addEventListener("click", onListClick);
  wirePins($("messages"), { sessionId: () => state.current, onChanged: reload, onError: showError });
  $("banner-back").addEventListener("click", () => toggleView(state.current));
  $("error-dismiss").addEventListener("click", () => ($("error-banner").hidden = true));
  $("drawer-close").addEventListener("click", closeDrawer);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeDrawer();
  });
  $("skip-link").addEventListener("click", skipToInput);
  watchToolStops($("messages"));
  wireComposer(ctx);
  wireGate(ctx);
  wireSettings(() => ctx.refreshFigures());
  wireAnswering(() => $("settings-panel").hidden && toggleSettings());
  onLangChange(() => {
    $("lang-select").value = getLang();
    drawSessions();
    drawConnection();
    renderBar(state.stats, state.compacting);
    renderSettings();
    if (state.current) reload();
  });
}

async function start() {
  applyStatic();
  wire();
  renderBar(null, null);
  await refreshSessions();
  const wanted = new URLSearchParams(location.hash.slice(1)).get("session");
  const first = state.sessions.find((s) => s.id === wanted) || state.sessions[0];
  if (first) await openSession(first.id);
}

start();
