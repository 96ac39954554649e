"""Reading back an OTel export of a long real session whose chat spans each carry the whole
conversation so far, as an instrumented API client records it (OpenInference's
`llm.input_messages.<i>.*`, or GenAI's `gen_ai.input.messages`): CPU seconds of the OTel reader
(best of `--repeat`) as the session grows: the whole read, which decodes an input quadratic in
the session's length, and the scan of each span's input for new user messages (`scan s`).

The spans come from `convert --to otel` of a real Claude Code session (`otel_writer`); each chat
span's input is then replaced by every message before it (user, assistant, tool results; texts cut
to `--chars` so that a few hundred turns stay a few MB). The session is repeated `--times` times
to make it longer.

    python benchmarks/otel_import.py [SESSION.jsonl] [--times 1 2 4 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import msgspec

from agentlens.formats import _otel_spans as o
from agentlens.formats import read_path
from agentlens.formats.otel import OtelReader
from agentlens.formats.otel_writer import to_otlp
from agentlens.trajectory import Trajectory
from cpu_timing import best

SESSION = (
    Path(__file__).resolve().parents[2]
    / "shared/data/formats/claude-code/marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
)


def longer(traj: Trajectory, times: int) -> Trajectory:
    steps = [msgspec.structs.replace(s) for _ in range(times) for s in traj.steps]
    return msgspec.structs.replace(traj, steps=steps)


def full_history(doc: dict[str, Any], style: str, chars: int) -> dict[str, Any]:
    """Each chat span's input replaced by the whole conversation before its response."""
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    history: list[tuple[str, str]] = []
    for span in spans:
        attrs = {a["key"]: a for a in span["attributes"]}
        value = {k: next(iter(a["value"].values())) for k, a in attrs.items()}
        if value.get("gen_ai.operation.name") == "execute_tool":
            history.append(("tool", str(value.get("gen_ai.tool.call.result", ""))[:chars]))
            continue
        if value.get("gen_ai.operation.name") != "chat":
            continue
        new = json.loads(value.pop("gen_ai.input.messages", "[]"))
        history += [("user", m["parts"][0]["content"][:chars]) for m in new]
        kept = [a for k, a in attrs.items() if k != "gen_ai.input.messages"]
        span["attributes"] = kept + _inputs(history, style)
        out = json.loads(value["gen_ai.output.messages"])[0]["parts"]
        said = " ".join(str(p.get("content") or p.get("name")) for p in out)
        history.append(("assistant", said[:chars]))
    return doc


def _inputs(history: list[tuple[str, str]], style: str) -> list[dict[str, Any]]:
    def attr(key: str, text: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": text}}

    if style == "genai":
        messages = [{"role": r, "parts": [{"type": "text", "content": t}]} for r, t in history]
        return [attr("gen_ai.input.messages", json.dumps(messages))]
    prefix = "llm.input_messages.{}.message."
    return [
        a
        for i, (role, text) in enumerate(history)
        for a in (attr(prefix.format(i) + "role", role), attr(prefix.format(i) + "content", text))
    ]


def timings(path: Path, repeat: int) -> tuple[float, float]:
    """CPU seconds of the whole read, and of `new_user_texts` over the LLM spans (decoded)."""
    data = path.read_bytes()
    llm = [s for s in o.spans_of(json.loads(data), "request 1") if s.kind == "llm"]
    whole = best(lambda: list(OtelReader().read(path, data)), repeat)
    return whole, best(lambda: [o.new_user_texts(s) for s in llm], repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("session", nargs="?", default=str(SESSION))
    parser.add_argument("--times", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--chars", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="/tmp/agentlens-otel-bench")
    args = parser.parse_args()
    (traj,) = read_path(args.session)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    print("style         turns  spans   MB   read s   scan s")
    for style in ("genai", "openinference"):
        for times in args.times:
            doc = full_history(to_otlp([longer(traj, times)]), style, args.chars)
            path = Path(args.out) / f"{style}-{times}.otlp.json"
            path.write_text(json.dumps(doc))
            spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
            turns = sum(s["name"].startswith("chat") for s in spans)
            whole, scan = timings(path, args.repeat)
            mb = path.stat().st_size / 1e6
            print(f"{style:13} {turns:5} {len(spans):6} {mb:5.1f} {whole:8.3f} {scan:8.4f}")


if __name__ == "__main__":
    main()
