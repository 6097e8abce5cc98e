// The context bar above the input (3px: green to the threshold, orange to 90%, red with a
// pulse above, blue and moving while a compaction runs), its threshold tick (at the fixed token
// budget's share of the window when one applies, else at the percentage), and the status line
// with the token breakdown on hover.

import { num, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

/** The colour band for `percent` with the threshold at `threshold` (both 0–100). */
export function band(percent, threshold) {
  if (percent > 90) return "red";
  if (percent > threshold) return "orange";
  return "green";
}

/** The figures the bar shows, merged from context-stats (on load) and token_update events. */
export function statsFromContextStats(stats) {
  return {
    usedTokens: stats.usedTokens,
    maxTokens: stats.maxTokens,
    percent: stats.percent,
    thresholdPercent: stats.thresholdPercent,
    // token_update carries neither (docs/architecture.md, "Events"): kept from here until the
    // next context-stats, which the console reloads after each compaction and settings save
    thresholdTokens: stats.thresholdTokens,
    tokenBudget: stats.tokenBudget ?? null,
    compactions: stats.compactions ?? 0,
    tokensByRole: stats.tokensByRole || {},
    tokensBySegment: stats.tokensBySegment || {},
    pinnedTokens: stats.pinnedTokens ?? 0, // docs/architecture.md, "Pins"
  };
}

/** The hover breakdown's figures, taken from a context-stats answer: token_update carries only
 * the totals, so the console fetches them again after each one (app.js, refreshBreakdown). */
const BREAKDOWN = ["tokensByRole", "tokensBySegment", "pinnedTokens"];

export function mergeBreakdown(previous, stats) {
  const fresh = statsFromContextStats(stats);
  return { ...previous, ...Object.fromEntries(BREAKDOWN.map((key) => [key, fresh[key]])) };
}

export function mergeTokenUpdate(previous, event) {
  const context = event.context || {};
  return {
    ...(previous || {}),
    usedTokens: context.usedTokens,
    maxTokens: context.maxTokens,
    percent: context.percent,
    thresholdPercent: context.thresholdPercent,
    compactions: context.compactions ?? previous?.compactions ?? 0,
    current: event.current || previous?.current,
  };
}

/** Where compaction starts, as a share of the window (0–100), and the status line's words for
 * it: the fixed token budget's tokens when one applies, else the percentage threshold. */
function thresholdOf(stats) {
  const percent = Number(stats.thresholdPercent) || 0;
  const tokens = Number(stats.thresholdTokens);
  const max = Number(stats.maxTokens);
  if (stats.tokenBudget == null || !(tokens > 0) || !(max > 0)) {
    const words = { t: percent };
    return { at: percent, tick: t("thresholdTick", words), status: t("thresholdStatus", words) };
  }
  const words = { b: num(tokens) };
  const at = Math.min(100, Math.round((1000 * tokens) / max) / 10); // one decimal, as `percent`
  return { at, tick: t("budgetTick", words), status: t("budgetStatus", words) };
}

function breakdownRows(stats) {
  const role = stats.tokensByRole || {};
  const segment = stats.tokensBySegment || {};
  const rows = [
    [t("bdInput"), role.user],
    [t("bdOutput"), role.assistant],
    [t("bdTool"), role.tool],
    [t("bdSystem"), role.system],
    [t("bdHistory"), segment.history],
    [t("bdLoop"), segment.loop],
    [t("bdState"), segment.state],
    [t("bdPinned"), stats.pinnedTokens || undefined],
  ].filter(([, value]) => value !== undefined);
  const lines = rows.map(([label, value]) => `${label}: ${num(value)}`);
  const current = stats.current;
  if (current && current.totalTokens) {
    lines.push(
      t("bdLastCall", {
        i: num(current.inputTokens),
        o: num(current.outputTokens),
        total: num(current.totalTokens),
      }),
    );
  }
  return lines;
}

function renderBreakdown(stats) {
  const box = $("status-breakdown");
  box.replaceChildren();
  const title = document.createElement("strong");
  title.textContent = t("breakdownTitle");
  box.append(title);
  const lines = breakdownRows(stats);
  for (const line of lines) {
    const row = document.createElement("div");
    row.textContent = line;
    box.append(row);
  }
  $("status-text").title = [t("breakdownTitle"), ...lines].join("\n");
}

/**
 * Draws the bar and the status line; `stats` null means no session is open. `running` maps the
 * request ids of the compactions running now to their stage ("history" | "loop"): the status
 * line names the stage of the latest.
 */
export function renderBar(stats, running) {
  const stage = running?.size ? [...running.values()].at(-1) : null;
  const compacting = stage !== null;
  const bar = $("context-bar");
  const fill = $("context-bar-fill");
  const tick = $("threshold-tick");
  const text = $("status-text");
  const compact = $("compact-button");
  compact.disabled = !stats;
  if (!stats) {
    bar.dataset.band = "none";
    fill.style.width = "0%";
    tick.hidden = true;
    text.textContent = "";
    return;
  }
  const percent = Math.max(0, Number(stats.percent) || 0);
  const threshold = thresholdOf(stats);
  bar.dataset.band = compacting ? "compacting" : band(percent, threshold.at);
  bar.dataset.percent = String(percent);
  bar.dataset.threshold = String(threshold.at);
  bar.setAttribute("aria-valuenow", String(Math.round(percent)));
  fill.style.width = compacting ? "100%" : `${Math.min(percent, 100)}%`;
  tick.hidden = false;
  tick.style.left = `${threshold.at}%`;
  tick.title = threshold.tick;
  tick.dataset.tip = tick.title; // drawn by CSS at once; the native title comes late
  tick.setAttribute("aria-label", tick.title);
  text.dataset.compacting = compacting ? "true" : "false";
  text.textContent = compacting
    ? t(stage === "loop" ? "statusCompactingLoop" : "statusCompacting")
    : t("status", {
        used: num(stats.usedTokens),
        max: num(stats.maxTokens),
        threshold: threshold.status,
        n: stats.compactions ?? 0,
      });
  renderBreakdown(stats);
}
