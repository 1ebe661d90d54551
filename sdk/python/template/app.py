"""{{name}}: a Toolcell plugin.

Each function decorated with `@plugin.tool` is a tool: its name is the
tool's name, its docstring the description, its type hints the input
schema. Import every module you use at the top of this file (the plugin is
loaded at build time), then run `toolcell build` to make {{name}}.wasm.
"""

from toolcell import Plugin

plugin = Plugin()


@plugin.tool(title="Say hello", category="read", read_only=True, open_world=False)
def hello(name: str) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"
