"""Unit tests of the SDK on plain CPython: `python3 -m unittest discover sdk/python/tests`.

Inside a component the same code runs with the host's bindings; here `host`
and `fs` fall back to their stand-ins (no mounts, no configuration), and
`MountedPaths` swaps in fake preopens to give `fs` mounts.
"""

import dataclasses
import enum
import json
import os
import sys
import typing
import unittest
from typing import Annotated, Literal, NotRequired, Optional, TypedDict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import toolcell  # noqa: E402
from toolcell import Content, Error, Output, Plugin, _plugins, _schema  # noqa: E402


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Range:
    """A span of lines.

    Attributes:
        start: First line, 1-based.
        end: Last line; the end of the file when left out.
    """

    start: int
    end: int | None = None


@dataclasses.dataclass
class Report:
    path: str
    size: int
    modified: str | None
    ranges: list[Range]

    def __str__(self):
        return f"{self.path}: {self.size} bytes"


class Stats(TypedDict):
    count: int
    note: NotRequired[str]


def schema_of(function):
    plugin = Plugin()
    plugin.tool(function)
    return plugin.tools()[0]


class Docstrings(unittest.TestCase):
    def test_google_args_section_is_split_off(self):
        description, notes = _schema.parse_docstring(
            """Find text.

            Longer explanation.

            Args:
                pattern (str): A regular expression,
                    matched per line.
                limit: At most this many matches.

            Returns:
                The matches.
            """
        )
        self.assertEqual(
            description, "Find text.\n\nLonger explanation.\n\nReturns:\n    The matches."
        )
        self.assertEqual(
            notes,
            {
                "pattern": "A regular expression, matched per line.",
                "limit": "At most this many matches.",
            },
        )

    def test_sphinx_params(self):
        description, notes = _schema.parse_docstring(
            """Do it.

            :param path: The file.
            :param int count: How many
                times.
            """
        )
        self.assertEqual(description, "Do it.")
        self.assertEqual(notes, {"path": "The file.", "count": "How many times."})

    def test_no_docstring(self):
        self.assertEqual(_schema.parse_docstring(None), ("", {}))


class InputSchemas(unittest.TestCase):
    def test_scalars_optionals_and_defaults(self):
        def tool(
            name: str,
            count: int,
            ratio: float,
            flag: bool,
            maybe: int | None,
            old_style: Optional[str] = None,
            limit: int = 10,
            mode: Literal["fast", "slow"] = "fast",
            color: Color = Color.RED,
            tags: list[str] = [],  # noqa: B006
            weights: dict[str, float] | None = None,
            anything: typing.Any = None,
            note: Annotated[str, "A note."] = "",
        ) -> Output:
            """Test.

            Args:
                name: Who.
            """

        spec = schema_of(tool)
        schema = spec.input_schema
        props = schema["properties"]
        self.assertEqual(schema["required"], ["name", "count", "ratio", "flag"])
        self.assertIs(schema["additionalProperties"], False)
        self.assertEqual(props["name"], {"type": "string", "description": "Who."})
        self.assertEqual(props["count"], {"type": "integer"})
        self.assertEqual(props["ratio"], {"type": "number"})
        self.assertEqual(props["flag"], {"type": "boolean"})
        # Optional: the type without null, left out of `required`.
        self.assertEqual(props["maybe"], {"type": "integer"})
        self.assertEqual(props["old_style"], {"type": "string"})
        self.assertEqual(props["limit"], {"type": "integer", "default": 10})
        self.assertEqual(
            props["mode"], {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
        )
        self.assertEqual(
            props["color"], {"type": "string", "enum": ["red", "green"], "default": "red"}
        )
        self.assertEqual(
            props["tags"], {"type": "array", "items": {"type": "string"}, "default": []}
        )
        self.assertEqual(
            props["weights"], {"type": "object", "additionalProperties": {"type": "number"}}
        )
        self.assertEqual(props["anything"], {})
        self.assertEqual(props["note"], {"type": "string", "description": "A note.", "default": ""})
        self.assertIsNone(spec.output_schema)
        self.assertEqual(spec.description, "Test.")
        self.assertNotIn("null", json.dumps(schema))

    def test_nested_dataclass_is_an_inline_object(self):
        def tool(ranges: list[Range], first: Range | None = None) -> str:
            """Test.

            Args:
                first: The first range.
            """

        props = schema_of(tool).input_schema["properties"]
        range_schema = {
            "type": "object",
            "properties": {
                "start": {"type": "integer", "description": "First line, 1-based."},
                "end": {
                    "type": "integer",
                    "description": "Last line; the end of the file when left out.",
                },
            },
            "required": ["start"],
            "additionalProperties": False,
            "description": "A span of lines.",
        }
        self.assertEqual(props["ranges"], {"type": "array", "items": range_schema})
        # The parameter's note wins over the class's description.
        self.assertEqual(props["first"], dict(range_schema, description="The first range."))

    def test_unions_are_any_of(self):
        def tool(value: int | str) -> str:
            """Test."""

        self.assertEqual(
            schema_of(tool).input_schema["properties"]["value"],
            {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        )

    def test_unsupported_types_are_refused_at_definition(self):
        def no_hint(x) -> str:
            """Test."""

        def a_set(x: set[int]) -> str:
            """Test."""

        def a_path(x: os.PathLike) -> str:
            """Test."""

        def star(*args: int) -> str:
            """Test."""

        async def coroutine() -> str:
            """Test."""

        for function, words in [
            (no_hint, "parameter `x`: add a type annotation"),
            (a_set, "use list[T]"),
            (a_path, "unsupported type `PathLike`"),
            (star, "*args and **kwargs"),
            (coroutine, "not async"),
        ]:
            with self.assertRaises(TypeError) as caught:
                schema_of(function)
            self.assertIn(words, str(caught.exception))

    def test_recursive_dataclass_is_refused(self):
        @dataclasses.dataclass
        class Node:
            children: list["Node"]

        globals()["Node"] = Node
        try:

            def tool(node: Node) -> str:
                """Test."""

            with self.assertRaises(TypeError) as caught:
                schema_of(tool)
            self.assertIn("contains itself", str(caught.exception))
        finally:
            del globals()["Node"]


class OutputSchemas(unittest.TestCase):
    def test_dataclass_fields_are_all_required_and_none_is_nullable(self):
        def tool() -> Report:
            """Test."""

        schema = schema_of(tool).output_schema
        self.assertEqual(schema["required"], ["path", "size", "modified", "ranges"])
        self.assertEqual(
            schema["properties"]["modified"], {"anyOf": [{"type": "string"}, {"type": "null"}]}
        )
        item = schema["properties"]["ranges"]["items"]
        self.assertEqual(item["required"], ["start", "end"])

    def test_typeddict_keeps_not_required(self):
        def tool() -> Stats:
            """Test."""

        schema = schema_of(tool).output_schema
        self.assertEqual(schema["required"], ["count"])
        self.assertEqual(schema["properties"]["note"], {"type": "string"})

    def test_output_and_str_declare_none(self):
        def a() -> Output:
            """Test."""

        def b() -> str:
            """Test."""

        def c():
            """Test."""

        for function in (a, b, c):
            self.assertIsNone(schema_of(function).output_schema)


class Descriptors(unittest.TestCase):
    def test_annotation_defaults_follow_the_rust_sdk(self):
        plugin = Plugin()

        @plugin.tool
        def plain() -> str:
            """Test."""

        @plugin.tool(read_only=True, open_world=False)
        def reader() -> str:
            """Test."""

        @plugin.tool(
            name="writer", title="Write", description="Writes.", category="write", idempotent=True
        )
        def write_it() -> str:
            """Ignored."""

        tools = {t.name: t for t in plugin.tools()}
        self.assertEqual(
            tools["plain"].annotations,
            {"read_only": False, "destructive": True, "idempotent": False, "open_world": True},
        )
        self.assertEqual(
            tools["reader"].annotations,
            {"read_only": True, "destructive": False, "idempotent": True, "open_world": False},
        )
        writer = tools["writer"]
        self.assertEqual(
            (writer.title, writer.description, writer.category), ("Write", "Writes.", "write")
        )
        self.assertTrue(writer.annotations["idempotent"])
        self.assertEqual(tools["plain"].title, "plain")
        self.assertEqual(tools["plain"].category, "read")

    def test_bad_names_and_categories_are_refused(self):
        plugin = Plugin()

        def tool() -> str:
            """Test."""

        with self.assertRaises(ValueError):
            plugin.tool(name="has space")(tool)
        with self.assertRaises(ValueError):
            plugin.tool(category="Not Valid")(tool)
        plugin.tool(category="my-own")(tool)
        self.assertEqual(plugin.tools()[0].category, "my-own")
        with self.assertRaises(ValueError):
            plugin.tool(tool)


class Calls(unittest.TestCase):
    def setUp(self):
        self.plugin = plugin = Plugin()

        @plugin.tool
        def echo(
            ranges: list[Range], ratio: float, color: Color = Color.RED, limit: int | None = None
        ) -> str:
            """Test."""
            kinds = [type(r).__name__ for r in ranges]
            return f"{kinds} {ranges[0].end} {ratio!r} {color.name} {limit}"

        @plugin.tool
        def report(fail: str = "") -> Report:
            """Test."""
            if fail == "error":
                raise Error("try a smaller file")
            if fail == "key":
                return {}["missing"]
            if fail == "open":
                open("/nowhere/file.txt")
            if fail == "relative":
                open("relative-file-that-does-not-exist.txt")
            if fail == "exit":
                sys.exit(2)
            if fail == "type":
                return 3
            return Report("/a", 3, None, [Range(1)])

        @plugin.tool
        def stats() -> Stats:
            """Test."""
            return {"count": 2}

        @plugin.tool
        def rich() -> Output:
            """Test."""
            return Output.structured({"a": 1}, "a is 1").add(Content.image(b"\x89PNG", "image/png"))

        @plugin.tool
        def nothing() -> None:
            """Test."""

        @plugin.tool
        def not_json() -> Output:
            """Test."""
            return Output.structured({"a": {1, 2}}, "a set")

    def run_tool(self, name, arguments):
        content, structured, is_error = self.plugin.run(name, json.dumps(arguments))
        texts = [b.fields.get("text") for b in content]
        return is_error, texts, None if structured is None else json.loads(structured)

    def test_arguments_are_decoded_into_their_types(self):
        is_error, texts, _ = self.run_tool(
            "echo", {"ranges": [{"start": 1}], "ratio": 2, "color": "green"}
        )
        self.assertFalse(is_error)
        self.assertEqual(texts, ["['Range'] None 2.0 GREEN None"])

    def test_structured_results_carry_text(self):
        self.assertEqual(
            self.run_tool("report", {}),
            (
                False,
                ["/a: 3 bytes"],
                {"path": "/a", "size": 3, "modified": None, "ranges": [{"start": 1, "end": None}]},
            ),
        )
        is_error, texts, structured = self.run_tool("stats", {})
        self.assertEqual((is_error, structured), (False, {"count": 2}))
        self.assertEqual(json.loads(texts[0]), {"count": 2})
        is_error, texts, structured = self.run_tool("rich", {})
        self.assertEqual((is_error, texts, structured), (False, ["a is 1", None], {"a": 1}))
        self.assertEqual(self.run_tool("nothing", {}), (False, [], None))

    def test_failures_are_error_results(self):
        def message(fail):
            is_error, texts, structured = self.run_tool("report", {"fail": fail})
            self.assertTrue(is_error)
            self.assertIsNone(structured)
            return texts[0]

        self.assertEqual(message("error"), "try a smaller file")
        self.assertRegex(
            message("key"), r"^KeyError: 'missing' \(at test_toolcell.py:\d+, in report\)$"
        )
        self.assertEqual(
            message("open"),
            "`/nowhere/file.txt` is outside the directories this tool may access (granted: none)",
        )
        self.assertIn("resolve paths with toolcell.fs.resolve", message("relative"))
        self.assertRegex(message("exit"), r"^SystemExit: 2")
        self.assertIn("declares structured output but returned int", message("type"))
        self.assertEqual(self.run_tool("nosuch", {})[1], ["this plugin has no tool `nosuch`"])
        self.assertRegex(self.run_tool("not_json", {})[1][0], r"^TypeError: Object of type set")
        content, _, is_error = self.plugin.run("report", "{not json")
        self.assertTrue(is_error)
        self.assertIn("not JSON", content[0].fields["text"])


class Paths(unittest.TestCase):
    def test_within_is_by_whole_components(self):
        self.assertTrue(toolcell.fs.within("/a/b/c", "/a/b"))
        self.assertTrue(toolcell.fs.within("/a/b", "/a/b/"))
        self.assertFalse(toolcell.fs.within("/a/bc", "/a/b"))
        self.assertFalse(toolcell.fs.within("/a/b/../c", "/a/b"))

    def test_resolve_without_mounts(self):
        self.assertEqual(toolcell.fs.resolve("/abs/path"), "/abs/path")
        with self.assertRaises(Error):
            toolcell.fs.resolve("relative")


class FakePreopens:
    """Stands in for the WASI preopens: `fs.mounts()` lists these names."""

    class Descriptor:
        def __exit__(self, *_):
            pass

    def __init__(self, *names):
        self.names = names

    def get_directories(self):
        return [(self.Descriptor(), name) for name in self.names]


class MountedPaths(unittest.TestCase):
    """`fs.resolve`, `fs.display`, `fs.within` and file messages with mounts."""

    def mount(self, *names):
        saved = toolcell.fs._preopens
        toolcell.fs._preopens = FakePreopens(*names)
        self.addCleanup(setattr, toolcell.fs, "_preopens", saved)

    def assertResolves(self, path, expected):
        self.assertEqual(toolcell.fs.resolve(path), expected, path)

    def io_message(self, error):
        plugin = Plugin()

        @plugin.tool
        def fail():
            raise error

        _plugins.remove(plugin)
        content, _, is_error = plugin.run("fail", {})
        self.assertTrue(is_error)
        return content[0].fields["text"]

    def test_posix_host(self):
        self.mount("/home/me/proj", "/data")
        self.assertEqual(toolcell.fs.mounts(), ["/home/me/proj", "/data"])
        self.assertResolves("/data/x", "/data/x")
        self.assertResolves("/Data/x", "/Data/x")  # case matters on a POSIX host
        self.assertResolves("/elsewhere", "/elsewhere")
        self.assertResolves("a/b.txt", "/home/me/proj/a/b.txt")
        self.assertResolves("C:\\x", "/home/me/proj/C:\\x")  # a name like any other
        self.assertResolves("C:x", "/home/me/proj/C:x")
        self.assertEqual(toolcell.fs.display("/home/me/proj/a"), "/home/me/proj/a")
        self.assertEqual(toolcell.fs.display("/C:/a"), "/C:/a")
        self.assertFalse(toolcell.fs.within("/Data/x", "/data"))

    def test_windows_paths_take_the_sandbox_form(self):
        self.mount("/C:/Users/me/proj", "/D:/data")
        self.assertResolves("C:\\Users\\me\\proj\\a.txt", "/C:/Users/me/proj/a.txt")
        self.assertResolves("C:/Users/me/proj/a.txt", "/C:/Users/me/proj/a.txt")
        self.assertResolves("/C:/Users/me/proj/a.txt", "/C:/Users/me/proj/a.txt")
        self.assertResolves("\\\\?\\D:\\data\\x", "/D:/data/x")
        self.assertResolves("D:\\data", "/D:/data")
        self.assertResolves("D:/data/", "/D:/data")
        self.assertResolves("C:", "/C:")
        self.assertResolves("C:\\", "/C:/")
        self.assertResolves("E:\\other\\x", "/E:/other/x")  # no mount: the sandbox refuses it

    def test_windows_mounts_match_ignoring_case_and_keep_their_spelling(self):
        self.mount("/C:/Users/me/proj", "/D:/data")
        self.assertResolves("c:\\users\\ME\\Proj\\Src\\a.txt", "/C:/Users/me/proj/Src/a.txt")
        self.assertResolves("/c:/USERS/me/proj", "/C:/Users/me/proj")
        self.assertResolves("d:/DATA//x/./y", "/D:/data/x/./y")

    def test_windows_mounts_match_whole_components(self):
        self.mount("/C:/data")
        self.assertResolves("c:\\data-evil\\x", "/c:/data-evil/x")
        self.assertResolves("c:\\DATA\\x", "/C:/data/x")
        self.assertResolves("c:\\", "/c:/")

    def test_the_longest_matching_mount_wins(self):
        self.mount("/C:/proj", "/C:/proj/Vendor/lib")
        self.assertResolves("c:\\proj\\vendor\\lib\\x", "/C:/proj/Vendor/lib/x")
        self.assertResolves("c:\\proj\\vendor\\other", "/C:/proj/vendor/other")
        self.assertResolves("c:\\proj\\x", "/C:/proj/x")
        self.mount("/C:/proj/Vendor/lib", "/C:/proj")
        self.assertResolves("c:\\proj\\vendor\\lib\\x", "/C:/proj/Vendor/lib/x")
        self.mount("/C:/Proj", "/c:/PROJ")  # equals: the last wins, as in wasi-libc
        self.assertResolves("C:\\proj\\x", "/c:/PROJ/x")

    def test_windows_relative_paths_join_the_first_mount(self):
        self.mount("/C:/Users/me/proj", "/D:/data")
        self.assertResolves("src\\a.txt", "/C:/Users/me/proj/src/a.txt")
        self.assertResolves("src/a.txt", "/C:/Users/me/proj/src/a.txt")
        self.mount("/C:")
        self.assertResolves("a.txt", "/C:/a.txt")

    def test_windows_drive_relative_paths_are_refused(self):
        self.mount("/C:/proj")
        for path in ("C:foo", "c:foo\\bar", "\\\\?\\C:foo"):
            with self.assertRaises(Error) as caught:
                toolcell.fs.resolve(path)
            self.assertIn("drive-relative paths are not supported", caught.exception.message)
            self.assertIn("full path", caught.exception.message)
            self.assertIn("relative to the first mounted folder", caught.exception.message)

    def test_windows_device_and_unc_paths_are_left_to_the_sandbox(self):
        self.mount("/C:/proj")
        self.assertResolves("\\\\.\\C:\\proj\\x", "//./C:/proj/x")
        self.assertResolves("\\\\server\\share\\x", "//server/share/x")
        self.assertResolves("\\proj\\x", "/proj/x")  # rooted, no drive: matches no mount

    def test_display_shows_windows_paths(self):
        self.mount("/C:/Users/me/proj")
        self.assertEqual(toolcell.fs.display("/C:/Users/me/a.txt"), "C:\\Users\\me\\a.txt")
        self.assertEqual(toolcell.fs.display("/C:"), "C:")
        self.assertEqual(toolcell.fs.display("/d:/x"), "d:\\x")
        self.assertEqual(toolcell.fs.display("/CD:/x"), "/CD:/x")
        self.assertEqual(toolcell.fs.display("/tmp/x"), "/tmp/x")
        self.assertEqual(toolcell.fs.display("a/b"), "a/b")
        for path in ("C:\\Users\\me\\proj\\a.txt", "C:\\Users\\me\\proj", "C:\\Users\\x"):
            self.assertEqual(toolcell.fs.display(toolcell.fs.resolve(path)), path)
        for path in ("/C:/Users/me/proj/a.txt", "/C:/Users/me/proj", "/C:"):
            self.assertEqual(toolcell.fs.resolve(toolcell.fs.display(path)), path)

    def test_within_reads_windows_paths(self):
        self.mount("/C:/Users/me/proj")
        self.assertTrue(toolcell.fs.within("C:\\Users\\me\\proj\\a", "/C:/Users/me/proj"))
        self.assertTrue(toolcell.fs.within("c:/users/me/proj", "/C:/Users/me/proj"))
        self.assertTrue(toolcell.fs.within("\\\\?\\C:\\Users\\me\\proj\\a", "/C:/Users/me/proj"))
        self.assertFalse(toolcell.fs.within("C:\\Users\\me\\proj-evil", "/C:/Users/me/proj"))
        self.assertFalse(toolcell.fs.within("C:\\Users\\me\\proj\\..\\x", "/C:/Users/me/proj"))
        self.assertFalse(toolcell.fs.within("C:proj", "/C:/Users/me/proj"))

    def test_file_messages_on_a_windows_host(self):
        self.mount("/C:/Users/me/proj", "/D:/data")
        # Opened without `fs.resolve`: inside a mount, but the hint applies.
        unresolved = FileNotFoundError(2, "No such file", "C:\\Users\\me\\proj\\a.txt")
        self.assertEqual(
            self.io_message(unresolved),
            "cannot access `C:\\Users\\me\\proj\\a.txt`: no such file or directory "
            "(the sandbox has no current directory: resolve paths with toolcell.fs.resolve)",
        )
        resolved = FileNotFoundError(2, "No such file", "/C:/Users/me/proj/a.txt")
        self.assertEqual(
            self.io_message(resolved),
            "cannot access `C:\\Users\\me\\proj\\a.txt`: no such file or directory",
        )
        folded = PermissionError(13, "Denied", "c:\\users\\ME\\proj\\a.txt")
        self.assertTrue(self.io_message(folded).startswith("cannot access `c:\\users"))
        outside = PermissionError(13, "Denied", "/E:/secret")
        self.assertEqual(
            self.io_message(outside),
            "`E:\\secret` is outside the directories this tool may access "
            "(granted: C:\\Users\\me\\proj, D:\\data)",
        )
        relative = FileNotFoundError(2, "No such file", "a.txt")
        self.assertIn("resolve paths with toolcell.fs.resolve", self.io_message(relative))

    def test_file_messages_on_a_posix_host(self):
        self.mount("/home/me/proj")
        outside = PermissionError(13, "Denied", "/etc/passwd")
        self.assertEqual(
            self.io_message(outside),
            "`/etc/passwd` is outside the directories this tool may access "
            "(granted: /home/me/proj)",
        )
        inside = FileNotFoundError(2, "No such file", "/home/me/proj/a")
        self.assertEqual(
            self.io_message(inside), "cannot access `/home/me/proj/a`: no such file or directory"
        )


if __name__ == "__main__":
    unittest.main()
