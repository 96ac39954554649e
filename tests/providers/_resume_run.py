"""A run of N chat calls recorded in a ledger; the resume test kills it half-way (subprocess)."""

from __future__ import annotations

import sys

from agentlens.providers import ChatRequest, RunLedger, get_provider


def main(model: str, ledger_path: str, n: int, run_id: str) -> None:
    ledger = RunLedger(ledger_path, run_id=run_id)
    client = get_provider(model, role="judge", ledger=ledger)
    requests = [ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]) for i in range(n)]
    result = client.run(client.map(client.chat, requests))
    stats = client.stats
    print(result.summary(), stats.calls, stats.ledger_hits, stats.cache_hits, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
