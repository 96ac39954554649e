"""The program names both classifications of a shell line know (`categories`, `actions`)."""

from __future__ import annotations

READERS = {"cat", "head", "tail", "less", "more", "nl", "bat", "view", "xxd", "od", "strings"}
LISTERS = {"ls", "tree", "dir", "du", "stat", "pwd"}
SEARCHERS = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "locate", "fd"}
# Words that run the next word as the program (`sudo make`, `env X=1 pytest`).
PREFIXES = {"sudo", "time", "nice", "nohup", "command", "builtin", "env", "exec"}
