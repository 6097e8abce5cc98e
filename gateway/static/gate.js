// The gate before an automatic compaction (docs/architecture.md, "The gate"): past the warning
// level a band above the context bar says how far the automatic compaction is ("Automatic
// compaction at 70% — about N turns left") with [Compact now with a focus…] [Not now]; in
// `ask` mode at the threshold it asks ([Compact now]); in `off` mode it says only a message
// that would not fit compacts. "Not now" hides it until the level changes (warning → due, or
// the context falls below the level and crosses it again), remembered per session in the page.

import { requestCompact } from "./chat.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** sessionId → the level the user said "Not now" to */
const dismissed = new Map();
const shown = { sessionId: null, warning: null };

function levelOf(warning) {
  return `${warning.mode}:${warning.due ? "due" : "warn"}`;
}

/** The band's sentence for `warning` (a token_update's, camelCase). */
export function gateText(warning) {
  const words = { t: warning.threshold, p: warning.percent, n: warning.turnsLeft };
  const turns = warning.turnsLeft != null;
  if (warning.mode === "off") return t(turns ? "gateOffTurns" : "gateOff", words);
  if (warning.due) return t("gateDue", words);
  return t(turns ? "gateWarn" : "gateWarnNoTurns", words);
}

/** Draws the band for the open session: `warning` null (below the level) hides it and forgets
 * a "Not now", so the next crossing shows it again. */
export function renderGate(sessionId, warning) {
  const band = $("gate-band");
  shown.sessionId = sessionId;
  shown.warning = warning || null;
  if (!warning) dismissed.delete(sessionId);
  const hidden = !warning || dismissed.get(sessionId) === levelOf(warning);
  band.hidden = hidden;
  if (hidden) return;
  band.dataset.mode = warning.mode;
  band.dataset.due = warning.due ? "true" : "false";
  $("gate-text").textContent = gateText(warning);
  $("gate-now").hidden = !warning.due;
}

/** Hooks the band's buttons up once. */
export function wireGate(ctx) {
  $("gate-now").addEventListener("click", () => {
    $("gate-band").hidden = true;
    requestCompact(ctx, null);
  });
  // the /compact-with-focus path: the command typed in the input, the user adds the focus
  $("gate-focus").addEventListener("click", () => {
    const input = $("input");
    input.value = "/compact ";
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  });
  $("gate-not-now").addEventListener("click", () => {
    if (shown.warning) dismissed.set(shown.sessionId, levelOf(shown.warning));
    $("gate-band").hidden = true;
    $("input").focus();
  });
}
