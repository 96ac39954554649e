# cython: language_level=3
"""Compiled twins of the mini-swe-agent reader's per-message work: `mini_swe_agent._steps` and
`_fenced_commands.command_blocks`.

The Python functions are the specification and the fallback. The twin runs the common shape (a
reply with text content, one fenced command, a numeric time and integer token counts) as C, and
hands anything else to the Python helpers, so every uncommon shape, and every error, is exactly
the Python reader's. `tests/formats/test_native.py` holds the two equal on the
shared files and on fuzzed copies of them.
"""

from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_KIND,
    Py_UNICODE_ISSPACE,
)
from cpython.datetime cimport import_datetime, timedelta_new
from libc.string cimport memchr

import_datetime()

cdef bint _bound = False
cdef object Step, Usage, UTC, EPOCH, fromtimestamp, FINISH
cdef object LAST_SECOND = 253402300799  # 9999-12-31T23:59:59Z
cdef object py_assistant, py_observe, py_response, text_of, tokens, analyse_command
cdef str SUCCESS, SUBMIT_A, SUBMIT_B


cdef void _bind():
    global _bound, Step, Usage, UTC, EPOCH, fromtimestamp, FINISH, SUCCESS, SUBMIT_A, SUBMIT_B
    global py_assistant, py_observe, py_response, text_of, tokens, analyse_command
    from datetime import UTC as utc, datetime

    from agentlens.formats import _openhands_common as common
    from agentlens.formats import mini_swe_agent as reader
    from agentlens.trajectory import Step as step, ToolCategory, Usage as usage

    Step, Usage, UTC, fromtimestamp = step, usage, utc, datetime.fromtimestamp
    EPOCH = datetime(1970, 1, 1, tzinfo=utc)
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
    cdef dict open_calls = None
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
            step = _assistant(message, text, turn, len(found))
            pending, open_calls = None, None
            if step is None:  # a shape the Python helper reads
                made = py_assistant(message, text, turn)
                numbered = False
                if len(made) == 1:
                    step = made[0]
                else:
                    open_calls = _open_calls(made)
                found.extend(made)
            else:
                found.append(step)
            if step is not None and step.kind == "tool":
                pending = step
            turn += 1
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


cdef object _assistant(dict message, str text, Py_ssize_t turn, Py_ssize_t index):
    """`mini_swe_agent._assistant` of a reply with no `tool_calls` and no `extra.actions`: its
    one step, numbered `index`; None for the Python function to read."""
    cdef Block block
    cdef dict response = None
    cdef dict extra = None
    value = message.get("extra")
    if isinstance(value, dict):
        extra = <dict>value
        actions = extra.get("actions")
        if isinstance(actions, list) and actions:
            return None
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        return None
    # `_response`, its tuple not built
    if extra is not None:
        value = extra.get("response")
        if isinstance(value, dict):
            response = <dict>value
    model = response.get("model") if response is not None else None
    when = extra.get("timestamp") if extra is not None else None
    if when is None and response is not None:
        when = response.get("created")
    if (model is not None and type(model) is not str) or (
        when is not None and type(when) is not int and type(when) is not float
    ):
        usage, cost, model, when = py_response(extra if extra is not None else {})
    else:
        usage = response.get("usage") if response is not None else None
        cost = extra.get("cost") if extra is not None else None
        if cost is None and isinstance(usage, dict):
            cost = (<dict>usage).get("cost")
        usage = _usage(usage)
        cost = float(cost) if isinstance(cost, (int, float)) else None
        if when is not None:
            when = _utc_time(when)
    # mini-swe-agent runs a reply only when it holds exactly one block
    if not _next_block(text, 0, &block) or _next_block(text, block.resume, NULL):
        step = Step(index=index, kind="agent", text=text, turn=turn, usage=usage, cost=cost,
                    raw=message)
        step.model, step.timestamp = model, when
        return step
    command = text[block.first : block.end]
    category, files = _categorize(command)
    return Step(index=index, kind="tool", text=_thought(text, block.start), turn=turn,
                tool_name="bash", category=category, call_id=None,
                arguments={"command": command}, command=command, files=files, timestamp=when,
                usage=usage, cost=cost, model=model, raw=message)


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


cdef object _utc_time(object when):
    """`datetime.fromtimestamp(when, UTC)`. Whole seconds from 1970 to 9999 are added to the
    epoch instead: the same datetime, without the look-up of `UTC.fromutc` each call costs."""
    cdef long long seconds
    if type(when) is int and 0 <= when <= LAST_SECOND:
        seconds = when
        return EPOCH + timedelta_new(seconds // 86400, seconds % 86400, 0)
    return fromtimestamp(when, UTC)


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
    cdef Block block
    cdef Py_ssize_t position = 0
    while _next_block(text, position, &block):
        found.append((block.start, text[block.first : block.end]))
        position = block.resume
    return found


cdef struct Block:
    Py_ssize_t start  # where the opening fence starts
    Py_ssize_t first  # the command's first character
    Py_ssize_t end  # the end of the command
    Py_ssize_t resume  # where the scan for the next block starts


cdef bint _next_block(str text, Py_ssize_t position, Block* block):
    """The next block from `position`, into `block` (when not NULL), as one turn of
    `_command_blocks`' loop finds it: False when there is none."""
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t start, space, end, last_newline, close, newline
    while True:
        start = _fence_opening(text, position, n)
        if start < 0:
            return False
        space = start + (7 if text[start + 3] == u'b' else 21)
        end = space
        while end < n and Py_UNICODE_ISSPACE(text[end]):
            end += 1
        last_newline = text.rfind(u"\n", space, end)
        if last_newline < 0:
            position = start + 1
            continue
        close = _closing_fence(text, last_newline + 1, n)
        if close >= 0:
            first, end, resume = last_newline + 1, close, close + 4
        else:
            newline = text.rfind(u"\n", space, last_newline)
            if newline < 0 or not text.startswith(u"```", last_newline + 1):
                return False
            first, end, resume = newline + 1, last_newline, last_newline + 4
        if block != NULL:
            block.start, block.first, block.end, block.resume = start, first, end, resume
        return True


cdef Py_ssize_t _closing_fence(str text, Py_ssize_t position, Py_ssize_t n):
    """`text.find("\\n```", position)`."""
    cdef Py_ssize_t at = _find_char(text, u"\n", position, n)
    while at >= 0:
        if text.startswith(u"```", at + 1):
            return at
        at = _find_char(text, u"\n", at + 1, n)
    return -1


cdef Py_ssize_t _fence_opening(str text, Py_ssize_t position, Py_ssize_t n):
    """Start of the first ```` ```bash ```` or ```` ```mswea_bash_command ```` from `position`
    (`FENCE_OPEN.search`), or -1."""
    cdef Py_ssize_t at = _find_fence(text, position, n)
    while at >= 0:
        if text.startswith(u"bash", at + 3) or text.startswith(u"mswea_bash_command", at + 3):
            return at
        at = _find_fence(text, at + 1, n)
    return -1


cdef Py_ssize_t _find_fence(str text, Py_ssize_t position, Py_ssize_t n):
    """`text.find("```", position)`, on one-byte text by `memchr` for a backtick and a look at
    the next two bytes (prose holds single backticks, rarely three)."""
    cdef const char* data
    if PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND:
        return text.find(u"```", position) if position < n else -1
    data = <const char*>PyUnicode_DATA(text)
    position = _find_char(text, u"`", position, n)
    while 0 <= position and position + 3 <= n:
        if data[position + 1] == b"`" and data[position + 2] == b"`":
            return position
        position = _find_char(text, u"`", position + 1, n)
    return -1


cdef Py_ssize_t _find_char(str text, Py_UCS4 wanted, Py_ssize_t position, Py_ssize_t n):
    """`text.find(wanted, position)`; by `memchr` on one-byte text (replies are mostly ASCII
    prose, and `memchr` scans it several times faster than `str.find` a longer needle)."""
    cdef const char* data
    cdef const char* found
    if position >= n:
        return -1
    if PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND:
        return text.find(wanted, position)
    data = <const char*>PyUnicode_DATA(text)
    found = <const char*>memchr(data + position, <int>wanted, n - position)
    return -1 if found == NULL else found - data
