"""Records what CPython prints for every snippet of this corpus.

Run it from anywhere with CPython 3.11 (`python3 record.py`): each `NN_name.py` runs as
`python -c` with `data/` as its working directory (as the test mounts it) and `NN_name.stdin`, if present, as its
standard input. It writes `NN_name.out` (stdout) and, for a snippet that fails (an uncaught
exception or a nonzero exit), `NN_name.err` (the last line of stderr, often empty). The test
(tests/all/execute_python.rs) runs the same snippets through `run_python` and compares.
"""

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

for snippet in sorted(HERE.glob("[0-9][0-9]_*.py")):
    stdin = snippet.with_suffix(".stdin")
    run = subprocess.run(
        # As `python -c`, which puts the working directory first on sys.path (as run_python
        # does); no environment, user site-packages or bytecode files (`-I` would also leave
        # the working directory out).
        [sys.executable, "-B", "-E", "-s", "-c", snippet.read_text()],
        cwd=HERE / "data",
        input=stdin.read_text() if stdin.exists() else "",
        capture_output=True,
        text=True,
        timeout=60,
    )
    snippet.with_suffix(".out").write_text(run.stdout)
    err = snippet.with_suffix(".err")
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        err.write_text((lines[-1] if lines else "") + "\n")
    elif err.exists():
        err.unlink()
    print(f"{snippet.name}: exit {run.returncode}")
