// The session list on the left: each session's name (its title, else its id), tokens and
// compaction count, the full / compacted toggle of seed §8.4, renaming, "new session" and
// "import transcript" (a transcript is named after its file).

import { api } from "./api.js";
import { errorText, num, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** GET /api/sessions (newest first). */
export async function fetchSessions() {
  return (await api("/api/sessions")).sessions || [];
}

/** The name rule's length (compaction/core/contract.py, NAME_MAX_CHARS). */
const TITLE_MAX = 128;

/** A transcript file's name as its session's title (as `compaction import` names it): no
 * ".json", no control characters, at most the name rule's length. */
export function titleOf(fileName) {
  const stem = String(fileName).replace(/\.json$/i, "") || String(fileName);
  const clean = stem.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  return [...clean].slice(0, TITLE_MAX).join("") || "transcript";
}

/** PATCH /api/sessions/{id} {title}; "" clears it (the id names the session again). */
export async function renameSession(id, title) {
  const body = { title: title.trim() ? title.trim() : null };
  return api(`/api/sessions/${encodeURIComponent(id)}`, { method: "PATCH", body });
}

/** Where focus goes once the list is drawn again: {id, testid} of a control in it. */
let focusNext = null;

/** POST /api/sessions; resolves to the new id. */
export async function createSession(body = {}) {
  return (await api("/api/sessions", { method: "POST", body })).id;
}

/** The messages of a transcript file: an OpenAI-format list, or an object holding one. */
export function transcriptMessages(text) {
  const data = JSON.parse(text);
  const messages = Array.isArray(data) ? data : data?.messages;
  if (!Array.isArray(messages)) throw new Error("expected a JSON list of messages");
  return messages;
}

function toggleButton(session, view, handlers) {
  const full = view === "full";
  const button = document.createElement("button");
  button.type = "button";
  button.className = `icon view-toggle${full ? " active" : ""}`;
  button.dataset.testid = "session-view-toggle";
  button.dataset.view = view;
  button.setAttribute("aria-pressed", String(full));
  button.title = full ? t("toCompacted") : t("toFull");
  button.setAttribute("aria-label", button.title);
  button.textContent = full ? "⊟" : "⊞";
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    handlers.onToggle(session.id);
  });
  return button;
}

function sessionItem(session, { current, views, handlers }) {
  const li = document.createElement("li");
  li.dataset.testid = "session-item";
  li.dataset.sessionId = session.id;
  li.className = session.id === current ? "session current" : "session";
  const open = document.createElement("button");
  open.type = "button";
  open.className = "session-open";
  open.dataset.testid = "session-open";
  if (session.id === current) open.setAttribute("aria-current", "true");
  const name = document.createElement("span");
  name.className = "session-name";
  name.dataset.testid = "session-name";
  name.textContent = session.title || session.id;
  if (session.title) name.title = session.id;
  const figures = document.createElement("span");
  figures.className = "session-figures muted";
  figures.dataset.testid = "session-figures";
  figures.textContent = [
    t("sessionTokens", { used: num(session.usedTokens), max: num(session.maxTokens) }),
    t("sessionCompactions", { n: session.compactions ?? 0 }),
  ].join(" · ");
  open.append(name, figures);
  open.addEventListener("click", () => handlers.onOpen(session.id));
  li.append(open, renameButton(session, li, handlers));
  const view = views.get(session.id) || "display";
  // The toggle belongs to compacted sessions (and stays while one shows its full view).
  if ((session.compactions ?? 0) > 0 || view === "full") {
    li.append(toggleButton(session, view, handlers));
  }
  return li;
}

function renameButton(session, li, handlers) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "icon session-rename";
  button.dataset.testid = "session-rename";
  button.title = t("renameSession");
  button.setAttribute("aria-label", `${t("renameSession")}: ${session.title || session.id}`);
  button.textContent = "✎";
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    li.replaceChildren(renameForm(session, handlers));
    li.querySelector("input").select();
  });
  return button;
}

/** The inline rename: Enter saves, Escape cancels; focus comes back to the rename button. */
function renameForm(session, handlers) {
  const form = document.createElement("form");
  form.className = "session-rename-form";
  form.dataset.testid = "session-rename-form";
  const input = document.createElement("input");
  input.dataset.testid = "session-title-input";
  input.maxLength = TITLE_MAX;
  input.value = session.title || "";
  input.placeholder = session.id;
  input.setAttribute("aria-label", t("renameLabel"));
  const done = () => {
    focusNext = { id: session.id, testid: "session-rename" };
    handlers.onRenamed();
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await renameSession(session.id, input.value);
    } catch (err) {
      handlers.onError(errorText(err.code, err.message));
    }
    done();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation(); // not the drawer's Escape
      done();
    }
  });
  form.append(input);
  return form;
}

/** The control that holds focus in the list, to find again once it is drawn anew. */
function focusedControl(list) {
  const active = document.activeElement;
  if (!active || !list.contains(active)) return null;
  if (active.closest("form")) return { editing: true };
  const item = active.closest("[data-session-id]");
  return item ? { id: item.dataset.sessionId, testid: active.dataset.testid } : null;
}

/** Draws the list; `views` maps a session id to "display" or "full". Focus stays where it was
 * (opening a session redraws the list under the button that opened it). */
export function renderSessions(sessions, current, views, handlers) {
  const list = $("session-list");
  const focused = focusNext || focusedControl(list);
  focusNext = null;
  if (focused?.editing) return; // a rename in progress: drawn again once it ends
  const items = sessions.map((s) => sessionItem(s, { current, views, handlers }));
  if (!items.length) {
    const empty = document.createElement("li");
    empty.className = "muted empty";
    empty.textContent = t("noSessions");
    items.push(empty);
  }
  list.replaceChildren(...items);
  if (!focused) return;
  const item = list.querySelector(`[data-session-id="${CSS.escape(focused.id)}"]`);
  const control = item?.querySelector(`[data-testid="${CSS.escape(focused.testid || "")}"]`);
  (control || item?.querySelector("[data-testid=session-open]"))?.focus();
}
