"""The readers' shell-line classification: category and files of a command line."""

from __future__ import annotations

import pytest

from agentlens.shell.categories import categorize_command, files_in_command
from agentlens.trajectory import ToolCategory as C


@pytest.mark.parametrize(
    ("command", "category"),
    [
        ("cat src/a.py", C.READ_FILE),
        ("head -n 20 src/x.py", C.READ_FILE),
        ("sed -n '10,40p' a.py", C.READ_FILE),
        ("nl -ba file.py | sed -n 10,20p", C.READ_FILE),
        ("ls -la /repo", C.LIST_DIR),
        ("find . -type d", C.LIST_DIR),
        ("tree -L 2", C.LIST_DIR),
        ("grep -rn 'def foo' src", C.SEARCH),
        ("rg foo", C.SEARCH),
        ("find . -name '*.py'", C.SEARCH),
        ("find . -type f -name '*.py' | xargs grep -l foo", C.SEARCH),
        ("ls -R | grep -i validators", C.SEARCH),
        ("git grep -n foo", C.SEARCH),
        ("grep foo a.py | wc -l", C.SEARCH),
        ("sed -i 's/a/b/' a.py", C.EDIT),
        ("echo x >> a.txt", C.EDIT),
        ("cat <<'EOF' > new.py\nimport os\nprint('x && y')\nEOF", C.CREATE_FILE),
        ("python reproduce.py", C.RUN_COMMAND),
        ("cd /repo && python -m pytest tests/x.py", C.RUN_COMMAND),
        ("python x.py 2>&1 | tail -20", C.RUN_COMMAND),
        ("cat a | python", C.RUN_COMMAND),
        ("cd /repo && cat a.py", C.READ_FILE),
        ("FOO=1 sudo cat x", C.READ_FILE),
        ("echo 'unbalanced", C.RUN_COMMAND),
        ("grep ';' a.py", C.SEARCH),  # a quoted operator is a word
        ("# look again\ngrep -nC 5 'x' a.py", C.SEARCH),  # a comment is not a command
        ("echo a#b > notes.txt", C.CREATE_FILE),
        ("grep -n 'a | python' a.py", C.SEARCH),
        ("", C.RUN_COMMAND),
        ("cat <<EOF > a.py\nx = 1\nEOF\npython a.py", C.CREATE_FILE),
        ("python - <<'PY'\nprint('cat x')\nPY", C.RUN_COMMAND),
        ("cat <<EOF", C.READ_FILE),  # unterminated: no body, nothing written
    ],
)
def test_categorize_command(command: str, category: C) -> None:
    assert categorize_command(command) is category


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("head -n 20 src/x.py", ["src/x.py"]),
        ("grep -rn foo src tests", ["src", "tests"]),
        ("cat a.py > b.py", ["b.py", "a.py"]),
        ("python x.py 2>&1 > /dev/null", ["x.py"]),
        ("cat <<'EOF' > new.py\nx = 1\nEOF", ["new.py"]),
        ("cat <<EOF > a.py\ncat b.py\nEOF\npython a.py", ["a.py"]),
    ],
)
def test_files_in_command(command: str, files: list[str]) -> None:
    assert files_in_command(command) == files
