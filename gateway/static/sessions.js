// The session list on the left: each session's tokens and compaction count, the full /
// compacted toggle of seed §8.4, "new session" and "import transcript".

import { api } from "./api.js";
import { num, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** GET /api/sessions (newest first). */
export async function fetchSessions() {
  return (await api("/api/sessions")).sessions || [];
}

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
  name.textContent = session.id;
  const figures = document.createElement("span");
  figures.className = "session-figures muted";
  figures.dataset.testid = "session-figures";
  figures.textContent = [
    t("sessionTokens", { used: num(session.usedTokens), max: num(session.maxTokens) }),
    t("sessionCompactions", { n: session.compactions ?? 0 }),
  ].join(" · ");
  open.append(name, figures);
  open.addEventListener("click", () => handlers.onOpen(session.id));
  li.append(open);
  const view = views.get(session.id) || "display";
  // The toggle belongs to compacted sessions (and stays while one shows its full view).
  if ((session.compactions ?? 0) > 0 || view === "full") {
    li.append(toggleButton(session, view, handlers));
  }
  return li;
}

/** Draws the list; `views` maps a session id to "display" or "full". */
export function renderSessions(sessions, current, views, handlers) {
  const list = $("session-list");
  const items = sessions.map((s) => sessionItem(s, { current, views, handlers }));
  if (!items.length) {
    const empty = document.createElement("li");
    empty.className = "muted empty";
    empty.textContent = t("noSessions");
    items.push(empty);
  }
  list.replaceChildren(...items);
}
