# cython: language_level=3
"""Compiled twins of the mini-swe-agent reader's per-message work: `mini_swe_agent._steps` and
`_fenced_commands.command_blocks`.

The Python functions are the specification and the fallback. The twin runs the common shape (a
reply with text content, one fenced command, a numeric time and integer token counts) as C, and
hands anything else to the Python helpers, so every uncommon shape, and every error, is exactly
the Python reader's. `tests/formats/test_mini_swe_agent_accel.py` holds the two equal on the
shared files and on fuzzed copies of them.
"""

from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_KIND,
    Py_UNICODE_ISSPACE,
)
from libc.string cimport memchr

cdef bint _bound = False
cdef object Step, Usage, UTC, fromtimestamp, FINISH
cdef object py_assistant, py_observe, py_response, text_of, tokens, analyse_command
cdef str SUCCESS, SUBMIT_A, SUBMIT_B


cdef void _bind():
    global _bound, Step, Usage, UTC, fromtimestamp, FINISH, SUCCESS, SUBMIT_A, SUBMIT_B
    global py_assistant, py_observe, py_response, text_of, tokens, analyse_command
    from datetime import UTC as utc, datetime

    from agentlens.formats import _openhands_common as common
    from agentlens.formats import mini_swe_agent as reader
    from agentlens.trajectory import Step as step, ToolCategory, Usage as usage

    Step, Usage, UTC, fromtimestamp = step, usage, utc, datetime.fromtimestamp
    FINISH = ToolCategory.FINISH
    SUCCESS, (SUBMIT_A, SUBMIT_B) = reader.SUCCESS, reader.SUBMIT
    py_assistant, py_observe, py_response = reader._assistant, reader._observe, reader._response
    text_of, tokens = common.text_of, common._tokens
    analyse_command = reader.analyse_command  # the classifier's compiled twin when built
    _bound = True


cpdef Py_ssize_t first_unreadable(list messages):
    """`mini_swe_agent._first_unreadable(messages)`: the number of the first message that is not
    an object with a `role`, or -1."""
    cdef Py_ssize_t number
    for number in range(len(messages)):
        message = messages[number]
        if not isinstance(message, dict) or "role" not in <dict>message:
            return number
    return -1


cpdef list steps(list messages):
    """`mini_swe_agent._steps(messages)`: the steps of a checked message list, numbered.

    A reply of one call (nearly all) leaves that call in `pending`; replies the Python helper
    reads may leave several, kept in `open_calls` by call id as `_steps` keeps them."""
    cdef list found = []
    cdef list made
    cdef dict open_calls = {}
    cdef dict message
    cdef object pending = None
    cdef Py_ssize_t turn = 0
    cdef Py_ssize_t index
    cdef bint numbered = True  # every step built here carries its index already
    if not _bound:
        _bind()
    for item in messages:
        message = <dict?>item
        role = message["role"]
        content = message.get("content")
        text = content if isinstance(content, str) else text_of(content)
        if role == "assistant":
            made = _assistant(message, text, turn, len(found))
            if made is None:  # a shape the Python helper reads
                made = py_assistant(message, text, turn)
                numbered = False
            turn += 1
            pending = None
            if len(made) == 1:
                step = made[0]
                if step.kind == "tool":
                    pending = step
                open_calls = {}
            else:
                open_calls = _open_calls(made)
            found.extend(made)
        elif (pending is not None or open_calls) and (role == "user" or role == "tool"):
            if pending is not None:
                step, pending = pending, None
            elif len(open_calls) == 1:
                step = open_calls.popitem()[1]
            else:
                key = str(message.get("tool_call_id") or next(iter(open_calls)))
                step = open_calls.pop(key, None) or open_calls.pop(next(iter(open_calls)))
            if (<str>text).startswith(SUCCESS):
                step.observation = text
                step.is_error = False
                step.raw = {"call": step.raw, "result": message}
            else:
                py_observe(step, text, message)
        else:
            found.append(Step(index=len(found), kind="system" if role == "system" else "user",
                              text=text, raw=message))
    if not numbered:
        for index in range(len(found)):
            found[index].index = index
    return found


cdef dict _open_calls(list made):
    return {s.call_id or str(i): s for i, s in enumerate(made) if s.kind == "tool"}


cdef list _assistant(dict message, str text, Py_ssize_t turn, Py_ssize_t index):
    """`mini_swe_agent._assistant` for a reply with no `tool_calls` and no `extra.actions`,
    its steps numbered from `index`; None for the Python function to read."""
    extra = message.get("extra")
    if not isinstance(extra, dict):
        extra = {}
    calls = message.get("tool_calls")
    actions = (<dict>extra).get("actions")
    if (isinstance(calls, list) and calls) or (isinstance(actions, list) and actions):
        return None
    usage, cost, model, when = _response(<dict>extra)
    blocks = command_blocks(text)
    if len(blocks) != 1:  # mini-swe-agent runs a reply only when it holds exactly one block
        step = Step(index=index, kind="agent", text=text, turn=turn, usage=usage, cost=cost,
                    raw=message)
        step.model, step.timestamp = model, when
        return [step]
    start, command = blocks[0]
    thought = _thought(text, start)
    category, files = _categorize(command)
    return [
        Step(index=index, kind="tool", text=thought, turn=turn, tool_name="bash", category=category,
             call_id=None, arguments={"command": command}, command=command, files=files,
             timestamp=when, usage=usage, cost=cost, model=model, raw=message)
    ]


cdef str _thought(str text, Py_ssize_t end):
    """`text[:end].strip().removeprefix("THOUGHT:").strip()`, cut once."""
    cdef Py_ssize_t start = 0
    while start < end and Py_UNICODE_ISSPACE(text[start]):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(text[end - 1]):
        end -= 1
    if text.startswith(u"THOUGHT:", start, end):
        start += 8
        while start < end and Py_UNICODE_ISSPACE(text[start]):
            start += 1
    return text[start:end]


cdef tuple _categorize(str command):
    # both submit words end so: one scan of a command that has neither
    if u"_FINAL_OUTPUT" in command and (SUBMIT_A in command or SUBMIT_B in command):
        return FINISH, []
    return analyse_command(command)


cdef tuple _response(dict extra):
    """`mini_swe_agent._response` when the model is a string or absent and the time a number or
    absent; the Python function otherwise (its errors, its conversions)."""
    response = extra.get("response")
    if not isinstance(response, dict):
        response = {}
    model = (<dict>response).get("model")
    when = extra.get("timestamp")
    if when is None:
        when = (<dict>response).get("created")
    if (model is not None and type(model) is not str) or (
        when is not None and type(when) is not int and type(when) is not float
    ):
        return py_response(extra)
    usage = (<dict>response).get("usage")
    cost = extra.get("cost")
    if cost is None and isinstance(usage, dict):
        cost = (<dict>usage).get("cost")
    return (
        _usage(usage),
        float(cost) if isinstance(cost, (int, float)) else None,
        model,
        None if when is None else fromtimestamp(when, UTC),
    )


cdef object _usage(object usage):
    """`_openhands_common.usage_from_response(usage)`."""
    if not isinstance(usage, dict):
        return None
    details = (<dict>usage).get("prompt_tokens_details") or {}
    cached = (<dict>details).get("cached_tokens") if isinstance(details, dict) else None
    cached = cached or (<dict>usage).get("cache_read_input_tokens")
    prompt = (<dict>usage).get("prompt_tokens")
    completion = (<dict>usage).get("completion_tokens")
    return Usage(
        prompt_tokens=_count(prompt, "prompt_tokens"),
        completion_tokens=_count(completion, "completion_tokens"),
        cached_tokens=_count(cached, "cached_tokens"),
    )


cdef inline object _count(object value, str key):
    """`_openhands_common._tokens(value, None, key)`: an int as it is, None as 0."""
    if type(value) is int:
        return value
    if value is None:
        return 0
    return tokens(value, None, key)


cpdef list command_blocks(str text):
    """`_fenced_commands.command_blocks(text)`: (start, command) of each fenced command block."""
    cdef list found = []
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t position = 0
    cdef Py_ssize_t start, space, end, last_newline, close, newline
    while True:
        start = _fence_opening(text, position, n)
        if start < 0:
            return found
        space = start + (7 if text[start + 3] == u'b' else 21)
        end = space
        while end < n and Py_UNICODE_ISSPACE(text[end]):
            end += 1
        last_newline = text.rfind(u"\n", space, end)
        if last_newline < 0:
            position = start + 1
            continue
        close = text.find(u"\n```", last_newline + 1)
        if close >= 0:
            found.append((start, text[last_newline + 1 : close]))
            position = close + 4
            continue
        newline = text.rfind(u"\n", space, last_newline)
        if newline < 0 or not text.startswith(u"```", last_newline + 1):
            return found
        found.append((start, text[newline + 1 : last_newline]))
        position = last_newline + 4


cdef Py_ssize_t _fence_opening(str text, Py_ssize_t position, Py_ssize_t n):
    """Start of the first ```` ```bash ```` or ```` ```mswea_bash_command ```` from `position`
    (`FENCE_OPEN.search`), or -1."""
    cdef Py_ssize_t at = _fence(text, position, n)
    while at >= 0:
        if text.startswith(u"bash", at + 3) or text.startswith(u"mswea_bash_command", at + 3):
            return at
        at = _fence(text, at + 1, n)
    return -1


cdef Py_ssize_t _fence(str text, Py_ssize_t position, Py_ssize_t n):
    """`text.find("```", position)`; on one-byte text by `memchr` for the backtick, several
    times faster than `str.find` on a three-character needle (replies are mostly prose)."""
    cdef const char* data
    cdef const char* found
    if position >= n:
        return -1
    if PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND:
        return text.find(u"```", position)
    data = <const char*>PyUnicode_DATA(text)
    while position + 3 <= n:
        found = <const char*>memchr(data + position, ord("`"), n - position)
        if found == NULL:
            return -1
        position = found - data
        if position + 3 <= n and data[position + 1] == b"`" and data[position + 2] == b"`":
            return position
        position += 1
    return -1
