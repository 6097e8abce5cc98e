// Review before apply (docs/architecture.md, "Review"): `/compact --review` or the Preview
// button asks the worker for a draft; its `compaction_draft` event (or, on opening a session,
// its ready draft) shows a review card in #review-slot, outside the message list so that a
// redraw of the history keeps it: the summary in an editable textarea, the tokens before and
// after, the receipt's counts, and Apply / Regenerate with a focus / Discard. Apply writes the
// edited text first; its `compaction_done` draws the usual done bubble. A refusal
// (`draft_stale`, `draft_closed`) is shown on the card in the console's language.

import { api, sessionPath } from "./api.js";
import { el } from "./bubbles.js";
import { errorText, num, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** The card's draft: what it was written as, to tell an edit apart. */
let shown = null;

export function clearReview() {
  shown = null;
  $("review-slot").replaceChildren();
}

/** A `compaction_draft` event of the current session: its start bubble ends, the card shows. */
export async function onDraft(ctx, event) {
  const list = $("messages");
  const start = `[data-testid="compaction-bubble"][data-state="start"]`;
  const own = event.requestId
    ? list.querySelector(`${start}[data-request-id="${CSS.escape(event.requestId)}"]`)
    : null;
  own?.remove();
  ctx.state.compacting.delete(event.requestId);
  await showDraftById(ctx, event.draftId);
}

/** The session's ready draft, if any (after opening a session or a reconnect). */
export async function loadReadyDraft(ctx) {
  const id = ctx.state.current;
  if (!id) return;
  try {
    const { drafts } = await api(`${sessionPath(id)}/drafts`);
    if (ctx.state.current !== id) return;
    const ready = drafts.find((draft) => draft.status === "ready");
    if (ready) render(ctx, ready);
    else clearReview();
  } catch (err) {
    ctx.showError(err.message);
  }
}

async function showDraftById(ctx, draftId) {
  try {
    const draft = await api(`/api/drafts/${encodeURIComponent(draftId)}`);
    if (draft.sessionId === ctx.state.current) render(ctx, draft);
  } catch (err) {
    ctx.showError(errorText(err.code, err.message));
  }
}

function receiptLine(receipt) {
  if (!receipt) return null;
  const ids = receipt.identifiers;
  const users = receipt.userMessages;
  return t("reviewReceipt", {
    kept: num(ids.kept),
    total: num(ids.total),
    verbatim: num(users.verbatim),
    users: num(users.total),
  });
}

function render(ctx, draft) {
  shown = draft;
  const card = el("section", {
    class: "review-card",
    "data-testid": "review-card",
    "data-draft-id": String(draft.id),
    "aria-labelledby": "review-title",
  });
  const title = el("h2", { id: "review-title" }, t("reviewTitle"));
  const figures = t("reviewFigures", {
    before: num(draft.tokensBefore),
    after: num(draft.tokensAfter),
    n: draft.removedCount,
  });
  const facts = el("p", { class: "muted", "data-testid": "review-figures" }, figures);
  card.append(title, facts);
  const receipt = receiptLine(draft.receipt);
  if (receipt) card.append(el("p", { class: "muted", "data-testid": "review-receipt" }, receipt));
  const label = el("label", { for: "review-summary" }, t("reviewSummaryLabel"));
  const text = el("textarea", { id: "review-summary", "data-testid": "review-summary", rows: "8" });
  text.value = draft.summary;
  text.disabled = !draft.summary; // a draft that only prunes has no summary to edit
  const focus = el("input", {
    id: "review-focus",
    "data-testid": "review-focus",
    "aria-label": t("reviewFocus"),
    placeholder: t("reviewFocus"),
    maxlength: "2000",
  });
  const error = el("p", { class: "error", "data-testid": "review-error", role: "alert" });
  const buttons = el("div", { class: "form-actions" });
  const apply = el("button", { type: "button", "data-testid": "review-apply" }, t("reviewApply"));
  const again = el("button", { type: "button", "data-testid": "review-regenerate" });
  again.textContent = t("reviewRegenerate");
  const discard = el("button", { type: "button", "data-testid": "review-discard" });
  discard.textContent = t("reviewDiscard");
  buttons.append(apply, focus, again, discard);
  card.append(label, text, buttons, error);
  $("review-slot").replaceChildren(card);
  const act = (fn) => async () => {
    error.textContent = "";
    for (const button of buttons.querySelectorAll("button")) button.disabled = true;
    try {
      await fn();
    } catch (err) {
      error.textContent = errorText(err.code, err.message);
      for (const button of buttons.querySelectorAll("button")) button.disabled = false;
    }
  };
  apply.addEventListener("click", act(() => applyDraft(ctx, draft, text.value)));
  again.addEventListener("click", act(() => regenerate(draft, focus.value.trim(), card)));
  discard.addEventListener("click", act(() => discardDraft(draft)));
}

async function applyDraft(ctx, draft, text) {
  const path = `/api/drafts/${encodeURIComponent(draft.id)}`;
  if (draft.summary && text !== shown?.summary) {
    await api(path, { method: "PUT", body: { summary: text } });
  }
  await api(`${path}/apply`, { method: "POST" });
  clearReview();
  // the done bubble and the folded view come with compaction_done; without a socket, reload
  if (!ctx.state.socket?.open) await ctx.reload();
}

async function regenerate(draft, focus, card) {
  await api(`/api/drafts/${encodeURIComponent(draft.id)}/regenerate`, {
    method: "POST",
    body: focus ? { focus } : {},
  });
  card.dataset.state = "regenerating";
  card.querySelector('[data-testid="review-figures"]').textContent = t("reviewWorking");
}

async function discardDraft(draft) {
  await api(`/api/drafts/${encodeURIComponent(draft.id)}/discard`, { method: "POST" });
  clearReview();
}
