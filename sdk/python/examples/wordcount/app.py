"""wordcount: a Toolcell plugin written in Python.

One tool, `count`, counts the lines, words and bytes of a text file under
the plugin's mount, as `wc` does, and returns them as structured content
with a readable line of text.
"""

import os
import stat
from dataclasses import dataclass

from toolcell import Error, Plugin, fs, host

plugin = Plugin()

# Files larger than this are refused unless `max_bytes` in the plugin's
# config table says otherwise.
DEFAULT_MAX_BYTES = 10 * 1024 * 1024


@dataclass
class Counts:
    """What `count` found.

    Attributes:
        path: The file that was counted, as an absolute path.
        lines: Newline characters, as `wc -l` counts them.
        words: Runs of non-whitespace characters.
        bytes: The file's size in bytes.
    """

    path: str
    lines: int
    words: int
    bytes: int

    def __str__(self):
        return f"{self.lines} lines, {self.words} words, {self.bytes} bytes in {self.path}"


def max_bytes():
    """The size limit from the plugin's config table, or the default."""
    value = host.config("max_bytes")
    if value is None:
        return DEFAULT_MAX_BYTES
    try:
        return int(value)
    except ValueError:
        raise Error(f"config `max_bytes` must be a number of bytes, not `{value}`") from None


@plugin.tool(title="Count words", category="read", read_only=True, open_world=False)
def count(path: str) -> Counts:
    """Count the lines, words and bytes of a text file, as `wc` does.

    Args:
        path: The file to count, absolute or relative to the plugin's first mount.
    """
    path = fs.resolve(path)
    info = os.stat(path)
    # Opening a named pipe would block until a writer comes: refuse anything
    # that is not a regular file before opening it.
    if not stat.S_ISREG(info.st_mode):
        raise Error(f"`{path}` is not a regular file")
    limit = max_bytes()
    if info.st_size > limit:
        raise Error(f"`{path}` is {info.st_size} bytes, more than the limit of {limit}")
    with open(path, "rb") as file:
        data = file.read()
    host.log("debug", f"counting {len(data)} bytes of {path}")
    return Counts(path=path, lines=data.count(b"\n"), words=len(data.split()), bytes=len(data))
