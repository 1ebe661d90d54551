"""Host services: logging, progress, cancellation and configuration.

Call these inside a tool: the app module is imported at build time, when
there is no host to ask. Outside a component (plain CPython, as in a
plugin's unit tests) `log` writes to stderr, `progress` does nothing,
`is_cancelled` is False and the configuration is empty.
"""

import sys

try:
    from wit_world.imports import host as _wit
except ImportError:  # not inside a component
    _wit = None

LEVELS = ("trace", "debug", "info", "warning", "error")
"""The log levels, least important first."""


def log(level, message):
    """Writes a line to the host's log, tagged with the plugin and tool.

    `level` is one of `LEVELS`: "trace", "debug", "info", "warning", "error".
    """
    if level not in LEVELS:
        raise ValueError(f"log level `{level}` is not one of {', '.join(LEVELS)}")
    if _wit is None:
        print(f"{level}: {message}", file=sys.stderr)
        return
    _wit.log(_wit.LogLevel[level.upper()], str(message))


def progress(progress, total=None, message=None):
    """Reports how far the current call has got; `progress` should increase
    with each report, and `total` is the value it will reach, if known."""
    if _wit is None:
        return
    _wit.report_progress(
        float(progress),
        None if total is None else float(total),
        None if message is None else str(message),
    )


def is_cancelled():
    """Whether the client cancelled the current call. A long loop should ask
    now and then and stop early when it has."""
    return False if _wit is None else _wit.is_cancelled()


def config(key, default=None):
    """One value of the plugin's `config` table in `plugins.toml` (a
    string), or `default` when the key is not there."""
    if _wit is None:
        return default
    value = _wit.get_config(key)
    return default if value is None else value


def config_entries():
    """Every value of the plugin's `config` table, as `(key, value)` pairs
    sorted by key."""
    return [] if _wit is None else list(_wit.config_entries())
