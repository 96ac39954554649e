"""Guideline readings of steps that are not code reading or editing, for the `paper` labeler.

Each rule reads labeling-guideline.md for tools and commands the reader files under no code
category (ToolCategory.OTHER) or under a plain shell run:

* a clarifying question to the user (Claude Code `AskUserQuestion`, Cline `ask_followup_question`,
  a `chat_npc` message that asks) is E: "gathering information about … the problem";
* a message that only reports or acknowledges (no question) is O: bookkeeping;
* delegating exploration to a subagent (Claude Code `Task` with `subagent_type` Explore) is E;
* in a non-coding task, the requested action itself — creating a tracker record (`bd create`,
  `gh issue create`), mailing a file — is I: "making the change that solves the task";
* asking which toolchain is installed (`which javac`, `java -version`) once the run has changed
  files is O: "environment … setup that neither explores nor … checks the solution" (before any
  change it is probing the problem, E, by the ordinary rules);
* SWE-agent turns whose output format broke run the model's prose (`DISCUSSION …`) as the command
  while the intended command stands in the agent's words: the step's intent is that command
  (`intended_command`); prose alone is reasoning, O.
"""

from __future__ import annotations

import re
import shlex

from agentlens.process.stages import Stage
from agentlens.trajectory import Step

ASK_USER_TOOLS = {
    "askuserquestion",
    "ask_user",
    "ask_user_question",
    "ask_followup_question",
    "request_user_input",
}
SUBAGENT_TOOLS = {"task", "agent"}
EXPLORING_SUBAGENTS = {"explore", "explorer", "research", "researcher"}
# a command's start: the line's start, or after `&&`, `||`, `;`, `|`
START = r"(?:^|[;&|]\s*)"
TRACKER_CREATE = re.compile(
    START + r"(?:bd|beads)\s+create\b|" + START + r"(?:gh|glab|jira)\s+issue\s+create\b"
)
MAIL_ATTACHMENT = re.compile(START + r"(?:mail|mailx|mutt)\b[^|;&]*\s-[aA]\s")
MESSAGE = re.compile(r"^\s*chat_npc\s")
TOOLCHAIN_PROBE = re.compile(
    r"^\s*(?:which|whereis|type|command\s+-v)\s+[\w.+-]+\s*$"
    r"|^\s*[\w.+-]+\s+(?:--version|-version|-V)\s*$"
)
# SWE-agent's own commands, and programs a model commonly puts first on a command line.
INTENDED_PROGRAMS = {
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_file", "search_dir",
    "find_file", "submit", "ls", "cat", "grep", "find", "head", "tail", "python", "python3",
    "pytest", "javac", "java", "mvn", "gradle", "./gradlew", "git", "rm", "mkdir", "cd", "bash",
}  # fmt: skip
FENCE = re.compile(r"^\s*```\w*\s*$", re.MULTILINE)


def tool_stage(step: Step) -> Stage | None:
    """The stage of a non-shell tool the reader filed under no category, if a rule covers it."""
    name = (step.tool_name or "").strip().lower()
    if name in ASK_USER_TOOLS:
        return "E"  # a clarifying question gathers information about the task
    if name in SUBAGENT_TOOLS:
        kind = str(step.arguments.get("subagent_type") or "").lower()
        return "E" if kind in EXPLORING_SUBAGENTS else None
    return None


def command_stage(command: str, *, changed: bool) -> Stage | None:
    """The stage of a shell line whose intent is not code work, if a rule covers it."""
    if TRACKER_CREATE.search(command) or MAIL_ATTACHMENT.search(command):
        return "I"  # the non-coding task's requested action
    if MESSAGE.match(command):
        return "E" if "?" in _message_text(command) else "O"
    if changed and TOOLCHAIN_PROBE.match(command):
        return "O"
    return None


def _message_text(command: str) -> str:
    """The text of `chat_npc NAME "text"` (everything after the name)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return " ".join(words[2:])


def intended_command(step: Step) -> str | None:
    """The command in the agent's words of an SWE-agent `DISCUSSION` step, if they hold one."""
    text = FENCE.sub("", step.text or "").strip()
    first = text.split(maxsplit=1)[0] if text else ""
    return text if first in INTENDED_PROGRAMS else None
