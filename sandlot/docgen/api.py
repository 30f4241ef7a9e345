"""The API reference: the server's OpenAPI schema, as the server serves it, in Markdown.

Rendered from the schema of an app built on the default settings (the maximums it states are
those of a server with no config file), never from a running server: one endpoint per section
in the schema's order, grouped by tag, then every model with a row per field.
"""

from __future__ import annotations

import re
from typing import Any

from sandlot.config import SETTINGS, Config
from sandlot.docgen.tables import cell

Schema = dict[str, Any]
REF = "#/components/schemas/"
TAG_TITLES = {"rl": "RL rewards", "online judge": "Online judge", "coder": "AI coding"}
# A pattern longer than this is left to /openapi.json (its field's description says what it is).
PATTERN_WIDTH = 40


def schema() -> Schema:
    from sandlot.api import create_app  # the server's extras
    from sandlot.service import Service

    config = Config(**{s.name: s.default for s in SETTINGS})
    return create_app(Service(config)).openapi()


def anchor(heading: str) -> str:
    """The id MkDocs gives a heading (Python-Markdown's slugify; GitHub's agrees on these)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def model_link(ref: str) -> str:
    name = ref.removeprefix(REF)
    return f"[`{name}`](#{anchor(name)})"


class Renderer:
    def __init__(self, spec: Schema) -> None:
        self.spec = spec
        self.models: dict[str, Schema] = spec["components"]["schemas"]
        language = self.models["RunCodeRequest"]["properties"]["language"]
        self.language_names = frozenset(language.get("enum", ()))

    def type_of(self, s: Schema) -> str:
        """A field's type in words, with links to the models it names."""
        if "$ref" in s:
            return model_link(s["$ref"])
        if "anyOf" in s:
            kinds = [b for b in s["anyOf"] if b.get("type") != "null"]
            text = " or ".join(self.type_of(b) for b in kinds)
            return text + (" or null" if len(kinds) < len(s["anyOf"]) else "")
        if "const" in s:
            return f"`{s['const']!r}`".replace("'", '"')
        if "enum" in s:
            if set(s["enum"]) == self.language_names:
                return "a language name or alias ([Languages](languages.md))"
            return "one of " + ", ".join(f"`{v}`" for v in s["enum"])
        kind = s.get("type", "any")
        if kind == "array":
            return f"list of {self.grouped(s.get('items', {}))}"
        if kind == "object" and isinstance(s.get("additionalProperties"), dict):
            return f"map of string to {self.grouped(s['additionalProperties'])}"
        return str(kind)

    def grouped(self, s: Schema) -> str:
        """A type inside another: in brackets when it is a choice ("list of (a or b)")."""
        text = self.type_of(s)
        return f"({text})" if " or " in text else text

    def limits_of(self, s: Schema) -> list[str]:
        """The constraints a value must meet (on the field or any branch of it)."""
        found: list[str] = []
        for branch in [s, *s.get("anyOf", ())]:
            for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"),
                              ("exclusiveMaximum", "<")):  # fmt: skip
                if key in branch:
                    found.append(f"{word} {branch[key]:g}")
            for key, word in (("minLength", "characters ≥"), ("maxLength", "characters ≤"),
                              ("minItems", "items ≥"), ("maxItems", "items ≤")):  # fmt: skip
                if key in branch:
                    found.append(f"{word} {branch[key]:,}")
            pattern = branch.get("pattern")
            if pattern and len(pattern) <= PATTERN_WIDTH:
                found.append(f"matches `{pattern}`")
            elif pattern:
                found.append("a pattern (see /openapi.json)")
        return found

    def fields(self, model: Schema) -> list[str]:
        props = model.get("properties", {})
        if not props:
            return [f"{model.get('description') or model.get('type', 'any')}", ""]
        required = set(model.get("required", ()))
        lines = ["| field | type | default | limits | description |", "|---|---|---|---|---|"]
        for name, s in props.items():
            default = "required" if name in required else f"`{s.get('default')!r}`"
            default = default.replace("None", "null").replace("True", "true")
            default = default.replace("False", "false").replace("'", '"')
            lines.append(
                f"| `{name}` | {cell(self.type_of(s))} | {cell(default)} | "
                f"{cell(', '.join(self.limits_of(s)))} | {cell(s.get('description', ''))} |"
            )
        return [*lines, ""]

    def operation(self, method: str, path: str, op: Schema) -> list[str]:
        lines = [f"### `{method.upper()} {path}`", ""]
        if op.get("description"):
            lines += [" ".join(op["description"].split()), ""]
        params = [p for p in op.get("parameters", ())]
        if params:
            lines += ["Parameters: " + ", ".join(
                f"`{p['name']}` ({p['in']}, {self.type_of(p.get('schema', {}))})" for p in params
            ) + ".", ""]  # fmt: skip
        body = op.get("requestBody")
        if body:
            for media, content in body.get("content", {}).items():
                lines += [f"Request body ({media}): {self.type_of(content.get('schema', {}))}", ""]
        lines += ["| status | meaning | body |", "|---|---|---|"]
        for status, response in op.get("responses", {}).items():
            bodies = [
                f"{self.type_of(c['schema'])} ({media})" if c.get("schema") else media
                for media, c in response.get("content", {}).items()
            ]
            meaning = cell(response.get("description", ""))
            lines.append(f"| {status} | {meaning} | {cell('; '.join(bodies))} |")
        return [*lines, ""]

    def render(self) -> str:
        by_tag: dict[str, list[tuple[str, str, Schema]]] = {}
        for path, methods in self.spec["paths"].items():
            for method, op in methods.items():
                by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
        lines = []
        for tag, ops in by_tag.items():
            lines += [f"## {TAG_TITLES.get(tag, tag.capitalize())}", ""]
            for method, path, op in ops:
                lines += self.operation(method, path, op)
        lines += ["## Models", ""]
        for name in sorted(self.models):
            model = self.models[name]
            lines += [f"### {name}", ""]
            if model.get("description") and model.get("properties"):
                lines += [" ".join(model["description"].split()), ""]
            lines += self.fields(model)
        return "\n".join(lines).rstrip("\n")


def render() -> str:
    return Renderer(schema()).render()
