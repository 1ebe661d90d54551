"""The module componentize-py builds into a component.

`toolcell build` names this module as the app (`toolcell._component`).
componentize-py imports it once, at build time, and snapshots the
interpreter: importing it imports the plugin's own `app` module, whose
decorators register the tools and derive their schemas then. `Tools`
implements the exported WIT interface `toolcell:plugin/tools`; each method
converts between the SDK's types and the generated bindings.
"""

import json
import sys
import weakref

from wit_world import exports
from wit_world.imports import toolcell_plugin_types as wit

import toolcell

# componentize-py mounts the project writable; leave no __pycache__ in it.
sys.dont_write_bytecode = True

# The plugin: importing it registers its tools.
import app  # noqa: E402, F401

_PLUGIN = toolcell._the_plugin()


class _Primer:
    pass


# componentize-py ties each WIT resource it hands to Python (a directory from
# `get_directories`, a stream) to a `weakref.finalize`, and a process's first
# finalizer imports `atexit` (a built-in module, made afresh) and registers
# with it. Each call runs in a fresh instance of the build-time snapshot, so
# without this first finalizer made here, before the snapshot, every call
# that touches a file would pay for that import.
weakref.finalize(_Primer(), lambda: None)

_CATEGORIES = {
    "read": wit.Category_Read,
    "search": wit.Category_Search,
    "write": wit.Category_Write,
    "execute": wit.Category_Execute,
    "vcs": wit.Category_Vcs,
    "network": wit.Category_Network,
}


def _descriptor(tool):
    category = _CATEGORIES.get(tool.category)
    annotations = tool.annotations
    return wit.ToolDescriptor(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=json.dumps(tool.input_schema),
        output_schema=None if tool.output_schema is None else json.dumps(tool.output_schema),
        category=category() if category else wit.Category_Other(tool.category),
        annotations=wit.Annotations(
            read_only=annotations["read_only"],
            destructive=annotations["destructive"],
            idempotent=annotations["idempotent"],
            open_world=annotations["open_world"],
        ),
    )


def _content(block):
    f = block.fields
    if block.kind == "text":
        return wit.Content_Text(f["text"])
    if block.kind == "image":
        return wit.Content_Image(wit.Media(f["data"], f["mime_type"]))
    if block.kind == "audio":
        return wit.Content_Audio(wit.Media(f["data"], f["mime_type"]))
    if block.kind == "resource_link":
        return wit.Content_ResourceLink(
            wit.ResourceLink(
                f["uri"], f["name"], f["title"], f["description"], f["mime_type"], f["size"]
            )
        )
    if block.kind == "embedded_text":
        body = wit.ResourceBody_Text(f["text"])
    elif block.kind == "embedded_blob":
        body = wit.ResourceBody_Blob(f["data"])
    else:
        raise ValueError(f"unknown content kind `{block.kind}`")
    return wit.Content_EmbeddedResource(wit.EmbeddedResource(f["uri"], f["mime_type"], body))


class Tools(exports.Tools):
    """The exported interface `toolcell:plugin/tools`."""

    def list_tools(self):
        return [_descriptor(tool) for tool in _PLUGIN.tools()]

    def call_tool(self, call):
        content, structured, is_error = _PLUGIN.run(call.tool, call.arguments)
        try:
            return wit.ToolResult([_content(b) for b in content], structured, is_error)
        except BaseException as error:  # a trap would lose the message
            text = f"the result of `{call.tool}` cannot be sent: {type(error).__name__}: {error}"
            return wit.ToolResult([wit.Content_Text(text)], None, True)
