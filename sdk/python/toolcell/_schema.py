"""JSON Schemas derived from type hints, and arguments decoded back into them.

`input_schema` describes a tool function's parameters, `output_schema` the
dataclass or TypedDict it returns; `decode` turns the JSON arguments the host
sends into the values the parameters are annotated with (dataclasses, enums,
floats). `parse_docstring` splits a docstring into the description and the
per-parameter notes of its `Args:` section (or `:param name:` lines).

The schemas are plain, portable JSON Schema: nested objects are written
inline (no `$ref`), an optional parameter is left out of `required` rather
than made nullable, and a union is `anyOf`, never a `type` array.
"""

import dataclasses
import enum
import inspect
import re
import types
import typing

SUPPORTED = (
    "str, int, float, bool, list[T], dict[str, T], Literal[...], an Enum, "
    "a dataclass, a TypedDict, Any, `T | None` or Annotated[T, 'description']"
)

# `NotRequired[T]` and the like: a TypedDict key's qualifiers, which
# `get_type_hints(include_extras=True)` keeps.
_TYPEDDICT_QUALIFIERS = tuple(
    getattr(typing, name)
    for name in ("Required", "NotRequired", "ReadOnly")
    if hasattr(typing, name)
)

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Attributes|Fields):\s*$")
_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX = re.compile(r"^:(?:param|parameter|arg|ivar|var)\s+(?:[^:]*\s)?(\w+):\s*(.*)$")


def parse_docstring(doc):
    """Returns `(description, {name: note})` for a docstring (or None)."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    kept, notes = [], {}
    index = 0
    while index < len(lines):
        line = lines[index]
        sphinx = _SPHINX.match(line.strip())
        if sphinx:
            name, text = sphinx.groups()
            index += 1
            while index < len(lines) and lines[index].startswith((" ", "\t")):
                text += " " + lines[index].strip()
                index += 1
            notes[name] = text.strip()
            continue
        if not _SECTION.match(line):
            kept.append(line)
            index += 1
            continue
        # An indented block of `name: text` entries; a line indented deeper
        # than its entry continues it.
        index += 1
        entry_indent, name = None, None
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            indent = len(line) - len(line.lstrip())
            if indent == 0:
                break
            match = _ENTRY.match(line.strip())
            if match and (entry_indent is None or indent <= entry_indent):
                entry_indent = indent
                name = match.group(1).lstrip("*")
                notes[name] = match.group(3).strip()
            elif name is not None:
                notes[name] = (notes[name] + " " + line.strip()).strip()
            index += 1
    description = "\n".join(kept).strip()
    return re.sub(r"\n{3,}", "\n\n", description), notes


def hints_of(obj):
    """The resolved type hints of a function or class, `Annotated` kept."""
    return typing.get_type_hints(obj, include_extras=True)


def _members(hint):
    """The non-None members of a union, and whether None was one of them."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(hint)
        members = [a for a in args if a is not type(None)]
        return members, len(members) != len(args)
    return [hint], False


def optional_inner(hint):
    """`T` for `T | None` (or `Optional[T]`), else None."""
    members, has_none = _members(hint)
    if has_none and len(members) == 1:
        return members[0]
    return None


def is_typeddict(hint):
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def is_object_type(hint):
    """Whether `hint` is a dataclass or TypedDict class (an object schema)."""
    return (inspect.isclass(hint) and dataclasses.is_dataclass(hint)) or is_typeddict(hint)


def _type_name(hint):
    return getattr(hint, "__name__", None) or repr(hint)


def schema_for(hint, where, output=False, seen=()):
    """The JSON Schema for values of type `hint`.

    `where` names the place for error messages (a tool and parameter).
    `output` selects the serialising contract: a dataclass field is always
    written, so it is required, and nullable when its type admits None.
    """
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = schema_for(args[0], where, output, seen)
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            schema = dict(schema, description=" ".join(notes))
        return schema
    if origin in _TYPEDDICT_QUALIFIERS:
        return schema_for(args[0], where, output, seen)
    if hint is typing.Any or hint is object:
        return {}
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is type(None):
        return {"type": "null"}
    if origin is typing.Literal:
        schema = {"enum": list(args)}
        kinds = {_json_type(a) for a in args}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": list(args)}
        return schema
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        values = [member.value for member in hint]
        kinds = {_json_type(v) for v in values}
        if None in kinds:
            raise TypeError(
                f"{where}: the values of enum `{hint.__name__}` must be strings or numbers"
            )
        schema = {"enum": values}
        if len(kinds) == 1:
            schema = {"type": kinds.pop(), "enum": values}
        return schema
    if origin is typing.Union or origin is types.UnionType:
        members, has_none = _members(hint)
        schemas = [schema_for(m, where, output, seen) for m in members]
        if has_none:
            schemas.append({"type": "null"})
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise TypeError(f"{where}: use tuple[T, ...] or list[T], not `{hint}`")
        if origin in (set, frozenset):
            raise TypeError(f"{where}: use list[T], not `{hint}`")
        items = schema_for(args[0], where, output, seen) if args else {}
        return {"type": "array", "items": items}
    if origin is dict or hint is dict:
        if args and args[0] is not str:
            raise TypeError(
                f"{where}: JSON object keys are strings; use dict[str, T], not `{hint}`"
            )
        schema = {"type": "object"}
        if args:
            schema["additionalProperties"] = schema_for(args[1], where, output, seen)
        return schema
    if is_object_type(hint):
        if hint in seen:
            raise TypeError(
                f"{where}: `{hint.__name__}` contains itself; recursive types are not supported"
            )
        return object_schema(hint, where, output, seen + (hint,))
    raise TypeError(f"{where}: unsupported type `{_type_name(hint)}`; use {SUPPORTED}")


def _json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def object_schema(cls, where, output=False, seen=()):
    """The object schema of a dataclass or TypedDict class."""
    hints = hints_of(cls)
    description, notes = parse_docstring(cls.__doc__ if _own_doc(cls) else None)
    properties, required = {}, []
    if dataclasses.is_dataclass(cls):
        fields = [(f.name, _field_optional(f, hints[f.name])) for f in dataclasses.fields(cls)]
    else:
        fields = [(name, name not in cls.__required_keys__) for name in hints]
    for name, optional in fields:
        hint = hints[name]
        if not output and optional:
            # Left out rather than sent as null.
            hint = _without_none(hint)
        schema = schema_for(hint, f"{where}, field `{name}`", output, seen)
        if name in notes and not _has_note(hint):
            schema = dict(schema, description=notes[name])
        properties[name] = schema
        if not optional or (output and dataclasses.is_dataclass(cls)):
            required.append(name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def _own_doc(cls):
    # A dataclass without a docstring gets a generated one (its signature).
    doc = cls.__doc__ or ""
    return bool(doc) and not doc.startswith(cls.__name__ + "(")


def _has_note(hint):
    """Whether `hint` is `Annotated` with a description, which wins over the docstring's."""
    if typing.get_origin(hint) is not typing.Annotated:
        return False
    return any(isinstance(a, str) for a in typing.get_args(hint)[1:])


def _strip_annotated(hint):
    if typing.get_origin(hint) is typing.Annotated:
        return typing.get_args(hint)[0]
    return hint


def _without_none(hint):
    """`T` for `T | None`, keeping an `Annotated` wrapper; other hints as they are."""
    inner = optional_inner(_strip_annotated(hint))
    if inner is None:
        return hint
    if typing.get_origin(hint) is typing.Annotated:
        return typing.Annotated[(inner, *typing.get_args(hint)[1:])]
    return inner


def _field_optional(field, hint):
    has_default = (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )
    return has_default or optional_inner(_strip_annotated(hint)) is not None


def input_schema(function, notes, where):
    """The input schema of a tool function, and the names of its parameters.

    A parameter is optional when it has a default or its type admits None;
    the schema then has the type without None (a client leaves the argument
    out instead of sending null), and the default when it is plain JSON.
    """
    hints = hints_of(function)
    properties, required, names = {}, [], []
    for parameter in inspect.signature(function).parameters.values():
        name = parameter.name
        place = f"{where}, parameter `{name}`"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"{place}: *args and **kwargs cannot be described; name each parameter")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"{place}: arguments are passed by name; remove the `/`")
        if name not in hints:
            raise TypeError(f"{place}: add a type annotation (it becomes the input schema)")
        hint = hints[name]
        optional = parameter.default is not parameter.empty or _without_none(hint) is not hint
        schema = schema_for(_without_none(hint), place)
        if name in notes and not _has_note(hint):
            schema = dict(schema, description=notes[name])
        default = parameter.default
        if default is not parameter.empty and default is not None and _is_plain_json(default):
            schema = dict(schema, default=to_json_value(default))
        properties[name] = schema
        names.append(name)
        if not optional:
            required.append(name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema, names


def _is_plain_json(value):
    if isinstance(value, enum.Enum):
        return _is_plain_json(value.value)
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain_json(v) for v in value)
    return False


def output_schema(hint, where):
    """The output schema for a return annotation, or None when it has none.

    Only a dataclass or a TypedDict (an object) declares structured content;
    `Output`, `str`, `None` or no annotation do not.
    """
    hint = _strip_annotated(hint)
    if is_object_type(hint):
        return object_schema(hint, f"{where}, return type", output=True, seen=(hint,))
    return None


def decode(value, hint):
    """Turns a JSON value (already validated by the host) into `hint`'s type."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return decode(value, args[0])
    if value is None:
        return None
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if origin is typing.Union or origin is types.UnionType:
        members, _ = _members(hint)
        for member in members:
            if _fits(value, member):
                return decode(value, member)
        return value
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return hint(value)
    if origin in (list, tuple) and isinstance(value, list):
        items = [decode(v, args[0]) for v in value] if args else value
        return tuple(items) if origin is tuple else items
    if origin is dict and isinstance(value, dict) and args:
        return {k: decode(v, args[1]) for k, v in value.items()}
    if inspect.isclass(hint) and dataclasses.is_dataclass(hint) and isinstance(value, dict):
        hints = hints_of(hint)
        fields = {f.name for f in dataclasses.fields(hint) if f.init}
        values = {k: decode(v, hints[k]) for k, v in value.items() if k in fields}
        for name in fields - values.keys():
            # Absent and without a default: an optional field, so None.
            field = hint.__dataclass_fields__[name]
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                values[name] = None
        return hint(**values)
    if is_typeddict(hint) and isinstance(value, dict):
        hints = hints_of(hint)
        return {k: decode(v, hints[k]) if k in hints else v for k, v in value.items()}
    return value


def _fits(value, hint):
    """Whether a JSON value has the shape of `hint` (to pick a union member)."""
    hint = _strip_annotated(hint)
    origin = typing.get_origin(hint)
    if hint is typing.Any or hint is object:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return value in [m.value for m in hint]
    if origin in (list, tuple) or hint in (list, tuple):
        return isinstance(value, list)
    return isinstance(value, dict)


def to_json_value(value):
    """A returned value (dataclass, TypedDict, enum, ...) as plain JSON data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return value
