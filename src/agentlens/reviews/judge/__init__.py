"""Single-run LLM-judge reviews on five dimensions (spec §5)."""
