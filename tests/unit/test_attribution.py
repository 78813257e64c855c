"""Attributing rg's matched lines to queries: the cheap checks before a regex runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from greprag.languages import LANGUAGES
from greprag.models import Query
from greprag.routes.grep import _compile, _possible

NAME = "Widget"


def _query(pattern: str, purpose: str = "definition", identifier: str = NAME) -> Query:
    return Query(pattern=pattern, identifier=identifier, purpose=purpose, kind="class")


def _templates() -> list[tuple[str, Query]]:
    """Every definition, wildcard and import template of every language, for NAME."""
    found = []
    for lang in LANGUAGES.values():
        for kind, template in lang.definition.items():
            found.append((f"{lang.name} {kind}", _query(template.replace("{name}", NAME))))
        for field, template in vars(lang.wildcards).items():
            pattern = template.replace("{name}", NAME)
            found.append((f"{lang.name} {field}", _query(pattern, "wildcard")))
        if lang.import_probe:
            pattern = lang.import_probe.replace("{names}", f"({NAME}|Gadget)")
            found.append((f"{lang.name} import", _query(pattern, "import", f"{NAME},Gadget")))
    return found


def _lines() -> list[str]:
    """Real lines of this repository's code with the name put in, and awkward ones."""
    source = Path(__file__).resolve().parents[2] / "greprag"
    lines = []
    for path in sorted(source.rglob("*.py"))[:40]:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if "(" in line or "class" in line or "=" in line:
                lines.append(line.replace("self", NAME, 1))
    lines += [
        f"class {NAME}(Base):",
        f"    def {NAME}(self, x):",
        f"public final class {NAME} {{",
        f"public @interface {NAME} {{",
        f"    private static int {NAME}(int a) {{",
        f"\tint\t{NAME} = 3;",
        f"int\u00a0{NAME}(int a) {{",  # a no-break space: rg's Unicode \s matches it
        f"{NAME} = make()",
        f"export const {NAME} = () => 1",
        f"func {NAME}(a int) error {{",
        f"struct {NAME} {{",
        f"fn {NAME}<T>(x: T) -> T {{",
        f"x = {NAME}.build().{NAME}(y)",
        f"class Button(Base, {NAME}):",
        f"public class Button extends Base implements {NAME} {{",
        f"class Button extends {NAME} {{",
        f"type {NAME} struct {{",
        f"public class Button implements\u00a0{NAME} {{",
    ]
    return lines


@pytest.mark.parametrize(("label", "query"), _templates(), ids=[t[0] for t in _templates()])
def test_the_cheap_checks_never_rule_out_a_line_the_pattern_matches(label, query):
    compiled = _compile(0, query)
    assert compiled is not None, label
    matched = 0
    for line in _lines():
        if compiled.search(line):
            matched += 1
            assert _possible([compiled], line) == [compiled], (label, line)
    assert matched, f"{label}: no test line matches, the check says nothing"


def test_definition_templates_get_their_keywords_and_spaced_name():
    java = LANGUAGES["java"]
    compiled = _compile(0, _query(java.definition["class"].replace("{name}", NAME)))
    assert compiled.lead == ("class", "interface", "enum", "record")
    assert compiled.spaced == NAME
    method = _compile(0, _query(java.definition["method"].replace("{name}", NAME)))
    assert method.lead == () and method.spaced == NAME
    # a usage line of the class holds its name but neither a keyword nor a space before it
    assert _possible([compiled, method], f"    return make({NAME}.of(x));") == []
    assert _possible([compiled, method], f"    {NAME}.check(x);") == [method]


def test_no_cheap_check_where_the_pattern_does_not_promise_it():
    two_branches = _compile(0, _query(rf"\bclass\s+{NAME}\b|^{NAME}\s*="))
    optional = _compile(0, _query(rf"^(int\s+{NAME})?\s*{NAME}\("))
    model = _compile(0, _query(rf"\bclass\s+{NAME}\b", purpose="llm"))
    for compiled in (two_branches, optional, model):
        assert compiled.lead == () and compiled.spaced == ""
    assert _possible([optional], f"{NAME}(x)") == [optional]
