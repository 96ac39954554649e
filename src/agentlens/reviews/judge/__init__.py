"""Single-run LLM-judge reviews (spec §5): the five `workflows` dimensions, and the four the
`testing` metric set adds (rubrics of our own: the paper names them only)."""
