// The settings panel: the current session's agent (seed §8.5: auxiliary model, strategy,
// threshold, token budget, protected head; the gate's automatic compaction mode and warning
// level, the chat channel: docs/architecture.md, "The gate"; blank inherits) and the model channels (§8.6: list,
// add, edit, make default, remove with the server's refusal and a force confirm). Keys are
// write-only.

import { api, ApiError } from "./api.js";
import { num, t } from "./i18n.js";
import { loadChannels, channelsState, renderChannels, wireChannels } from "./channels.js";

const $ = (id) => document.getElementById(id);

const state = { agentId: null, agent: null, onSaved: () => {} };

function sourceText(item) {
  if (item.source === "agent") return t("srcAgent");
  if (item.source === "system") return t("srcSystem", { s: item.setting });
  if (item.source === "default") return t("srcDefault");
  return t("srcNone");
}

function option(value, label, extra = {}) {
  const node = document.createElement("option");
  node.value = value;
  node.textContent = label;
  Object.assign(node, extra);
  return node;
}

function renderAuxiliary(agent) {
  const select = $("agent-aux");
  const own = agent.auxiliaryModelChannelId;
  const choices = channelsState().filter((c) => c.auxiliary || c.id === own);
  select.replaceChildren(
    option("", t("auxInherit")),
    ...choices.map((c) =>
      option(String(c.id), `${c.name} · ${c.model}${c.auxiliary ? "" : t("auxNotAux")}`),
    ),
  );
  select.value = own == null ? "" : String(own);
  const aux = agent.effective.auxiliaryChannel;
  const name = aux.name ? `${aux.name}${aux.auxiliary === false ? t("auxNotAux") : ""}` : "—";
  $("agent-aux-effective").textContent = t("effective", { v: name, src: sourceText(aux) });
}

function syncThreshold() {
  $("agent-threshold").disabled = $("agent-threshold-inherit").checked;
  $("agent-threshold-value").textContent = `${$("agent-threshold").value}%`;
}

/** The budget that will set the threshold as the form stands (null: none). The system's
 * (COMPACTION_TOKEN_BUDGET) is known only while the agent has no budget of its own. */
function formBudget() {
  const typed = $("agent-budget").value.trim();
  if (typed) return Number(typed);
  const agent = state.agent;
  return agent.tokenBudget == null ? agent.effective.tokenBudget.value : null;
}

// A budget replaces the percentage (docs/architecture.md, "Settings"): the slider then says so
// and is dimmed, rather than showing a threshold that does not apply.
function syncBudget() {
  const budget = formBudget();
  const threshold = state.agent.effective.thresholdPercent;
  $("agent-threshold").classList.toggle("overridden", budget != null);
  $("agent-threshold-effective").textContent =
    budget != null
      ? t("thresholdUnused", { v: num(budget) })
      : t("effective", { v: `${threshold.value}%`, src: sourceText(threshold) });
}

function renderBudget(agent) {
  const budget = agent.effective.tokenBudget;
  $("agent-budget").value = agent.tokenBudget ?? "";
  const value =
    budget.value == null ? t("budgetNone") : t("budgetTokens", { v: num(budget.value) });
  $("agent-budget-effective").textContent = t("effective", { v: value, src: sourceText(budget) });
  syncBudget();
}

const MODES = { on: "autoOn", ask: "autoAsk", off: "autoOff" };

/** The gate's mode and warning level, and the channel that answers chat turns. */
function renderGateSettings(agent) {
  const mode = agent.effective.autoCompact;
  $("agent-auto-compact").replaceChildren(
    option("", t("autoInherit", { v: t(MODES[mode.value] || "autoOn") })),
    ...Object.entries(MODES).map(([value, key]) => option(value, t(key))),
  );
  $("agent-auto-compact").value = agent.autoCompact ?? "";
  $("agent-auto-compact-effective").textContent = t("effective", {
    v: t(MODES[mode.value] || "autoOn"),
    src: sourceText(mode),
  });
  const warn = agent.effective.warnPercent;
  $("agent-warn").value = agent.warnPercent ?? "";
  const level = warn.value == null ? t("warnDefault") : `${warn.value}%`;
  $("agent-warn").placeholder = `${t("inherit")}: ${level}`;
  $("agent-warn-effective").textContent = t("effective", { v: level, src: sourceText(warn) });
  const own = agent.chatChannelId;
  const choices = channelsState().filter((c) => !c.auxiliary || c.id === own);
  $("agent-chat").replaceChildren(
    option("", t("chatInherit")),
    ...choices.map((c) => option(String(c.id), `${c.name} · ${c.model}`)),
  );
  $("agent-chat").value = own == null ? "" : String(own);
}

export function renderAgent() {
  const form = $("agent-form");
  const agent = state.agent;
  $("agent-id").textContent = state.agentId ? `agent: ${state.agentId}` : t("noAgent");
  form.hidden = !agent;
  if (!agent) return;
  renderAuxiliary(agent);
  $("agent-strategy").replaceChildren(
    option("lossy", t("strategyLossy")),
    option("", `${t("strategyMore")}…`, { disabled: true }),
  );
  $("agent-strategy").value = agent.compactionStrategy || "lossy";
  const threshold = agent.effective.thresholdPercent;
  $("agent-threshold-inherit").checked = agent.compactionThresholdPercent == null;
  $("agent-threshold").value = String(agent.compactionThresholdPercent ?? threshold.value);
  syncThreshold();
  renderBudget(agent);
  const head = agent.effective.protectFirstN;
  $("agent-head").value = agent.compactionProtectFirstN ?? "";
  $("agent-head").placeholder = `${t("inherit")}: ${head.value}`;
  $("agent-head-effective").textContent = t("effective", { v: head.value, src: sourceText(head) });
  renderGateSettings(agent);
}

function showStatus(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle("error", isError);
}

async function saveAgent(event) {
  event.preventDefault();
  const status = $("agent-save-status");
  const head = $("agent-head").value.trim();
  const budget = $("agent-budget").value.trim();
  const aux = $("agent-aux").value;
  const inherit = $("agent-threshold-inherit").checked;
  const body = {
    auxiliaryChannel: aux ? Number(aux) : null,
    compactionStrategy: $("agent-strategy").value || "lossy",
    thresholdPercent: inherit ? null : Number($("agent-threshold").value),
    protectFirstN: head ? Number(head) : null,
    tokenBudget: budget ? Number(budget) : null,
    autoCompact: $("agent-auto-compact").value || null,
    warnPercent: $("agent-warn").value.trim() ? Number($("agent-warn").value) : null,
    chatChannel: $("agent-chat").value ? Number($("agent-chat").value) : null,
  };
  try {
    state.agent = await api(`/api/agents/${encodeURIComponent(state.agentId)}`, {
      method: "PUT",
      body,
    });
    renderAgent();
    showStatus(status, t("saved"));
    state.onSaved();
  } catch (err) {
    showStatus(status, err instanceof ApiError ? err.message : String(err), true);
  }
}

async function loadAgent() {
  state.agent = null;
  if (state.agentId) {
    try {
      state.agent = await api(`/api/agents/${encodeURIComponent(state.agentId)}`);
    } catch (err) {
      showStatus($("agent-save-status"), err.message, true);
    }
  }
  renderAgent();
}

/** The agent of the open session (null: none) and the channels, fetched and drawn. */
export async function loadSettings(agentId) {
  state.agentId = agentId;
  showStatus($("agent-save-status"), "");
  await loadChannels();
  await loadAgent();
}

export function renderSettings() {
  renderAgent();
  renderChannels();
}

/** Hooks the forms up once; `onSaved` runs after the agent's settings changed. */
export function wireSettings(onSaved) {
  state.onSaved = onSaved;
  $("agent-form").addEventListener("submit", saveAgent);
  $("agent-threshold").addEventListener("input", syncThreshold);
  $("agent-budget").addEventListener("input", syncBudget);
  $("agent-threshold-inherit").addEventListener("change", (event) => {
    // inheriting shows the value that will apply
    if (event.target.checked && state.agent) {
      $("agent-threshold").value = String(state.agent.effective.thresholdPercent.value);
    }
    syncThreshold();
  });
  // a channel change may change the auxiliary choices and the effective one (the default)
  wireChannels(() => loadAgent());
}
