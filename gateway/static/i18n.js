// The console's strings in Chinese and English: follows navigator.language, switchable in
// the header, the choice remembered in localStorage ("compaction.lang").

const STRINGS = {
  zh: {
    title: "上下文压缩控制台",
    sessions: "会话",
    newSession: "新会话",
    importTranscript: "导入对话记录",
    noSessions: "还没有会话",
    noSession: "请选择或新建一个会话",
    sessionTokens: "{used}/{max} tokens",
    sessionCompactions: "已压缩 {n} 次",
    toFull: "查看完整历史",
    toCompacted: "切换回压缩视图",
    fullBanner: "当前显示完整历史（含已压缩消息）",
    compactedTag: "已压缩",
    prunedTag: "工具输出已裁剪",
    summaryTag: "压缩摘要",
    restoredTag: "已撤销的摘要",
    summaryCard: "之前对话的摘要",
    toolCall: "调用工具",
    toolResult: "工具结果",
    pending: "等待回复…",
    sendFailed: "发送失败：{error}",
    placeholder: "输入消息，或 /compact [重点] 手动压缩（Enter 发送，Shift+Enter 换行）",
    send: "发送",
    compactButton: "/compact",
    compactTitle: "手动压缩当前会话的上下文",
    status: "{used}/{max} tokens · {threshold} · 已压缩 {n} 次",
    thresholdStatus: "阈值 {t}%",
    budgetStatus: "预算 {b} tokens",
    statusCompacting: "正在压缩上下文...",
    statusCompactingLoop: "正在压缩当前任务的工具步骤...",
    thresholdTick: "自动压缩阈值 {t}%",
    budgetTick: "自动压缩阈值 {b} tokens（Token 预算）",
    breakdownTitle: "Token 分解（估算）",
    bdInput: "输入（用户）",
    bdOutput: "输出（助手）",
    bdTool: "工具",
    bdSystem: "系统",
    bdHistory: "历史对话",
    bdLoop: "工具循环",
    bdState: "当前状态",
    bdLastCall: "上次调用：输入 {i} · 输出 {o} · 共 {total}",
    bubbleStart: "正在压缩上下文...",
    bubbleDone: "上下文已压缩 · 移除 {n} 条消息 · 节省 {p}% token",
    // the loop stage (docs/architecture.md, "The job"): the current task's tool steps
    bubbleStartLoop: "正在压缩当前任务的工具步骤...",
    bubbleDoneLoop: "工具步骤已压缩 · {n} 条消息并入执行摘要 · 节省 {p}% token",
    bubblePruned: "，裁剪 {n} 条工具输出",
    bubbleOffline: "离线摘要：未经模型，摘录自原消息",
    viewSummary: "查看摘要",
    undo: "撤销",
    bubbleFailed: "压缩失败：{reason}",
    bubbleFailedTail: "可继续原对话或",
    // a failure's code (docs/architecture.md, "Error codes"); the server's text is its detail
    fail_no_auxiliary_model: "没有可用的辅助模型。请在「设置」中为 Agent 选择辅助模型，或设置默认辅助渠道",
    fail_no_chat_model: "没有可用的对话模型。请在「设置」中添加模型渠道",
    fail_llm_error: "辅助模型返回了错误",
    fail_llm_timeout: "辅助模型响应超时",
    fail_summary_too_short: "辅助模型返回的摘要过短",
    fail_summary_too_long: "辅助模型返回的摘要过长",
    fail_nothing_to_compact: "没有可压缩的内容",
    fail_message_too_large: "这条消息本身就达到了压缩阈值，请拆分成几条较短的消息",
    fail_system_prompt_too_large: "系统提示过长：仅系统提示就达到了压缩阈值，压缩也无法为对话腾出空间，请精简系统提示",
    fail_session_not_found: "找不到这个会话",
    fail_invalid_request: "请求无效",
    fail_invalid_config: "压缩参数的配置无效",
    fail_db_error: "数据库出错",
    fail_lock_lost: "压缩期间会话已被另一次运行改动，本次没有写入",
    fail_worker_lost: "执行压缩的工作进程中途停止了",
    fail_compaction_disabled: "服务已关闭上下文压缩",
    fail_internal_error: "服务内部错误",
    fail_busy: "这个会话正有一轮对话在进行，请等它完成后再发送",
    fail_reply_too_long: "对话模型的回复过长，没有保存",
    fail_forbidden_host: "网关拒绝了这个地址（Host）",
    fail_forbidden_origin: "网关拒绝了来自其他网页的请求",
    fail_redis: "Redis 出错",
    fail_timeout: "等待超时",
    fail_draft_stale: "草稿写好之后会话已有变化，草稿不再适用，没有应用。请重新生成或重新压缩",
    fail_draft_closed: "这份草稿已应用、已放弃或已过期",
    // review before apply (review.js)
    previewButton: "预览",
    previewTitle: "先生成压缩草稿，审阅、修改后再应用",
    reviewTitle: "压缩预览：应用前可以修改摘要",
    reviewFigures: "约 {before} → {after} tokens · 替换 {n} 条消息",
    reviewReceipt: "保留 {kept}/{total} 个精确标识 · 你的 {users} 条指令中 {verbatim} 条原文保留",
    reviewSummaryLabel: "摘要（可编辑）",
    reviewFocus: "重新生成时的重点…",
    reviewApply: "应用",
    reviewRegenerate: "重新生成",
    reviewDiscard: "放弃",
    reviewWorking: "正在按新的重点生成草稿…",
    openSettings: "打开设置",
    newChat: "开新对话",
    bubbleSkipped: "未压缩（{code}）",
    skip_already_pending: "已有压缩在排队，将随它一起完成",
    skip_lock_held: "另一次压缩正在进行",
    skip_nothing_to_compact: "没有可压缩的内容",
    skip_below_threshold: "上下文未超过阈值，无需压缩",
    skip_suppressed: "刚刚压缩过，暂不重复",
    skip_not_smaller: "压缩结果并不比原内容小，未应用，历史保持不变",
    bubbleRestored: "已撤销压缩 · 恢复 {n} 条消息",
    drawerTitle: "压缩摘要",
    close: "关闭",
    summaryMissing: "找不到这条摘要（可能已被撤销）。",
    // the receipt (docs/architecture.md, "Receipt")
    receiptTitle: "这次压缩保留了什么",
    priceInput: "输入价格（美元 / 百万 tokens，可留空）",
    priceOutput: "输出价格（美元 / 百万 tokens，可留空）",
    pricesShown: "输入 ${i} · 输出 ${o} / 百万 tokens",
    receiptKept: "保留了 {total} 个精确标识符中的 {kept} 个",
    receiptNotKept: " · {n} 个未保留：",
    receiptFolded: "你的 {n} 条指令已并入摘要：这些约束现在保存在摘要里。",
    receiptVerbatim: "你在这段对话中的 {total} 条消息有 {v} 条原样保留。",
    receiptAux: "辅助模型：输入 {input} tokens，输出 {output} tokens",
    receiptNoAux: "辅助模型：未调用",
    receiptCost: "费用：本次 {run} · 本会话共 {session}",
    receiptNoPrice: "费用：该通道未设置价格",
    receiptMissing: "这次压缩没有记录收据。",
    kind_errors: "错误",
    kind_commands: "命令",
    kind_paths: "路径",
    kind_urls: "链接",
    kind_ids: "标识",
    kind_values: "数值",
    settings: "设置",
    agentSection: "Agent 上下文压缩",
    noAgent: "当前会话没有 Agent。",
    auxModel: "辅助模型",
    auxInherit: "继承全局默认",
    auxNotAux: "（不是辅助渠道）",
    strategy: "压缩策略",
    strategyLossy: "lossy（有损摘要）",
    strategyMore: "更多策略开发中",
    threshold: "触发阈值",
    thresholdUnused: "未使用：Token 预算（{v} tokens）取代了百分比阈值",
    tokenBudget: "Token 预算（固定阈值）",
    tokenBudgetHint: "设置后，上下文达到这个 token 数（最多为整个窗口）时压缩，取代百分比阈值。",
    budgetNone: "无，按百分比阈值",
    budgetTokens: "{v} tokens",
    protectHead: "保护头部消息数",
    inherit: "继承（留空）",
    effective: "生效：{v}（{src}）",
    srcAgent: "Agent 自身",
    srcSystem: "系统设置 {s}",
    srcDefault: "默认渠道",
    srcNone: "无（没有自己的渠道，也没有默认渠道）",
    save: "保存",
    saved: "已保存",
    channels: "模型渠道",
    noChannels: "还没有渠道",
    addChannel: "添加渠道",
    editChannel: "编辑渠道 {name}",
    name: "名称",
    provider: "提供方",
    model: "模型",
    baseUrl: "Base URL",
    apiKey: "API Key",
    apiKeyKeep: "已保存 {mask}，留空不变",
    auxiliary: "可作为辅助模型",
    isDefault: "设为默认辅助渠道",
    defaultTag: "默认",
    auxTag: "辅助",
    edit: "编辑",
    makeDefault: "设为默认",
    remove: "删除",
    cancel: "取消",
    forceRemove: "服务器拒绝删除：\n{error}\n\n仍要强制删除吗？",
    removed: "已删除渠道 {name}",
    tokenTitle: "需要网关令牌",
    tokenHelp: "网关要求访问令牌（COMPACTION_GATEWAY_TOKEN）。它只保存在本浏览器中。",
    tokenLabel: "令牌",
    ok: "确定",
    connected: "已连接",
    reconnecting: "重连中…",
    language: "语言",
    importFailed: "导入失败：{error}",
    imported: "已导入 {n} 条消息",
    you: "你",
    assistant: "助手",
    system: "系统",
    tool: "工具",
    // the console shows what happened (issue 23): titles, the folded view, keyboard
    skipToInput: "跳到消息输入框",
    renameSession: "重命名会话",
    renameLabel: "会话名称（留空则显示 ID）",
    summaryOf: "之前 {n} 条消息的摘要",
    summaryLabel: "摘要",
    bubblePrunedOnly: "已裁剪 {n} 条旧的工具输出 · 节省 {p}% token",
    bubbleUndone: "已撤销",
  },
  en: {
    title: "Context compaction console",
    sessions: "Sessions",
    newSession: "New session",
    importTranscript: "Import transcript",
    noSessions: "No sessions yet",
    noSession: "Pick or create a session",
    sessionTokens: "{used}/{max} tokens",
    sessionCompactions: "compacted {n} time{s}",
    toFull: "Show the full history",
    toCompacted: "Switch back to the compacted view",
    fullBanner: "Showing the full history (compacted messages included)",
    compactedTag: "compacted",
    prunedTag: "tool output pruned",
    summaryTag: "compaction summary",
    restoredTag: "undone summary",
    summaryCard: "Summary of the earlier conversation",
    toolCall: "tool call",
    toolResult: "tool result",
    pending: "waiting for the reply…",
    sendFailed: "Not sent: {error}",
    placeholder:
      "Type a message, or /compact [focus] to compact (Enter sends, Shift+Enter new line)",
    send: "Send",
    compactButton: "/compact",
    compactTitle: "Compact this session's context now",
    status: "{used}/{max} tokens · {threshold} · compacted {n} time{s}",
    thresholdStatus: "threshold {t}%",
    budgetStatus: "budget {b} tokens",
    statusCompacting: "Compacting context...",
    statusCompactingLoop: "Compacting the task's tool steps...",
    thresholdTick: "Auto-compaction threshold {t}%",
    budgetTick: "Auto-compaction at {b} tokens (token budget)",
    breakdownTitle: "Token breakdown (estimated)",
    bdInput: "input (user)",
    bdOutput: "output (assistant)",
    bdTool: "tool",
    bdSystem: "system",
    bdHistory: "history",
    bdLoop: "tool loop",
    bdState: "current state",
    bdLastCall: "last call: input {i} · output {o} · total {total}",
    bubbleStart: "Compacting context...",
    bubbleDone: "Context compacted · {n} message{s} removed · {p}% tokens saved",
    bubbleStartLoop: "Compacting the task's tool steps…",
    bubbleDoneLoop:
      "Tool steps compacted · {n} message{s} into an execution summary · {p}% tokens saved",
    bubblePruned: ", {n} tool output{s} pruned",
    bubbleOffline: "offline summary: quoted from the turns, not written by a model",
    viewSummary: "View summary",
    undo: "Undo",
    bubbleFailed: "Compaction failed: {reason}",
    bubbleFailedTail: "You can continue this conversation or",
    fail_no_auxiliary_model:
      "no auxiliary model to write the summary. Choose one for the agent in Settings, or make a channel the default auxiliary one there",
    fail_no_chat_model: "no chat model. Add a model channel in Settings",
    fail_llm_error: "the auxiliary model answered an error",
    fail_llm_timeout: "the auxiliary model did not answer in time",
    fail_summary_too_short: "the auxiliary model's summary was too short",
    fail_summary_too_long: "the auxiliary model's summary was too long",
    fail_nothing_to_compact: "nothing to compact",
    fail_message_too_large: "this message alone reaches the compaction threshold: split it into shorter ones",
    fail_system_prompt_too_large: "the system prompt alone reaches the compaction threshold: no compaction can make room for the conversation; shorten the system prompt",
    fail_session_not_found: "no such session",
    fail_invalid_request: "the request was invalid",
    fail_invalid_config: "the compaction settings are invalid",
    fail_db_error: "the database failed",
    fail_lock_lost: "another run changed the session meanwhile; nothing was written",
    fail_worker_lost: "the worker running it stopped before it finished",
    fail_compaction_disabled: "compaction is switched off on the server",
    fail_internal_error: "an internal error",
    fail_busy: "a turn of this session is still running: send again once it is done",
    fail_reply_too_long: "the chat model's reply was too long; nothing of it was stored",
    fail_forbidden_host: "the gateway refused this address (Host)",
    fail_forbidden_origin: "the gateway refused a request from another page",
    fail_redis: "Redis failed",
    fail_timeout: "timed out",
    fail_draft_stale:
      "The session changed since this draft and it no longer fits: not applied. Regenerate it or compact again",
    fail_draft_closed: "This draft was applied, discarded or has expired",
    // review before apply (review.js)
    previewButton: "Preview",
    previewTitle: "Draft a compaction to read and edit before it is applied",
    reviewTitle: "Compaction preview: edit the summary before applying it",
    reviewFigures: "~{before} → {after} tokens · replaces {n} message{s}",
    reviewReceipt:
      "Keeps {kept} of {total} exact identifiers · {verbatim} of your {users} instructions verbatim",
    reviewSummaryLabel: "Summary (editable)",
    reviewFocus: "Focus for a new draft…",
    reviewApply: "Apply",
    reviewRegenerate: "Regenerate",
    reviewDiscard: "Discard",
    reviewWorking: "Writing a new draft with that focus…",
    openSettings: "Open Settings",
    newChat: "start a new one",
    bubbleSkipped: "Not compacted ({code})",
    skip_already_pending: "A compaction is already queued; this one joins it",
    skip_lock_held: "Another compaction is running",
    skip_nothing_to_compact: "Nothing to compact",
    skip_below_threshold: "Below the threshold: nothing to do",
    skip_suppressed: "Compacted a moment ago: not again yet",
    skip_not_smaller: "Not applied: the result was not smaller; the history is unchanged",
    bubbleRestored: "Compaction undone · {n} message{s} restored",
    drawerTitle: "Compaction summary",
    close: "Close",
    summaryMissing: "This summary is gone (the compaction may have been undone).",
    // the receipt (docs/architecture.md, "Receipt")
    receiptTitle: "What this compaction kept",
    priceInput: "Input price (USD per million tokens, optional)",
    priceOutput: "Output price (USD per million tokens, optional)",
    pricesShown: "${i} in / ${o} out per Mtok",
    receiptKept: "Kept {kept} of {total} exact identifiers",
    receiptNotKept: " · {n} not kept:",
    receiptFolded: "{n} of your instructions were folded into the summary: constraints now live there.",
    receiptVerbatim: "{v} of your {total} messages in this span are kept word for word.",
    receiptAux: "Auxiliary model: {input} input tokens, {output} output tokens",
    receiptNoAux: "Auxiliary model: not called",
    receiptCost: "Cost: {run} this compaction · {session} this session",
    receiptNoPrice: "Cost: the channel has no price set",
    receiptMissing: "This compaction recorded no receipt.",
    kind_errors: "errors",
    kind_commands: "commands",
    kind_paths: "paths",
    kind_urls: "URLs",
    kind_ids: "ids",
    kind_values: "values",
    settings: "Settings",
    agentSection: "Agent context compaction",
    noAgent: "This session has no agent.",
    auxModel: "Auxiliary model",
    auxInherit: "Inherit the global default",
    auxNotAux: " (not an auxiliary channel)",
    strategy: "Strategy",
    strategyLossy: "lossy (summary)",
    strategyMore: "more strategies in development",
    threshold: "Threshold",
    thresholdUnused: "Not used: the token budget ({v} tokens) replaces the percentage",
    tokenBudget: "Token budget (a fixed threshold)",
    tokenBudgetHint:
      "When set, compaction starts at this many tokens (at most the whole window) instead of at the percentage threshold.",
    budgetNone: "none, the percentage threshold applies",
    budgetTokens: "{v} tokens",
    protectHead: "Protected head messages",
    inherit: "Inherit (blank)",
    effective: "Effective: {v} ({src})",
    srcAgent: "the agent's own",
    srcSystem: "system setting {s}",
    srcDefault: "the default channel",
    srcNone: "none (no channel of its own and no default)",
    save: "Save",
    saved: "Saved",
    channels: "Model channels",
    noChannels: "No channels yet",
    addChannel: "Add a channel",
    editChannel: "Edit channel {name}",
    name: "Name",
    provider: "Provider",
    model: "Model",
    baseUrl: "Base URL",
    apiKey: "API key",
    apiKeyKeep: "saved {mask}; leave blank to keep",
    auxiliary: "Can be an auxiliary model",
    isDefault: "Make it the default auxiliary channel",
    defaultTag: "default",
    auxTag: "auxiliary",
    edit: "Edit",
    makeDefault: "Make default",
    remove: "Remove",
    cancel: "Cancel",
    forceRemove: "The server refused:\n{error}\n\nRemove it anyway?",
    removed: "Channel {name} removed",
    tokenTitle: "Gateway token needed",
    tokenHelp:
      "The gateway asks for its access token (COMPACTION_GATEWAY_TOKEN). It stays in this browser.",
    tokenLabel: "Token",
    ok: "OK",
    connected: "connected",
    reconnecting: "reconnecting…",
    language: "Language",
    importFailed: "Import failed: {error}",
    imported: "{n} message{s} imported",
    you: "you",
    assistant: "assistant",
    system: "system",
    tool: "tool",
    // the console shows what happened (issue 23): titles, the folded view, keyboard
    skipToInput: "Skip to the message input",
    renameSession: "Rename the session",
    renameLabel: "Session name (blank: its id)",
    summaryOf: "Summary of {n} earlier message{s}",
    summaryLabel: "summary",
    bubblePrunedOnly: "Pruned {n} old tool output{s} · {p}% tokens saved",
    bubbleUndone: "undone",
  },
};

const KEY = "compaction.lang";
const listeners = [];

function initial() {
  const saved = localStorage.getItem(KEY);
  if (saved && STRINGS[saved]) return saved;
  return (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
}

let lang = initial();

export function getLang() {
  return lang;
}

export function setLang(next) {
  if (!STRINGS[next] || next === lang) return;
  lang = next;
  localStorage.setItem(KEY, next);
  applyStatic();
  listeners.forEach((fn) => fn(next));
}

export function onLangChange(fn) {
  listeners.push(fn);
}

/** The string `key` in the current language, `{name}` placeholders filled from `params`. */
export function t(key, params = {}) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  // {s}: the English plural ending of a count {n} ("1 time", "2 times").
  const all = "n" in params ? { s: Number(params.n) === 1 ? "" : "s", ...params } : params;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in all ? String(all[name]) : m));
}

export function has(key) {
  return key in STRINGS.en;
}

/** A failure's code in this language, from the table (`fail_<code>`); an unknown code as it is. */
export function failureReason(code) {
  return has(`fail_${code}`) ? t(`fail_${code}`) : code || "?";
}

/** An API or socket error for a person: its code's sentence when the table has one (the
 * server's message, in English, only as the detail); else the server's message. */
export function errorText(code, message) {
  if (!has(`fail_${code}`)) return message || code || "error";
  return message ? `${t(`fail_${code}`)} (${message})` : t(`fail_${code}`);
}

/** The codes whose fix is a setting: the console points at its Settings panel. */
export const SETTINGS_FIXES = new Set(["no_auxiliary_model", "no_chat_model"]);

/** Numbers as the language writes them (12,345). */
export function num(value) {
  return Number(value ?? 0).toLocaleString(lang === "zh" ? "zh-CN" : "en-US");
}

/** Fills the static markup: data-i18n (text), data-i18n-title, data-i18n-placeholder. */
export function applyStatic(root = document) {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  root.querySelectorAll("[data-i18n]").forEach((el) => (el.textContent = t(el.dataset.i18n)));
  root.querySelectorAll("[data-i18n-title]").forEach((el) => (el.title = t(el.dataset.i18nTitle)));
  root
    .querySelectorAll("[data-i18n-placeholder]")
    .forEach((el) => (el.placeholder = t(el.dataset.i18nPlaceholder)));
  root
    .querySelectorAll("[data-i18n-aria]")
    .forEach((el) => el.setAttribute("aria-label", t(el.dataset.i18nAria)));
}
