// Model channels (seed §8.6): the list, the add/edit form ("Can be an auxiliary model"),
// make default, remove. API keys are write-only: the form never holds a saved key, only its
// mask as a hint; a blank key field leaves the saved key as it is.

import { api, ApiError } from "./api.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

let channels = [];
let editing = null; // the channel row being edited; null: adding
let onChanged = () => {};

export function channelsState() {
  return channels;
}

function say(text, isError = false) {
  const node = $("channel-message");
  node.textContent = text;
  node.classList.toggle("error", isError);
}

export async function loadChannels() {
  try {
    channels = (await api("/api/channels")).channels || [];
  } catch (err) {
    channels = [];
    say(err.message, true);
  }
  renderChannels();
}

function button(label, testid, handler) {
  const node = document.createElement("button");
  node.type = "button";
  node.textContent = label;
  node.dataset.testid = testid;
  node.addEventListener("click", handler);
  return node;
}

function item(channel) {
  const li = document.createElement("li");
  li.className = "channel";
  li.dataset.testid = "channel-item";
  li.dataset.channelId = channel.id;
  li.dataset.name = channel.name;
  const title = document.createElement("div");
  title.className = "channel-title";
  const name = document.createElement("strong");
  name.textContent = channel.name;
  title.append(name);
  for (const [flag, key] of [["auxiliary", "auxTag"], ["default", "defaultTag"]]) {
    if (!channel[flag]) continue;
    const tag = document.createElement("span");
    tag.className = `tag tag-${flag}`;
    tag.dataset.testid = `channel-${flag}-tag`;
    tag.textContent = t(key);
    title.append(tag);
  }
  const detail = document.createElement("div");
  detail.className = "muted";
  const shown = [channel.provider, channel.model, channel.baseUrl, channel.apiKey, prices(channel)];
  detail.textContent = shown
    .filter(Boolean)
    .join(" · ");
  const actions = document.createElement("div");
  actions.className = "channel-actions";
  actions.append(button(t("edit"), "channel-edit", () => openForm(channel)));
  if (!channel.default) {
    actions.append(button(t("makeDefault"), "channel-make-default", () => makeDefault(channel)));
  }
  actions.append(button(t("remove"), "channel-remove", () => remove(channel)));
  li.append(title, detail, actions);
  return li;
}

export function renderChannels() {
  const list = $("channel-list");
  list.replaceChildren(...channels.map(item));
  if (!channels.length) {
    const empty = document.createElement("li");
    empty.className = "muted";
    empty.textContent = t("noChannels");
    list.append(empty);
  }
  if (!$("channel-form").hidden) formTitle();
}

function formTitle() {
  $("channel-form-title").textContent = editing
    ? t("editChannel", { name: editing.name })
    : t("addChannel");
  const key = editing?.apiKey;
  $("channel-api-key").placeholder = key ? t("apiKeyKeep", { mask: key }) : "";
}

function openForm(channel) {
  editing = channel;
  const form = $("channel-form");
  form.reset();
  $("channel-form-error").textContent = "";
  $("channel-name").value = channel?.name || "";
  $("channel-provider").value = channel?.provider || "openai-compatible";
  $("channel-model").value = channel?.model || "";
  $("channel-base-url").value = channel?.baseUrl || "";
  $("channel-api-key").value = "";
  $("channel-auxiliary").checked = Boolean(channel?.auxiliary);
  $("channel-price-input").value = channel?.priceInput ?? "";
  $("channel-price-output").value = channel?.priceOutput ?? "";
  $("channel-default").checked = Boolean(channel?.default);
  $("channel-default").disabled = Boolean(channel?.default); // a default is replaced, not unset
  formTitle();
  form.hidden = false;
  $("channel-name").focus();
}

function closeForm() {
  $("channel-form").hidden = true;
  editing = null;
}

/** A channel's prices as the list shows them (a run's cost: docs/architecture.md, "Receipt"). */
function prices(channel) {
  if (channel.priceInput == null && channel.priceOutput == null) return "";
  return t("pricesShown", { i: channel.priceInput ?? 0, o: channel.priceOutput ?? 0 });
}

/** The price fields: null when both are blank (no price), else a blank one counts as 0. */
function formPrices() {
  const read = (id) => $(id).value.trim();
  const [input, output] = [read("channel-price-input"), read("channel-price-output")];
  if (!input && !output) return { priceInput: null, priceOutput: null };
  return { priceInput: Number(input || 0), priceOutput: Number(output || 0) };
}

/** The request body: every field when adding; only what changed when editing. */
function formBody() {
  const fields = {
    name: $("channel-name").value.trim(),
    provider: $("channel-provider").value,
    model: $("channel-model").value.trim(),
    auxiliary: $("channel-auxiliary").checked,
  };
  const baseUrl = $("channel-base-url").value.trim();
  const apiKey = $("channel-api-key").value;
  if (!editing) {
    return {
      ...fields,
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...formPrices(),
      default: $("channel-default").checked,
    };
  }
  const body = {};
  for (const [key, value] of Object.entries(fields)) if (value !== editing[key]) body[key] = value;
  // the URL comes back masked: send it only when the user changed it
  if (baseUrl !== (editing.baseUrl || "")) body.baseUrl = baseUrl || null;
  if (apiKey) body.apiKey = apiKey;
  const priced = formPrices();
  const was = { priceInput: editing.priceInput ?? null, priceOutput: editing.priceOutput ?? null };
  if (priced.priceInput !== was.priceInput || priced.priceOutput !== was.priceOutput) {
    // null clears both (gateway/routes/channels.py)
    Object.assign(body, priced.priceInput === null ? { priceInput: null } : priced);
  }
  return body;
}

async function save(event) {
  event.preventDefault();
  const error = $("channel-form-error");
  try {
    const body = formBody();
    if (editing) {
      const id = editing.id;
      if (Object.keys(body).length) await api(`/api/channels/${id}`, { method: "PATCH", body });
      if ($("channel-default").checked && !editing.default) {
        await api(`/api/channels/${id}/default`, { method: "POST" });
      }
    } else {
      await api("/api/channels", { method: "POST", body });
    }
    closeForm();
    say(t("saved"));
    await loadChannels();
    onChanged();
  } catch (err) {
    error.textContent = err instanceof ApiError ? err.message : String(err);
  }
}

async function makeDefault(channel) {
  try {
    await api(`/api/channels/${channel.id}/default`, { method: "POST" });
    say(t("saved"));
  } catch (err) {
    say(err.message, true);
  }
  await loadChannels();
  onChanged();
}

async function remove(channel) {
  const path = `/api/channels/${channel.id}`;
  let result;
  try {
    result = await api(`${path}?force=false`, { method: "DELETE" });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) {
      say(err.message, true);
      return;
    }
    say(err.message, true); // the server's refusal stays visible whatever the answer
    if (!window.confirm(t("forceRemove", { error: err.message }))) return;
    try {
      result = await api(`${path}?force=true`, { method: "DELETE" });
    } catch (again) {
      say(again.message, true);
      return;
    }
  }
  say(t("removed", { name: result?.removed?.name ?? channel.name }));
  if (editing?.id === channel.id) closeForm();
  await loadChannels();
  onChanged();
}

export function wireChannels(changed) {
  onChanged = changed;
  $("channel-add").addEventListener("click", () => openForm(null));
  $("channel-cancel").addEventListener("click", closeForm);
  $("channel-form").addEventListener("submit", save);
}
