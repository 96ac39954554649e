"""A real local HTTP server speaking the OpenAI chat API, scripted to misbehave.

Not a mock of the client: requests travel over TCP on 127.0.0.1. Each request pops the next
action from the script (default "ok"):
  ok | slow:<s> | 429:<retry-after s> | 500 | 400 | hang:<s> | cut | malformed
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROMPT_TOKENS = 10
COMPLETION_TOKENS = 5
# The next-token distribution served for log-prob requests: label variants " A"/"A" both present.
TOP_LOGPROBS = [("A", -0.5), (" A", -2.0), ("B", -1.5), ("C", -3.0), ("\n", -4.0)]


class FaultServer:
    def __init__(self, default_delay_s: float = 0.0) -> None:
        self.script: deque[str] = deque()
        self.requests: list[dict[str, Any]] = []
        self.default_delay_s = default_delay_s
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def model(self, name: str = "fault-model") -> str:
        return f"openai-compatible:{self.url}#{name}"

    def queue(self, *actions: str) -> None:
        self.script.extend(actions)

    def contents(self) -> list[str]:
        """The last user message of every request received, in arrival order."""
        return [
            r["body"]["messages"][-1]["content"] for r in self.requests if "messages" in r["body"]
        ]

    def settled_count(self, quiet_s: float = 0.5) -> int:
        """Number of requests once none is in flight and none has arrived for `quiet_s`."""
        count, since = -1, time.monotonic()
        while True:
            with self.lock:
                now_count, busy = len(self.requests), self.in_flight > 0
            if now_count != count or busy:
                count, since = now_count, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return count
            time.sleep(0.02)

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_action(self) -> str:
        with self.lock:
            return self.script.popleft() if self.script else "ok"


def _handler_for(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            action = server.next_action()
            with server.lock:
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                        "action": action,
                    }
                )
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                self._act(action, body)
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _act(self, action: str, body: dict[str, Any]) -> None:
            kind, _, arg = action.partition(":")
            if kind == "cut":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if kind == "hang":
                time.sleep(float(arg))
                return self._send(200, _answer(self.path, body))
            if kind == "429":
                return self._send(429, {"error": "slow down"}, {"retry-after": arg})
            if kind in ("500", "400"):
                return self._send(int(kind), {"error": {"message": f"scripted {kind}"}})
            if kind == "malformed":
                return self._send_raw(200, b'{"choices": [{"message": ')
            time.sleep(float(arg) if kind == "slow" else server.default_delay_s)
            self._send(200, _answer(self.path, body))

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers)

        def _send_raw(
            self, status: int, data: bytes, headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _answer(path: str, body: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/messages"):
        return _anthropic_answer(body)
    question = body["messages"][-1]["content"]
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": f"re: {question}"},
    }
    if body.get("logprobs"):
        top = [
            {"token": t, "logprob": lp} for t, lp in TOP_LOGPROBS[: body.get("top_logprobs", 20)]
        ]
        choice["logprobs"] = {"content": [{"token": "A", "logprob": -0.5, "top_logprobs": top}]}
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS}
    return {"model": body["model"], "choices": [choice], "usage": usage}


def _anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages API reply; a forced tool gets `{"answer": "A"}` as its input."""
    question = body["messages"][-1]["content"]
    forced = (body.get("tool_choice") or {}).get("name")
    block: dict[str, Any] = {"type": "text", "text": f"re: {question}"}
    if forced:
        block = {"type": "tool_use", "id": "toolu_1", "name": forced, "input": {"answer": "A"}}
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [block],
        "stop_reason": "tool_use" if forced else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": PROMPT_TOKENS,
            "output_tokens": COMPLETION_TOKENS,
            "cache_read_input_tokens": 4,
            "cache_creation_input_tokens": 0,
        },
    }
