"""Shell command lines, read without running them: what a line reads, writes, runs.

* `tokens`: words, operators and quotes of a line (two splitters, one per reader below);
* `heredocs`: here-documents, their bodies dropped or cut out;
* `programs`: the program names both readings know;
* `categories`: a line's `ToolCategory` and the files it names (every trace reader);
* `actions`: what each command of a line does, nested `bash -c` included (the `paper` labeler).

The `sdk-compat` labeler keeps the released SDK's own regexes over the raw line
(`process/labeler_sdk.py`): reproducing the release, quirks included, is its point.
"""
