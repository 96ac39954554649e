"""`python -m agentlens …`: the `agentlens` command, for environments without the script on PATH."""

from agentlens.cli import main

raise SystemExit(main())
