// Which channel answers the open session's chat turns, and why (GET
// /api/sessions/{id}/chat-channel; docs/architecture.md, "Which channel answers"): shown in the
// status line, a click opens the Settings at the agent's chat channel.
//
// test ids: chat-channel (data-source = agent | model | system | offline | none)

import { api, sessionPath } from "./api.js";
import { onLangChange, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** The last answer drawn (null: no session open), drawn again when the language changes. */
let shown = null;

/** Fetches and draws who answers session `id`; `current()` says the answer is still wanted. */
export async function loadAnswering(id, current) {
  const answer = id ? await api(`${sessionPath(id)}/chat-channel`) : null;
  if (!current()) return;
  shown = answer;
  renderAnswering();
}

function words(answer) {
  if (answer.source === "none") return t("chatNone");
  const by = answer.source === "offline"
    ? t("chatOffline")
    : t("chatBy", { name: answer.name, model: answer.model });
  return `${by} · ${t(`chatSrc_${answer.source}`)}`;
}

export function renderAnswering() {
  const button = $("chat-channel");
  button.hidden = !shown;
  if (!shown) return;
  button.dataset.source = shown.source;
  button.textContent = words(shown);
  button.title = shown.detail ? `${shown.detail}\n${t("chatChannelHint")}` : t("chatChannelHint");
}

/** `openSettings()` shows the Settings panel; the agent's chat channel gets the focus. */
export function wireAnswering(openSettings) {
  $("chat-channel").addEventListener("click", async () => {
    await openSettings();
    $("agent-chat")?.focus();
  });
  onLangChange(renderAnswering);
}
