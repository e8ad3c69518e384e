"""The in-sandbox kernel: a persistent Python process that runs Python, Bash and SQL steps.

This package runs *inside* the sandbox (standard library only; daharness itself is not importable
there). It is copied to a read-only folder that is not on the agent's import path, and started as
`python -I -c "<bootstrap>" CONFIG`. The host talks to it with one JSON object per line on the kernel's
original stdin/stdout, which the kernel moves to private descriptors at start-up; descriptors 1 and 2
then point at pipes drained by reader threads (`output.py`), so output of C code and child processes is
captured too and can never corrupt the protocol.

Modules: `output` (capped capture of stdout/stderr), `actions` (python, bash, sql, write_file),
`processes` (reaping and counting the sandbox's processes), `server` (limits, request loop).
"""
