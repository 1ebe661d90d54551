"""Write Toolcell plugins in Python.

A plugin is a WebAssembly component that offers MCP tools; Toolcell runs each
call in a fresh sandbox that reaches only what `plugins.toml` grants. The
component is built from a project's `app.py` by componentize-py (`toolcell
build` does it); this package hides the generated bindings, so `app.py`
imports `toolcell` alone.

The main types:
- `Plugin` collects the tools: `app.py` creates one, `plugin = Plugin()`, and
  decorates each tool function with `@plugin.tool(...)`. The function's name
  is the tool's name, its docstring the description (an `Args:` section
  describes the parameters), and its type hints the input schema. A return
  annotation that is a dataclass or TypedDict declares an output schema.
- `Output` is a successful result (text, structured content, other content
  blocks, see `Content`); a tool may also return a plain `str`, or a value
  of its declared dataclass or TypedDict.
- `Error` is a failure the model can act on, sent as a result with
  `isError: true`; any other exception becomes such a result too, with a
  message naming the exception (and, for file errors, the path and why).
- `fs.resolve` resolves a relative path against the plugin's first mount (the
  sandbox has no current directory) and, on a Windows host, turns `C:\\x`
  into the sandbox's `/C:/x`; `fs.display` shows a path back in the host's
  form, for messages. `host` logs, reports progress, checks
  for cancellation and reads the plugin's `config` table.

Everything `app.py` uses must be imported at the top of a module:
componentize-py imports the app at build time and snapshots it, and a module
first imported during a call cannot be found. For the same reason, call
`host` and `fs` functions inside tools, not at import time.

Example:

    from dataclasses import dataclass
    from toolcell import Plugin, fs

    plugin = Plugin()

    @dataclass
    class Lines:
        path: str
        lines: int

        def __str__(self):
            return f"{self.lines} lines in {self.path}"

    @plugin.tool(title="Count lines", category="read", read_only=True, open_world=False)
    def count_lines(path: str) -> Lines:
        \"\"\"Count the lines of a text file.

        Args:
            path: The file, absolute or relative to the first mount.
        \"\"\"
        path = fs.resolve(path)
        with open(path, encoding="utf-8", errors="replace") as file:
            return Lines(path, sum(1 for _ in file))
"""

import inspect
import json
import posixpath
import re
import traceback

from . import _schema

__all__ = ["Plugin", "Tool", "Output", "Content", "Error", "CATEGORIES", "host", "fs"]

CATEGORIES = ("read", "search", "write", "execute", "vcs", "network")
"""The categories `plugins.toml` knows by name; any other lowercase name is allowed too."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OTHER_CATEGORY = re.compile(r"^[a-z0-9-]+$")


class Error(Exception):
    """A failure the model can act on, sent as a result with `isError: true`.

    Say what went wrong and what to do differently: `Error("no match for
    `foo`; try a shorter pattern")`.
    """

    def __init__(self, message):
        super().__init__(str(message))
        self.message = str(message)


class Content:
    """One block of a result. Build it with the static methods."""

    def __init__(self, kind, **fields):
        self.kind = kind
        self.fields = fields

    def __repr__(self):
        return f"Content.{self.kind}({self.fields!r})"

    @staticmethod
    def text(text):
        """Text for the model."""
        return Content("text", text=str(text))

    @staticmethod
    def image(data, mime_type):
        """An image: raw bytes and a MIME type such as `image/png`."""
        return Content("image", data=bytes(data), mime_type=mime_type)

    @staticmethod
    def audio(data, mime_type):
        """A sound: raw bytes and a MIME type such as `audio/wav`."""
        return Content("audio", data=bytes(data), mime_type=mime_type)

    @staticmethod
    def resource_link(uri, name, title=None, description=None, mime_type=None, size=None):
        """A link to a resource the client may fetch itself."""
        return Content(
            "resource_link",
            uri=uri,
            name=name,
            title=title,
            description=description,
            mime_type=mime_type,
            size=size,
        )

    @staticmethod
    def embedded_text(uri, text, mime_type=None):
        """A resource with its text contents."""
        return Content("embedded_text", uri=uri, text=str(text), mime_type=mime_type)

    @staticmethod
    def embedded_blob(uri, data, mime_type=None):
        """A resource with its binary contents."""
        return Content("embedded_blob", uri=uri, data=bytes(data), mime_type=mime_type)


class Output:
    """A successful result: content blocks and optional structured content."""

    def __init__(self, content=(), structured=None):
        self.content = list(content)
        self.structured = structured

    @classmethod
    def text(cls, text):
        """A result of one text block."""
        return cls([Content.text(text)])

    @classmethod
    def structured(cls, value, text):
        """Structured content `value` (a dataclass, TypedDict or dict that
        matches the tool's output schema) with `text`, a readable rendering
        of it for clients that show only text."""
        return cls([Content.text(text)], _schema.to_json_value(value))

    def add(self, content):
        """Appends a `Content` block; returns the output."""
        self.content.append(content)
        return self


class Tool:
    """One tool: how it presents itself and the function that runs it."""

    def __init__(self, function, name, title, description, category, annotations):
        where = f"tool `{name}`"
        if not _NAME.match(name):
            raise ValueError(f"{where}: a tool name is 1 to 64 letters, digits, `_` or `-`")
        if category not in CATEGORIES and not _OTHER_CATEGORY.match(category):
            raise ValueError(
                f"{where}: category `{category}` is not one of {', '.join(CATEGORIES)} "
                "or a name of lowercase letters, digits and `-`"
            )
        if inspect.iscoroutinefunction(function) or inspect.isgeneratorfunction(function):
            raise TypeError(f"{where}: a tool is a plain function (not async, not a generator)")
        summary, notes = _schema.parse_docstring(function.__doc__)
        self.function = function
        self.name = name
        self.title = title or name
        self.description = summary if description is None else description
        self.category = category
        self.annotations = annotations
        self.input_schema, self._parameters = _schema.input_schema(function, notes, where)
        hints = _schema.hints_of(function)
        self._hints = hints
        parameters = inspect.signature(function).parameters.values()
        self._defaults = {p.name for p in parameters if p.default is not p.empty}
        self.output_schema = _schema.output_schema(hints.get("return"), where)

    def call(self, arguments):
        """Runs the tool on `arguments` (a dict, or a JSON object as text)
        and returns its `Output`; raises on failure."""
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        if not isinstance(arguments, dict):
            raise Error("invalid arguments: expected a JSON object")
        unknown = sorted(set(arguments) - set(self._parameters))
        if unknown:
            raise Error(f"invalid arguments: unknown parameter `{unknown[0]}`")
        missing = [n for n in self.input_schema.get("required", ()) if n not in arguments]
        if missing:
            raise Error(f"invalid arguments: missing required parameter `{missing[0]}`")
        values = {}
        for name in self._parameters:
            if name in arguments:
                try:
                    values[name] = _schema.decode(arguments[name], self._hints[name])
                except (TypeError, ValueError) as error:
                    raise Error(f"invalid arguments: `{name}`: {error}") from error
            elif name not in self._defaults:
                # Optional (`T | None`) without a default: absent means None.
                values[name] = None
        return self._output(self.function(**values))

    def _output(self, result):
        if isinstance(result, Output):
            return result
        if result is None:
            return Output()
        if self.output_schema is not None:
            data = _schema.to_json_value(result)
            if not isinstance(data, dict):
                raise TypeError(
                    f"tool `{self.name}` declares structured output but returned "
                    f"{type(result).__name__}; return the declared type or an Output"
                )
            if not isinstance(result, dict) and type(result).__str__ is not object.__str__:
                text = str(result)
            else:
                text = json.dumps(data, indent=2, ensure_ascii=False)
            return Output([Content.text(text)], data)
        if isinstance(result, str):
            return Output.text(result)
        return Output.text(json.dumps(_schema.to_json_value(result), indent=2, ensure_ascii=False))


class Plugin:
    """The tools of a plugin. Create one in `app.py` and decorate each tool
    function with `@plugin.tool` or `@plugin.tool(...)`."""

    def __init__(self):
        self._tools = {}
        _plugins.append(self)

    def tool(
        self,
        function=None,
        *,
        name=None,
        title=None,
        description=None,
        category="read",
        read_only=False,
        destructive=None,
        idempotent=None,
        open_world=True,
    ):
        """Registers a tool function; returns it unchanged.

        - `name`: the name the model calls it by (default: the function's).
        - `title`: a short name for people (default: the name).
        - `description`: what it does, for the model (default: the
          docstring without its `Args:` section).
        - `category`: read, search, write, execute, vcs, network or another
          lowercase name; `plugins.toml` enables tools by category.
        - The MCP annotations, all explicit, with MCP's cautious defaults:
          `read_only` False; `destructive` True, and False when read-only;
          `idempotent` False, and True when read-only; `open_world` True
          (pass False for a tool that reaches only its mounts). A read-only
          tool gets every mount read-only.
        """

        def register(function):
            tool_name = name or function.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool `{tool_name}` is defined twice")
            annotations = {
                "read_only": bool(read_only),
                "destructive": (not read_only) if destructive is None else bool(destructive),
                "idempotent": bool(read_only) if idempotent is None else bool(idempotent),
                "open_world": bool(open_world),
            }
            self._tools[tool_name] = Tool(
                function, tool_name, title, description, category, annotations
            )
            return function

        return register(function) if function is not None else register

    def tools(self):
        """The registered tools, in the order they were defined."""
        return list(self._tools.values())

    def run(self, name, arguments):
        """Runs tool `name` on `arguments` (JSON text or a dict); never raises.

        Returns `(content, structured, is_error)`: the `Content` blocks, the
        structured content as JSON text (or None), and whether the call
        failed, in which case the one text block says why.
        """
        try:
            tool = self._tools.get(name)
            if tool is None:
                raise Error(f"this plugin has no tool `{name}`")
            output = tool.call(arguments)
            structured = None
            if output.structured is not None:
                structured = json.dumps(output.structured, ensure_ascii=False)
            return output.content, structured, False
        except BaseException as error:  # a tool must never trap
            try:
                message = _message(error)
            except BaseException:  # the message is best effort; the result is not
                message = f"{type(error).__name__} (and describing it failed)"
            return [Content.text(message)], None, True


_plugins = []


def _the_plugin():
    """The one `Plugin` that `app.py` created (for the component's exports)."""
    if len(_plugins) != 1:
        raise RuntimeError(
            f"app.py created {len(_plugins)} toolcell.Plugin objects; create exactly one "
            "(`plugin = Plugin()`) and register every tool with `@plugin.tool`"
        )
    return _plugins[0]


def _message(error):
    """The text of an `isError` result for an exception."""
    if isinstance(error, Error):
        return error.message
    if isinstance(error, OSError) and isinstance(error.filename, str):
        return _io_message(error)
    if isinstance(error, json.JSONDecodeError):
        return f"invalid arguments: not JSON: {error}"
    detail = str(error)
    message = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    if isinstance(error, ImportError):
        message += (
            " (a Toolcell plugin imports everything at build time: import the module "
            "at the top of app.py, then rebuild)"
        )
    frame = _last_frame(error)
    if frame is not None:
        message += f" (at {posixpath.basename(frame.filename)}:{frame.lineno}, in {frame.name})"
    host.log("error", "".join(traceback.format_exception(error)).rstrip())
    return message


def _last_frame(error):
    frames = traceback.extract_tb(error.__traceback__)
    return frames[-1] if frames else None


def _io_message(error):
    path = error.filename
    mounts = fs.mounts()
    if fs._is_absolute(path) and not any(fs.within(path, mount) for mount in mounts):
        granted = ", ".join(fs.display(mount) for mount in mounts) or "none"
        return (
            f"`{fs.display(path)}` is outside the directories this tool may access "
            f"(granted: {granted})"
        )
    if isinstance(error, FileNotFoundError):
        reason = "no such file or directory"
    elif isinstance(error, PermissionError):
        reason = (
            "permission denied (the sandbox refuses paths that leave a granted directory, "
            "including through `..` or a symlink, and writes to read-only mounts)"
        )
    elif isinstance(error, IsADirectoryError):
        reason = "it is a directory"
    elif isinstance(error, NotADirectoryError):
        reason = "a part of the path is not a directory"
    elif isinstance(error, FileExistsError):
        reason = "it already exists"
    else:
        reason = error.strerror or str(error)
    message = f"cannot access `{fs.display(path)}`: {reason}"
    if not posixpath.isabs(path):
        message += " (the sandbox has no current directory: resolve paths with toolcell.fs.resolve)"
    return message


# After the classes, because both modules raise `Error`.
from . import fs, host  # noqa: E402
