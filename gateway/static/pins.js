// Pins on the message list (docs/architecture.md, "Pins"): a pinned message is marked (an icon
// with its aria-label) and each message that can be pinned has a toggle, a real button (in the
// tab order, Enter and Space work). A refusal is shown with its code's text (fail_<code>).
// bubbles.js calls markPins for each message; app.js calls wirePins once.

import { api, sessionPath } from "./api.js";
import { errorText, t } from "./i18n.js";

function node(tag, attrs, text) {
  const made = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) made.setAttribute(key, value);
  if (text !== undefined) made.textContent = text;
  return made;
}

const SVG = "http://www.w3.org/2000/svg";

/** A pushpin drawn in SVG (no emoji font needed). */
function pinIcon() {
  const svg = document.createElementNS(SVG, "svg");
  for (const [key, value] of Object.entries({
    viewBox: "0 0 16 16",
    width: "11",
    height: "11",
    "aria-hidden": "true",
    class: "pin-icon",
  })) {
    svg.setAttribute(key, value);
  }
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M5 1h6v1l-1 1v4l2 2v1H9v5l-1 1-1-1v-5H4V9l2-2V3L5 2z");
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

/** Rows a user can pin: stored conversation messages still in the model's view. */
const pinnable = (row) => row.id != null && !row.isCompactionSummary && !row.compactedAt;

/** Marks `article` (a history row's element) pinned and adds its toggle to `head`. */
export function markPins(article, head, row) {
  if (row.pinned) {
    article.classList.add("pinned");
    article.dataset.pinned = "true";
    const mark = node("span", {
      class: "tag tag-pinned",
      "data-testid": "pinned-tag",
      role: "img",
      "aria-label": t("pinnedTag"),
      title: t("pinnedTag"),
    });
    mark.append(pinIcon(), node("span", { "aria-hidden": "true" }, t("bdPinned")));
    head.append(mark);
  }
  if (!pinnable(row)) return;
  const pinned = Boolean(row.pinned);
  const button = node(
    "button",
    {
      type: "button",
      class: "link pin-toggle",
      "data-pin": pinned ? "unpin" : "pin",
      "data-id": String(row.id),
      "data-testid": "pin-toggle",
      "aria-pressed": String(pinned),
      "aria-label": t(pinned ? "unpinLabel" : "pinLabel"),
      title: t(pinned ? "unpinLabel" : "pinLabel"),
    },
    t(pinned ? "unpinAction" : "pinAction"),
  );
  head.append(button);
}

/** One listener on the list: a toggle pins or unpins its message, then `onChanged()` redraws;
 * a refusal goes to `onError(text)` and changes nothing. */
export function wirePins(list, { sessionId, onChanged, onError }) {
  list.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-pin]");
    if (!button || !sessionId()) return;
    const path = `${sessionPath(sessionId())}/messages/${encodeURIComponent(button.dataset.id)}/pin`;
    button.disabled = true;
    try {
      await api(path, { method: button.dataset.pin === "pin" ? "POST" : "DELETE" });
      await onChanged();
    } catch (err) {
      button.disabled = false;
      onError(t("pinFailed", { reason: errorText(err.code, err.message) }));
    }
  });
}
