"""Checking a tool call's input against its JSON Schema, with a path for every problem.

A small subset of JSON Schema — the part tool definitions use: type, properties,
required, additionalProperties, enum, items, minimum/maximum, minLength/maxLength. A call
that fails becomes an `is_error` result saying exactly what is wrong, so the model can
correct itself.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def check_input(value: Any, schema: dict[str, Any], path: str = "input") -> list[str]:
    """Every way `value` breaks `schema`; empty when it fits."""
    problems: list[str] = []
    expected = schema.get("type")
    if isinstance(expected, str) and expected in _TYPES:
        ok = isinstance(value, _TYPES[expected]) and not (
            expected in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            return [f"{path}: expected {expected}, got {_name(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problems.append(f"{path}: must be one of {allowed}")
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}.{key}: required")
        if schema.get("additionalProperties") is False:
            problems += [f"{path}.{key}: not allowed" for key in value if key not in properties]
        for key, item in value.items():
            if key in properties:
                problems += check_input(item, properties[key], f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems += check_input(item, schema["items"], f"{path}.{i}")
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            problems.append(f"{path}: must not be empty" if not value else f"{path}: too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            problems.append(f"{path}: longer than {schema['maxLength']} characters")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: must be at most {schema['maximum']}")
    return problems


def _name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, int | float) else type(value).__name__
    )
