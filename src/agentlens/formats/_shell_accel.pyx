# cython: language_level=3
"""Compiled twins of the shell classifier: `_categories._analyse` (with its caches),
`_analyse_command`, `_analyse_line` and `_shell_tokens.strip_heredocs`.

`_categories.py` and `_shell_tokens.py` are the specification and the fallback; this module gives
the same answer for every line, several times faster, because a character scan replaces the
tokenizer's regexes and the rules run as C. `tests/formats/test_native.py` holds the two equal on
every real command of the shared runs and on generated shell-like text. Bounds checks stay on (the
text is hostile input): raw string memory is read only by `memchr` and `_char`, which checks.

The rule tables (program names, categories) are read from `_categories` on first use, so a rule
is written once.
"""

from libc.string cimport memchr
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_KIND,
    PyUnicode_READ,
    Py_UNICODE_ISALNUM,
    Py_UNICODE_ISDIGIT,
    Py_UNICODE_ISSPACE,
)

cdef bint _bound = False
cdef object RUN_COMMAND, EDIT, CREATE_FILE, SEARCH, READ_FILE, LIST_DIR
cdef frozenset SEARCHERS, FILTERS, NEUTRAL, PREFIXES, FIND_SEARCH_FLAGS
cdef frozenset WRITE_OPERATORS, WRITERS, SPECIAL_PROGRAMS, OPERAND_FILES, FIND_SED
cdef frozenset PIPES, REDIRECTS
cdef tuple IN_PLACE, INSPECTING
cdef dict RANK, BY_PROGRAM
cdef Py_ssize_t STRENGTHS
cdef frozenset SOURCE_SUFFIXES
cdef Py_ssize_t CACHED_LENGTH, ANALYSED_LENGTH
cdef Py_ssize_t CACHE_SIZE = 8192
cdef dict _given = {}  # line as given -> result (`_categories._analyse_given`)
cdef dict _short = {}  # line with here-documents dropped -> result (`_analyse_short`)
cdef tuple _last_long = (u"", None)


cdef void _bind():
    global _bound, RUN_COMMAND, EDIT, CREATE_FILE, SEARCH, READ_FILE, LIST_DIR
    global SEARCHERS, FILTERS, NEUTRAL, PREFIXES, FIND_SEARCH_FLAGS
    global WRITE_OPERATORS, WRITERS, SPECIAL_PROGRAMS, OPERAND_FILES, FIND_SED
    global PIPES, REDIRECTS, IN_PLACE, INSPECTING, RANK, BY_PROGRAM, STRENGTHS
    global SOURCE_SUFFIXES, CACHED_LENGTH, ANALYSED_LENGTH
    from agentlens.formats import _categories as rules
    from agentlens.formats import _shell_tokens as tokens
    from agentlens.trajectory import ToolCategory

    RUN_COMMAND, EDIT = ToolCategory.RUN_COMMAND, ToolCategory.EDIT
    CREATE_FILE, SEARCH = ToolCategory.CREATE_FILE, ToolCategory.SEARCH
    READ_FILE, LIST_DIR = ToolCategory.READ_FILE, ToolCategory.LIST_DIR
    SEARCHERS, FILTERS = frozenset(rules.SEARCHERS), frozenset(rules.FILTERS)
    NEUTRAL, PREFIXES = frozenset(rules.NEUTRAL), frozenset(rules.PREFIXES)
    FIND_SEARCH_FLAGS = frozenset(rules.FIND_SEARCH_FLAGS)
    WRITE_OPERATORS, WRITERS = frozenset(rules.WRITE_OPERATORS), frozenset(rules.WRITERS)
    SPECIAL_PROGRAMS = frozenset(rules.SPECIAL_PROGRAMS)
    OPERAND_FILES, FIND_SED = frozenset(rules.OPERAND_FILES), frozenset(rules.FIND_SED)
    PIPES, REDIRECTS = frozenset(tokens.PIPES), frozenset(tokens.REDIRECTS)
    IN_PLACE, INSPECTING = tuple(rules.IN_PLACE), tuple(rules.INSPECTING)
    RANK, BY_PROGRAM = dict(rules.RANK), dict(rules.BY_PROGRAM)
    STRENGTHS = len(rules.STRENGTH)
    SOURCE_SUFFIXES = frozenset(rules.SOURCE_SUFFIXES)
    CACHED_LENGTH, ANALYSED_LENGTH = rules.CACHED_LENGTH, rules.ANALYSED_LENGTH
    _bound = True


# ---- the cached entry points: `_categories._analyse_command` and `_analyse_cached`


cpdef tuple analyse_command(str cmd):
    """`_categories._analyse_command(cmd)`: (category, files as a new list)."""
    result = analyse(cmd.strip())
    return result[0], list(result[1])


cpdef tuple analyse(str cmd):
    """`_categories._analyse_cached(cmd)`: (category, files) of a stripped line, cached when
    short. The caches are bounded: a full one is emptied."""
    if not _bound:
        _bind()
    if len(cmd) > CACHED_LENGTH:
        return _analyse_text(cmd)
    result = _given.get(cmd)
    if result is None:
        result = _analyse_text(cmd)
        _remember(_given, cmd, result)
    return result


def cache_clear():
    """Empty the caches (`functools.lru_cache`'s name, so benchmarks clear them alike)."""
    global _last_long
    _given.clear()
    _short.clear()
    _last_long = (u"", None)


cdef inline void _remember(dict cache, str key, tuple result):
    if len(cache) >= CACHE_SIZE:
        cache.clear()
    cache[key] = result


cdef tuple _analyse_text(str cmd):
    """`_categories._analyse_text`."""
    global _last_long
    joined = cmd.replace(u"\\\n", u" ") if _has_pair(cmd, u"\\\n") else cmd
    cdef str text = strip_heredocs(joined)[:ANALYSED_LENGTH]
    if text is cmd and len(cmd) <= CACHED_LENGTH:
        return analyse_line(text)
    if len(text) <= CACHED_LENGTH:
        result = _short.get(text)
        if result is None:
            result = analyse_line(text)
            _remember(_short, text, result)
        return result
    last = _last_long
    if last[0] == text:
        return last[1]
    result = analyse_line(text)
    _last_long = (text, result)
    return result


cdef bint _has_pair(str text, str pair):
    """`pair in text` for a two-character ASCII `pair`; on one-byte text by `memchr` for its
    first character (a here-document or a continued line is rare, and commands carry files)."""
    cdef Py_ssize_t n = len(text)
    cdef Py_UCS4 first = pair[0]
    cdef Py_UCS4 second = pair[1]
    cdef const char* data
    cdef const char* found
    if PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND:
        return pair in text
    data = <const char*>PyUnicode_DATA(text)
    found = <const char*>memchr(data, <int>first, n)
    while found != NULL and found + 1 < data + n:
        if <unsigned char>found[1] == second:
            return True
        found = <const char*>memchr(found + 1, <int>first, data + n - found - 1)
    return False


# ---- the tokenizer: `_shell_tokens.TOKEN` as a scan, quoted words unquoted, comments dropped


cdef struct Chars:
    # a str's characters, read with `_char` instead of a bounds-checked index per character
    int kind
    void* data
    Py_ssize_t n


cdef inline Chars _chars(str text):
    cdef Chars chars
    chars.kind = PyUnicode_KIND(text)
    chars.data = PyUnicode_DATA(text)
    chars.n = len(text)
    return chars


cdef inline Py_UCS4 _char(Chars* text, Py_ssize_t at):
    """The character at `at`; NUL past the end (every caller checks `at < n` first)."""
    if at < 0 or at >= text.n:
        return 0
    return PyUnicode_READ(text.kind, text.data, at)


cdef inline bint _operator_char(Py_UCS4 c):
    return c == u';' or c == u'|' or c == u'&' or c == u'(' or c == u')' or c == u'<' or c == u'>'


cdef inline bint _word_char(Py_UCS4 c):
    """`[^\\s'\";|&()<>\\\\]`: what a word goes on with (a `#` included)."""
    return not (Py_UNICODE_ISSPACE(c) or c == u"'" or c == u'"' or c == u'\\'
                or _operator_char(c))


cdef inline Py_ssize_t _escape(Chars* text, Py_ssize_t at):
    """Length of `\\\\.` at `at` (2), or 0: the regex's `.` takes anything but a newline."""
    if at + 1 < text.n and _char(text, at + 1) != u'\n':
        return 2
    return 0


cdef Py_ssize_t _word_end(Chars* text, Py_ssize_t at):
    """End of the word starting at `at`, or `at` when none starts there."""
    cdef Py_UCS4 c = _char(text, at)
    cdef Py_ssize_t step
    if c == u'\\':
        step = _escape(text, at)
        if step == 0:
            return at
        at += step
    elif c == u'#' or not _word_char(c):
        return at
    else:
        at += 1
    while at < text.n:
        c = _char(text, at)
        if _word_char(c):
            at += 1
        elif c == u'\\':
            step = _escape(text, at)
            if step == 0:
                return at
            at += step
        else:
            return at
    return at


cdef Py_ssize_t _operator_end(Chars* text, Py_ssize_t at):
    """End of the operator at `at`, taken as the regex's alternation does: the first listed of
    `&& || ;; |& &>> &> >> >& <& <<< <<- << >| <>` that matches, else one character."""
    cdef Py_UCS4 c = _char(text, at)
    cdef Py_UCS4 d = _char(text, at + 1)
    cdef Py_UCS4 e = _char(text, at + 2)
    if c == u'&':
        if d == u'&':
            return at + 2
        if d == u'>':
            return at + 3 if e == u'>' else at + 2
    elif c == u'|':
        if d == u'|' or d == u'&':
            return at + 2
    elif c == u';':
        if d == u';':
            return at + 2
    elif c == u'>':
        if d == u'>' or d == u'&' or d == u'|':
            return at + 2
    elif c == u'<':
        if d == u'&' or d == u'>':
            return at + 2
        if d == u'<':
            return at + 3 if e == u'<' or e == u'-' else at + 2
    return at + 1


cdef Py_ssize_t _quoted_end(Chars* text, Py_ssize_t at, Py_UCS4 quote):
    """`'[^']*'?` or `"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"?` from the quote at `at`."""
    cdef Py_UCS4 c
    at += 1
    while at < text.n:
        c = _char(text, at)
        if c == quote:
            return at + 1
        if c == u'\\' and quote == u'"':
            if _escape(text, at) == 0:
                return at
            at += 2
        else:
            at += 1
    return at


cdef str _unquote(str text, Py_ssize_t start, Py_ssize_t end, Py_UCS4 quote):
    """`_shell_tokens.unquote(text[start:end])` of the quoted token there."""
    cdef str inner
    if end - start > 1 and text[end - 1] == quote:
        inner = text[start + 1 : end - 1]
    else:
        inner = text[start + 1 : end]
    if quote == u"'" or u'\\"' not in inner:
        return inner
    return inner.replace(u'\\"', u'"')


cdef tuple _tokens(str line):
    """(words, operator positions) of a line, as `_shell_tokens.words_and_operators` gives them."""
    cdef list words = []
    cdef list operators = []
    cdef Chars chars = _chars(line)
    cdef Chars* text = &chars
    cdef Py_ssize_t at = 0
    cdef Py_ssize_t end
    cdef Py_UCS4 c
    while at < text.n:
        c = _char(text, at)
        end = _word_end(text, at)
        if end > at:
            words.append(line[at:end])
        elif c == u'\n' or _operator_char(c):
            end = _operator_end(text, at)
            operators.append(len(words))
            words.append(line[at:end])
        elif c == u"'" or c == u'"':
            end = _quoted_end(text, at, c)
            words.append(_unquote(line, at, end, c))
        elif c == u'#':
            end = at + 1
            while end < text.n and _char(text, end) != u'\n':
                end += 1
        else:  # whitespace, or a backslash before a newline or at the end: no token
            end = at + 1
        at = end
    return words, operators


# ---- here-documents: `_shell_tokens.strip_heredocs`


cpdef str strip_heredocs(str text):
    """`_shell_tokens.strip_heredocs(text)`: here-document bodies dropped, `<<EOF` made `<< ''`."""
    cdef list out
    cdef Py_ssize_t position = 0
    cdef Py_ssize_t at, opening_end, word_start, word_end, line_end, closing
    if not _has_pair(text, u"<<"):
        return text
    out = []
    at = text.find(u"<<")
    while at >= 0:
        opening_end = _heredoc_opening(text, at)
        if opening_end < 0:
            at = text.find(u"<<", at + 1)
            continue
        word_start, word_end = _heredoc_word(text, at)
        line_end = text.find(u"\n", opening_end)
        out.append(text[position:at])
        out.append(u"<< ''")
        if line_end < 0:
            out.append(text[opening_end:])
            return u"".join(out)
        out.append(text[opening_end : line_end + 1])
        closing = _closing_line(text, text[word_start:word_end], line_end + 1)
        if closing < 0:  # an unterminated body runs to the end
            return u"".join(out)
        position = closing
        at = text.find(u"<<", position)
    out.append(text[position:])
    return u"".join(out)


cdef inline bint _heredoc_word_char(Py_UCS4 c):
    return Py_UNICODE_ISALNUM(c) or c == u'_' or c == u'.' or c == u'-'


cdef Py_ssize_t _heredoc_opening(str text, Py_ssize_t at):
    """End of `HEREDOC` (`<<-?\\s*(['"]?)([A-Za-z_][\\w.-]*)\\1`) matched at `at`, or -1.
    No backtracking can help it: a word never holds a quote, a space or a `-` start."""
    cdef Py_ssize_t n = len(text)
    cdef Py_UCS4 quote = 0
    cdef Py_UCS4 c
    at += 2
    if at < n and text[at] == u'-':
        at += 1
    while at < n and Py_UNICODE_ISSPACE(text[at]):
        at += 1
    if at < n and (text[at] == u"'" or text[at] == u'"'):
        quote = text[at]
        at += 1
    if at >= n:
        return -1
    c = text[at]
    if not (u'a' <= c <= u'z' or u'A' <= c <= u'Z' or c == u'_'):
        return -1
    at += 1
    while at < n and _heredoc_word_char(text[at]):
        at += 1
    if quote:
        if at < n and text[at] == quote:
            return at + 1
        return -1
    return at


cdef tuple _heredoc_word(str text, Py_ssize_t at):
    """(start, end) of the word of the opening `_heredoc_opening` matched at `at`."""
    cdef Py_ssize_t n = len(text)
    at += 2
    if at < n and text[at] == u'-':
        at += 1
    while at < n and Py_UNICODE_ISSPACE(text[at]):
        at += 1
    if text[at] == u"'" or text[at] == u'"':
        at += 1
    cdef Py_ssize_t start = at
    at += 1
    while at < n and _heredoc_word_char(text[at]):
        at += 1
    return start, at


cdef Py_ssize_t _closing_line(str text, str word, Py_ssize_t start):
    """`_shell_tokens._closing_line`: end of the first line from `start` holding only `word`."""
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t at = text.find(word, start)
    cdef Py_ssize_t line_start, line_end
    while at >= 0:
        line_start = text.rfind(u"\n", start - 1, at) + 1 if at > start else start
        line_end = text.find(u"\n", at)
        if line_end < 0:
            line_end = n
        if text[line_start:line_end].strip(u" \t") == word:
            return line_end
        start = line_end + 1
        at = text.find(word, start)
    return -1


# ---- the rules: `_categories` from `_analyse_line` down, with the same names. A command is
# (program, words, start, writes): its arguments are `words[start:]`, not copied out.


cpdef tuple analyse_line(str cmd):
    """`_categories._analyse_line(cmd)`: (category, files)."""
    cdef Py_UCS4 c
    cdef bint syntax = False
    cdef list words, operators, files
    if not _bound:
        _bind()
    for c in cmd:
        if c == u"'" or c == u'"':
            syntax = True
        elif c == u'\n' or c == u'#' or c == u'\\' or _operator_char(c):
            syntax = True
            break
    if not syntax:  # one plain command
        category, files = _lone_command(cmd.split())
        return category, tuple(dict.fromkeys(files) if len(files) > 1 else files)
    words, operators = _tokens(cmd)
    if not operators:
        category, files = _lone_command(_extend([], words, u"" in words))
        return category, tuple(files)
    return _analyse_compound(words, operators)


cdef tuple _lone_command(list words):
    cdef Py_ssize_t start = _program_at(words)
    cdef str program = _program(words, start)
    category = _command_category(program, words, start + 1, None)
    if category is None:
        category = RUN_COMMAND
    return category, _command_files(program, words, start + 1)


cdef tuple _parse(list words, list targets):
    cdef Py_ssize_t start = _program_at(words)
    return _program(words, start), words, start + 1, _written(targets) if targets else None


cdef tuple _analyse_compound(list words, list operators):
    cdef object category = RUN_COMMAND
    cdef Py_ssize_t rank = STRENGTHS
    cdef list files = []
    cdef list pipeline = []
    cdef list command = []
    cdef list targets = []
    cdef bint empties = u"" in words
    cdef Py_ssize_t start = 0
    cdef Py_ssize_t at
    cdef Py_ssize_t n = len(words)
    cdef str token
    for position in operators:
        at = position
        if at < start:  # an operator taken as a redirection's target
            continue
        if at > start:
            command = _extend(command, words[start:at], empties)
        token = words[at]
        start = at + 1
        if token in REDIRECTS:
            if command and (<str>command[len(command) - 1]).isdigit():
                command.pop()
            if start < n:
                targets.append((token, words[start]))
                start += 1
            continue
        if command or targets:
            pipeline.append(_parse(command, targets))
            command, targets = [], []
        if token not in PIPES and pipeline:
            category, rank = _settle(pipeline, category, rank, files)
            pipeline = []
    if start < n:
        command = _extend(command, words[start:], empties)
    if command or targets:
        pipeline.append(_parse(command, targets))
    if pipeline:
        category, rank = _settle(pipeline, category, rank, files)
    return category, tuple(files)


cdef list _extend(list command, list words, bint empties):
    cdef Py_ssize_t at
    if empties and u"" in words:
        words = [word for word in words if word]
    if command:
        command.extend(words)
        return command
    if words and u"=" not in <str>words[0]:
        return words
    for at in range(len(words)):
        if not _is_assignment(words[at]):
            return words[at:]
    return command


cdef tuple _settle(list pipeline, object category, Py_ssize_t rank, list files):
    cdef list named
    cdef tuple command
    if len(pipeline) > 1:
        found = _pipeline_category(pipeline)
    else:
        command = pipeline[0]
        found = _command_category(command[0], command[1], command[2], command[3])
    if found is not None and <Py_ssize_t>RANK[found] < rank:
        category, rank = found, RANK[found]
    for command in pipeline:
        named = _command_files(command[0], command[1], command[2])
        writes = command[3]
        if writes:
            named = [name for _, name in writes] + named
        if named:
            if files:
                files.extend([f for f in named if f not in files])
            else:
                files.extend(named)
    return category, rank


cdef list _written(list targets):
    cdef list writes = []
    for op, name in targets:
        if op in WRITE_OPERATORS and not (<str>name).startswith("/dev/"):
            writes.append((op, name))
    return writes


cdef object _pipeline_category(list pipeline):
    cdef tuple command = pipeline[0]
    category = _command_category(command[0], command[1], command[2], command[3])
    if category is None:
        return None
    for index in range(1, len(pipeline)):
        command = pipeline[index]
        later = _command_category(command[0], command[1], command[2], command[3])
        if later is SEARCH and (category is READ_FILE or category is LIST_DIR):
            category = SEARCH
        elif command[0] in FILTERS:
            continue
        elif later is CREATE_FILE or later is EDIT:
            category = later
        elif category in INSPECTING:
            category = RUN_COMMAND
    return category


cdef object _command_category(str program, list words, Py_ssize_t start, list writes):
    """`_categories._command_category(program, words[start:], writes)`."""
    cdef Py_ssize_t at
    cdef Py_ssize_t n = len(words)
    if program not in SPECIAL_PROGRAMS:
        return BY_PROGRAM.get(program, RUN_COMMAND)
    if program in NEUTRAL:
        return None
    if writes and program in WRITERS:  # None (no redirection) is falsy too
        return EDIT if (<str>writes[0][0]).endswith(">>") else CREATE_FILE
    if program == "sed" or program == "perl":
        for at in range(start, n):
            if (<str>words[at]).startswith(IN_PLACE):
                return EDIT
        return READ_FILE if program == "sed" else RUN_COMMAND
    if program == "find":
        for at in range(start, n):
            if words[at] in FIND_SEARCH_FLAGS:
                return SEARCH
        return LIST_DIR
    if program == "git" and start < n and words[start] == "grep":
        return SEARCH
    if program == "patch" or (program == "git" and start < n and words[start] == "apply"):
        return EDIT
    if program == "touch":
        return CREATE_FILE
    return BY_PROGRAM.get(program, RUN_COMMAND)


cdef list _command_files(str program, list words, Py_ssize_t start):
    """`_categories._command_files(program, words[start:])`."""
    cdef list files = []
    cdef Py_ssize_t at
    cdef Py_ssize_t n = len(words)
    cdef str word
    if program not in OPERAND_FILES and program not in SEARCHERS and program not in FIND_SED:
        # any other program: its source-file-like operands (`SOURCE_FILE`; a name ending in a
        # suffix cannot be all digits, with or without its dots)
        for at in range(start, n):
            word = words[at]
            if _source_file(word) and word[0] != u'-':
                files.append(word)
        return files
    for at in range(start, n):
        word = words[at]
        if not _option_or_number(word):
            files.append(word)
    if program in OPERAND_FILES:
        return files
    if program == "find":
        return files[:1]
    return files[1:]


cdef bint _option_or_number(str word):
    """`word.startswith("-") or word.isdigit()`."""
    cdef Py_UCS4 c
    if not word:
        return False
    if word[0] == u'-':
        return True
    for c in word:
        if not Py_UNICODE_ISDIGIT(c):
            return False
    return True


cdef bint _source_file(str word):
    """`SOURCE_FILE.match(word)`: `[\\w./-]+` then `.` and a known suffix, at the end or before
    a final newline (`$`). Suffixes hold no dot, so the last dot is the one."""
    cdef Py_ssize_t n = len(word)
    cdef Py_ssize_t dot, at
    cdef Py_UCS4 c
    if n and word[n - 1] == u'\n':
        n -= 1
    dot = word.rfind(u".", 0, n)
    if dot < 1 or word[dot + 1 : n] not in SOURCE_SUFFIXES:
        return False
    for at in range(dot):
        c = word[at]
        if not (Py_UNICODE_ISALNUM(c) or c == u'_' or c == u'.' or c == u'/' or c == u'-'):
            return False
    return True


cdef Py_ssize_t _program_at(list words):
    """Where `_categories._split_program` finds the program: past `sudo`, `env`, `X=1` and
    options; `len(words)` when there is none."""
    cdef str word
    cdef Py_ssize_t at
    for at in range(len(words)):
        word = words[at]
        if u"/" in word:
            if word.rsplit("/", 1)[-1] in PREFIXES:
                continue
        elif word in PREFIXES:
            continue
        if word.startswith("-") or (u"=" in word and _is_assignment(word)):
            continue
        return at
    return len(words)


cdef inline str _program(list words, Py_ssize_t at):
    """The program name at `at` without its directory; "" past the end."""
    if at >= len(words):
        return u""
    cdef str word = words[at]
    return word.rsplit("/", 1)[-1] if u"/" in word else word


cdef bint _is_assignment(str word):
    if u"=" not in word:
        return False
    return word.partition("=")[0].isidentifier()
