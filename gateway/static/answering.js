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
  if (answer.source === "offline") return t("chatOffline");
  return t("chatBy", { name: answer.name, model: answer.model });
}

/** Why: the source in words, or the refusal's detail; then where to change it. */
function why(answer) {
  const said = answer.source === "none" ? answer.detail : t(`chatSrc_${answer.source}`);
  return [said, t("chatChannelHint")].filter(Boolean).join("\n");
}

export function renderAnswering() {
  const button = $("chat-channel");
  button.hidden = !shown;
  if (!shown) return;
  button.dataset.source = shown.source;
  button.textContent = words(shown);
  button.title = why(shown);
  button.setAttribute("aria-label", `${words(shown)}. ${why(shown)}`);
}

/** `openSettings()` shows the Settings panel; the agent's chat channel gets the focus. */
export function wireAnswering(openSettings) {
  $("chat-channel").addEventListener("click", async () => {
    await openSettings();
    const select = $("agent-chat"); // the agent's chat channel (settings.js)
    select?.scrollIntoView({ block: "center" });
    select?.focus();
  });
  onLangChange(renderAnswering);
}
