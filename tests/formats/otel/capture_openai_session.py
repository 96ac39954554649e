"""Make `openinference-openai-session.otlp.json`: a real OpenTelemetry capture of a short
tool-calling session, for the OTLP reader's test.

The `openai` client, instrumented by OpenInference (`openinference-instrumentation-openai`),
talks to a local llama.cpp server (the test model, SmolLM2-135M, `chatml-function-calling`).
The session runs under an AGENT span; each tool really runs (on a scratch folder) under a TOOL
span with OpenInference's attributes. The SDK's own OTLP encoder turns the finished spans into
an `ExportTraceServiceRequest`, written as OTLP JSON. Beside it, `...session.json` records what
the client itself saw (each response's usage and tool calls, each tool's result), which the
test compares with what the reader makes of the spans.

    python tests/formats/otel/capture_openai_session.py  # needs: pip install openai
        opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
        openinference-instrumentation-openai llama-cpp-python[server]
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.llm import start_llama_server

HERE = Path(__file__).parent
MODEL = Path.home() / ".cache/agentlens/test-models/SmolLM2-135M-Instruct.Q4_1.q4_0.gguf"
TOOLS = [
    {"type": "function", "function": {
        "name": name, "description": text,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}}
    for name, text in (("list_files", "List the files in a folder."),
                       ("read_file", "Read a text file."))
]  # fmt: skip


def run_tool(name: str, arguments: str, folder: Path) -> tuple[str, bool]:
    try:
        path = folder / Path(json.loads(arguments).get("path", ".")).name
        if name == "list_files":
            return "\n".join(sorted(p.name for p in folder.iterdir())), False
        return path.read_text(), False
    except (OSError, ValueError, AttributeError) as exc:
        return f"error: {exc}", True


def session(client: OpenAI, tracer: trace.Tracer, folder: Path) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent. Use the tools."},
        {"role": "user", "content": "List the files in the project, then read notes.txt."},
    ]
    record: list[dict[str, object]] = []
    for forced in ("list_files", "read_file", None):
        choice = {"type": "function", "function": {"name": forced}} if forced else "none"
        response = client.chat.completions.create(
            model="smollm2-135m",
            messages=messages,
            tools=TOOLS,
            tool_choice=choice,  # type: ignore[arg-type]
            max_tokens=48,
            temperature=0,
        )
        message = response.choices[0].message
        calls = message.tool_calls or []
        usage = response.usage
        record.append({"llm": {"prompt_tokens": usage.prompt_tokens if usage else 0,
                               "completion_tokens": usage.completion_tokens if usage else 0,
                               "content": message.content,
                               "tool_calls": [{"id": c.id, "name": c.function.name,
                                               "arguments": c.function.arguments} for c in calls]}})  # fmt: skip
        said = message.model_dump(exclude_none=True)
        messages.append({**said, "content": message.content or ""})  # the template needs one
        for call in calls:
            with tracer.start_as_current_span(call.function.name) as span:
                span.set_attribute("openinference.span.kind", "TOOL")
                span.set_attribute("tool.name", call.function.name)
                span.set_attribute("tool_call.id", call.id)
                span.set_attribute("input.value", call.function.arguments)
                output, failed = run_tool(call.function.name, call.function.arguments, folder)
                span.set_attribute("output.value", output)
                if failed:
                    span.set_status(trace.Status(trace.StatusCode.ERROR, output))
            record.append({"tool": {"id": call.id, "output": output, "is_error": failed}})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    return record


def otlp_json(document: dict[str, Any]) -> dict[str, Any]:
    """Protobuf's JSON as OTLP/JSON wants it: trace and span ids in hex, not base64."""
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return document


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agentlens-otel-capture"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("agentlens.capture")
    port = 18000 + os.getpid() % 1000
    server, _ = start_llama_server(
        MODEL, port=port, extra=["--chat_format", "chatml-function-calling"]
    )
    try:
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="local")
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            (folder / "notes.txt").write_text("Remember to run the tests.\n")
            (folder / "main.py").write_text("print('hello')\n")
            with tracer.start_as_current_span("coding-agent") as agent:
                agent.set_attribute("openinference.span.kind", "AGENT")
                agent.set_attribute("agent.name", "capture-agent")
                record = session(client, tracer, folder)
    finally:
        server.terminate()
        server.wait()
    provider.shutdown()
    document = otlp_json(
        MessageToDict(encode_spans(exporter.get_finished_spans()), use_integers_for_enums=True)
    )
    (HERE / "openinference-openai-session.otlp.json").write_text(json.dumps(document, indent=1))
    (HERE / "openinference-openai-session.session.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
