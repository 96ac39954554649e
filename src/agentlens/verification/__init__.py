"""Formal verification of a repository's final state (spec-reviews §3): the verifiers, and the
sandbox that runs their commands (and the scenario agents' commands) in a scratch copy with a clean
environment. It serves scenario runs and `agentlens verify` alike and knows neither."""

VERIFY_KIND = "agentlens.verify/1"
"""The kind of a file of formal results (`agentlens verify --out`, a scenario run's
`OUT/verify.json`), which `compare --a-verify` and `qi --verify` read."""
