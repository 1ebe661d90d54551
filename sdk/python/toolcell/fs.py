"""Paths inside the sandbox.

Every mount appears at the same path as on the host, so absolute paths the
model sees are real paths. The sandbox has no current directory: a relative
path is resolved against the plugin's first mount with `resolve`. The
sandbox itself, not this module, keeps every access inside the mounts.
"""

import posixpath

import toolcell

try:
    from wit_world.imports import preopens as _preopens
except ImportError:  # not inside a component
    _preopens = None


def mounts():
    """The directories mounted for this call, in `plugins.toml` order.

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
    """Resolves `path`: an absolute path is returned as it is, a relative
    one is joined to the first mount.

    Raises `toolcell.Error` for a relative path when the tool has no mount.
    Containment is not checked here: the sandbox refuses anything outside
    the mounts, whatever the path says.
    """
    path = str(path)
    if posixpath.isabs(path):
        return path
    granted = mounts()
    if not granted:
        raise toolcell.Error(
            f"`{path}` is relative, but this tool has no mounted directory to resolve it against"
        )
    return posixpath.join(granted[0], path)


def within(path, directory):
    """Whether `path` names `directory` or something under it, by its text
    (`..` resolved lexically, symlinks not followed): for messages, not a
    security check."""
    path = posixpath.normpath(path)
    directory = posixpath.normpath(directory)
    return path == directory or path.startswith(directory.rstrip("/") + "/")
