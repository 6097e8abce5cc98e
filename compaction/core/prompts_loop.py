"""The loop's execution-summary prompts (docs/architecture.md, "The algorithm"): the older steps
of the current task's tool loop, after the latest user request, summarized for the agent that
keeps working on it. First-time and update templates in Chinese and English; the quoting rule
and the focus line are the history's (``compaction/core/prompts.py``)."""

from __future__ import annotations

from compaction.core.messages import Message
from compaction.core.prompts import Language, PromptSet, structure

#: Every loop summary starts with this marker: what the main model reads, and what tells a
#: loop summary from the history's when the text is all one has (``SUMMARY_MARKER``).
LOOP_MARKER = "[LOOP COMPACTION]"

#: The execution summary's headings, in order: what was called, what came back, what is done,
#: what failed, what the agent was about to do.
LOOP_HEADINGS: dict[Language, dict[str, str]] = {
    "zh": {
        "calls": "## 工具调用与结果",
        "done": "## 已完成",
        "failed": "## 失败与错误",
        "state": "## 当前状态与关键值",
        "next": "## 下一步",
    },
    "en": {
        "calls": "## Tool calls and results",
        "done": "## Done",
        "failed": "## Failed",
        "state": "## Current state and key values",
        "next": "## Next step",
    },
}
_GUIDANCE: dict[Language, dict[str, str]] = {
    "zh": {
        "calls": "[按顺序列出调用了哪些工具、关键参数（路径、命令、ID）、返回了什么]",
        "done": "[已经完成的步骤及其具体结果]",
        "failed": "[失败或放弃的调用：原样的错误消息、尝试过什么，避免重复]",
        "state": "[修改过的文件、得到的具体值、配置、当前假设]",
        "next": "[这些步骤被压缩时，智能体正准备做什么]",
    },
    "en": {
        "calls": "[In order: which tools were called, the key arguments (paths, commands, ids), "
        "what came back]",
        "done": "[Steps completed, with their concrete results]",
        "failed": "[Calls that failed or were abandoned: the exact error message, what was "
        "tried, so it is not repeated]",
        "state": "[Files modified, concrete values found, configuration, current hypotheses]",
        "next": "[What the agent was about to do when these steps were compacted]",
    },
}

_FIRST: dict[Language, str] = {
    "zh": """为继续执行当前任务的智能体写一份执行摘要：用户的请求保留在上方原文中，
下面是此后较早的工具调用步骤，它们将被压缩，最近的步骤仍保留原文。

{quote_rule}

待摘要的步骤：
{turns}

请使用以下结构：

{structure}

目标 ~{budget} tokens。要具体，包含文件路径、命令、输出、错误消息、具体值。
仅写摘要正文，不要任何前缀或开场白。""",
    "en": """Write an execution summary for the agent that keeps working on the current task: the
user's request stays verbatim above; below are the earlier tool steps taken since, which are being
compacted. The most recent steps stay verbatim.

{quote_rule}

Steps to summarize:
{turns}

Use this structure:

{structure}

Target ~{budget} tokens. Be specific: include file paths, commands, output, error messages and
concrete values. Write only the summary body, with no preamble.""",
}

_UPDATE: dict[Language, str] = {
    "zh": """你正在更新当前任务的执行摘要。下方是上次压缩写下的执行摘要，
此后又执行了新的工具调用步骤，需要合并进去。

之前的执行摘要：
{previous}

{quote_rule}

待合并的新步骤：
{turns}

使用同样的结构更新。保留所有仍相关的调用、结果与错误，添加新步骤，
已完成的移到"已完成"，"下一步"写最新的打算。

{structure}

目标 ~{budget} tokens。
仅写摘要正文，不要任何前缀或开场白。""",
    "en": """You are updating the execution summary of the current task. Below is the summary
written by the previous compaction; new tool steps have run since and must be merged into it.

Previous execution summary:
{previous}

{quote_rule}

New steps to merge:
{turns}

Update it with the same structure. Keep every call, result and error that is still relevant, add
the new steps, move finished work to "Done", and write the latest intention under "Next step".

{structure}

Target ~{budget} tokens. Write only the summary body, with no preamble.""",
}

_PREFIX: dict[Language, str] = {
    "zh": f"{LOOP_MARKER} 为节省上下文空间，当前任务较早的工具调用步骤已被压缩。"
    "以下是执行摘要，最近的步骤仍保留原文；原始消息仍保存在数据库中。",
    "en": f"{LOOP_MARKER} Earlier tool steps of the current task were compacted to save context "
    "space. The execution summary below covers them; the most recent steps follow verbatim, and "
    "the original messages are kept in the database.",
}

#: The loop's execution summary.
LOOP = PromptSet(
    _FIRST,
    _UPDATE,
    {
        "zh": structure(LOOP_HEADINGS["zh"], _GUIDANCE["zh"]),
        "en": structure(LOOP_HEADINGS["en"], _GUIDANCE["en"]),
    },
    _PREFIX,
    LOOP_MARKER,
)


def is_loop_summary(message: Message) -> bool:
    """An execution summary: a summary (``is_summary``, set by the engine or the store, never
    inferred) whose text opens with ``LOOP_MARKER``."""
    return message.is_summary and message.content.startswith(LOOP_MARKER)
