"""Paths inside the sandbox.

Every mount appears in the sandbox under a name taken from its host path:
on Linux and macOS the path itself (`/home/me/proj`), on Windows a POSIX
form of it (`C:\\Users\\me\\proj` is `/C:/Users/me/proj`). The sandbox has
no current directory: a relative path is resolved against the plugin's
first mount with `resolve`, which also accepts Windows paths on a Windows
host; `display` shows a path the way the host writes it. The sandbox
itself, not this module, keeps every access inside the mounts.
"""

import posixpath
import string

import toolcell

try:
    from wit_world.imports import preopens as _preopens
except ImportError:  # not inside a component
    _preopens = None

_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def mounts():
    """The directories mounted for this call, in `plugins.toml` order, as
    the sandbox names them (`/C:/Users/me/proj` for a Windows folder).

    Outside a component, the list is empty.
    """
    if _preopens is None:
        return []
    paths = []
    for descriptor, path in _preopens.get_directories():
        # Our own handle on the directory; the sandbox keeps its own.
        descriptor.__exit__(None, None, None)
        paths.append(path)
    return paths


def resolve(path):
    """Resolves `path` to the sandbox's name for it: an absolute path is
    returned as it is, a relative one is joined to the first mount.

    On a Windows host (a mount is named like `/C:/...`), `C:\\x\\y`,
    `C:/x/y` and `\\\\?\\C:\\x\\y` all mean `/C:/x/y`, and an absolute path
    whose leading folders match a mount's, ignoring case, is spelled as
    that mount is.

    Raises `toolcell.Error` for a relative path when the tool has no mount,
    and for a drive-relative path such as `C:x`. Containment is not checked
    here: the sandbox refuses anything outside the mounts, whatever the
    path says.
    """
    path = str(path)
    granted = mounts()
    if _windows(granted):
        path = _posix_form(path)
        if path.startswith("/"):
            return _respell(path, granted)
    elif posixpath.isabs(path):
        return path
    if not granted:
        raise toolcell.Error(
            f"`{path}` is relative, but this tool has no mounted directory to resolve it against"
        )
    return posixpath.join(granted[0], path)


def display(path):
    """`path` as the host writes it, for messages: on a Windows host
    `/C:/Users/me/a.txt` is shown as `C:\\Users\\me\\a.txt`; any other path,
    and every path on other hosts, is returned unchanged."""
    path = str(path)
    if _has_drive(path) and _windows(mounts()):
        return path[1:].replace("/", "\\")
    return path


def within(path, directory):
    """Whether `path` names `directory` or something under it, by its text
    (`..` resolved lexically, symlinks not followed): for messages, not a
    security check. On a Windows host both are read as `resolve` reads
    them and compared ignoring case."""
    if _windows(mounts() + [directory]):
        try:
            path = _posix_form(path).translate(_LOWER)
            directory = _posix_form(directory).translate(_LOWER)
        except toolcell.Error:
            return False
    path = posixpath.normpath(path)
    directory = posixpath.normpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _is_absolute(path):
    """Whether `resolve` reads `path` as absolute (`C:\\x` is, on a Windows host)."""
    if _windows(mounts()):
        try:
            path = _posix_form(path)
        except toolcell.Error:
            return False
    return posixpath.isabs(path)


def _windows(names):
    """Whether these mount names are those of a Windows host."""
    return any(_has_drive(name) for name in names)


def _has_drive(path):
    """Whether `path` starts with a drive in the sandbox's form: `/C:` alone
    or followed by `/`."""
    return path[:1] == "/" and _is_drive(path[1:3]) and path[3:4] in ("", "/")


def _is_drive(text):
    """Whether `text` is a drive letter and a colon, such as `C:`."""
    return len(text) == 2 and text[0] in string.ascii_letters and text[1] == ":"


def _posix_form(path):
    """A Windows path in the sandbox's form: no `\\\\?\\` prefix, `/` for
    `\\`, and `C:/x` written `/C:/x`. Raises `toolcell.Error` for a
    drive-relative path (`C:x`)."""
    given = path
    if path.startswith("\\\\?\\"):
        path = path[4:]
    path = path.replace("\\", "/")
    if _is_drive(path[:2]):
        if path[2:3] not in ("", "/"):
            raise toolcell.Error(
                f"`{given}` is relative to a drive's current folder; drive-relative paths "
                f"are not supported: give a full path (`{path[:2]}\\folder\\file`) or one "
                "relative to the first mounted folder"
            )
        path = "/" + path
    return path


def _components(path):
    """The names in `path`, without empty ones."""
    return [name for name in path.split("/") if name]


def _respell(path, granted):
    """`path` with its leading folders spelled as the mount they match,
    ignoring case (the longest such mount wins, the last of equals, as in
    the guest's libc); unchanged when it matches none."""
    names = _components(path)
    folded = [name.translate(_LOWER) for name in names]
    best, depth = None, -1
    for mount in granted:
        prefix = [name.translate(_LOWER) for name in _components(mount)]
        if len(prefix) >= depth and folded[: len(prefix)] == prefix:
            best, depth = mount, len(prefix)
    if best is None:
        return path
    rest = "/".join(names[depth:])
    return best.rstrip("/") + "/" + rest if rest else best
