"""LocalContext: what the code around the cursor says (imports, scope, names in play)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from greprag.errors import RetrievalError
from greprag.files import decode_text, is_binary, read_bytes
from greprag.languages import STRING_LITERAL_RE, get_language, is_constant, language_for_path


@dataclass(frozen=True)
class ImportRef:
    """One imported name: ``from pkg.mod import Name as Alias`` → module=pkg.mod, name=Name."""

    module: str
    name: str | None = None
    alias: str | None = None
    line: int = 0

    @property
    def local_name(self) -> str:
        return self.alias or self.name or self.module.rsplit(".", 1)[-1]


@dataclass
class LocalContext:
    """The local context C_local at a cursor; built by ``build_local_context``.

    ``path`` is repo-relative (None for a bare left-context string). ``before`` is all
    text before the cursor; ``window`` the last ``window_lines`` lines of it (the cursor
    line's prefix included); ``prefix`` the cursor line up to the cursor. Lines longer
    than ``MAX_LINE_CHARS`` (minified or generated code) are kept only in part: the
    cursor line's end, other lines' start; ``line`` and ``column`` stay the real ones.
    """

    before: str
    window: str
    prefix: str
    path: str | None = None
    lang: str | None = None
    line: int = 1
    column: int = 0
    imports: list[ImportRef] = field(default_factory=list)
    enclosing_class: str | None = None
    class_bases: list[str] = field(default_factory=list)
    class_header: str | None = None
    enclosing_function: str | None = None
    function_signature: str | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    assignments: dict[str, str] = field(default_factory=dict)
    empty_body: bool = False


WINDOW_LINES = 30
# What is read of one line: every later stage then does bounded work per line, however
# long the input's lines (a 50 MB minified line would otherwise take hours to harvest).
MAX_LINE_CHARS = 1000

_PY_FROM = re.compile(r"^\s*from\s+([.\w]+)\s+import\s+\(?([^)#]*)")
_PY_IMPORT = re.compile(r"^\s*import\s+([\w., ]+)")
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+?)(\.\*)?\s*;")
_JS_IMPORT = re.compile(
    r"^\s*import\s+(?:type\s+)?(.+?)\s+from\s+['\"]([^'\"]+)['\"]|"
    r"^\s*(?:const|let|var)\s+(.+?)\s*=\s*require\(\s*['\"]([^'\"]+)['\"]\s*\)"
)
# an ``import`` (or ``export ... from``, or ``const { ... } = require(...)``) whose
# braced names go on below (``import {`` then one name a line)
_JS_IMPORT_OPEN = re.compile(
    r"^\s*(?:(?:im|ex)port\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?|(?:const|let|var)\s*)\{[^}]*$"
)
_JS_RENAMED = re.compile(r"([A-Za-z_$][\w$]*)\s*:\s*([A-Za-z_$][\w$]*)")
_JS_NAMESPACE = re.compile(r"\*\s*as\s+([A-Za-z_$][\w$]*)")  # ``* as core``: the module
_GO_IMPORT = re.compile(r"^\s*(?:import\s+)?(?:(\w+)\s+)?\"([\w./-]+)\"")
_RUST_USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+")
_CS_USING = re.compile(r"^\s*using\s+(?:static\s+)?([\w.]+)\s*;")

_PY_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\((.*)")
_PY_CLASS = re.compile(r"^(\s*)class\s+(\w+)\s*(?:\(([^)]*)\))?")
_BRACE_CLASS = re.compile(r"\b(?:class|interface|enum|record|struct|trait|impl)\s+(\w+)([^{]*)")
_BRACE_FUNC = re.compile(r"(\w+)\s*(?:<[^>]*>)?\s*\(([^)]*)\)?[^;{]*$")
_PY_ANNOT = re.compile(r"(?:self\.)?(\w+)\s*:\s*([A-Za-z_][\w.]*(?:\[[^\]=]*\])?)")
_PY_ASSIGN = re.compile(r"^\s*(self\.)?(\w+)\s*(?::[^=]+)?=\s*([A-Za-z_][\w.]*)\s*\(")
# ``with make_bar(3) as bar:`` binds bar to what the call returns (its __enter__ mostly
# returns itself; a @contextmanager yields it), each item of a multi-item ``with`` alike
_PY_WITH_ITEM = re.compile(r"([A-Za-z_][\w.]*)\s*\((?:[^()]|\([^()]*\))*\)\s+as\s+(\w+)\b")
_GO_ASSIGN = re.compile(r"\b(\w+)\s*:?=\s*&?([A-Z]\w*)\s*[{(]|\b(\w+)\s*:=\s*(?:\w+\.)?New(\w+)\(")
# typed declarations and ``x = new T``, never matching across a line: run over a whole
# text, they find what they find line by line, in the same order. The type's first letter
# comes first, its word boundary checked behind it: a pattern that opens with a character
# class lets the regex engine skip to candidate letters; one that opens with ``\b`` is
# tried at every position
_TYPED_DECL = re.compile(
    r"([A-Z](?<!\w\w)[\w$]*(?:<[^;=()\n]*>)?(?:\[\])*)[^\S\n]+([a-z_$][\w$]*)[^\S\n]*(?:=|;|,|\))"
)
_NEW_ASSIGN = re.compile(
    r"\b(?:this\.)?([A-Za-z_$][\w$]*)[^\S\n]*=[^\S\n]*new[^\S\n]+([A-Z][\w$.]*)"
)
_TYPED_ONLY_LANGS = {"java", "javascript", "csharp"}  # no language-specific binding patterns
_BRACE_LANGS = {"java", "javascript", "typescript", "go", "rust", "csharp"}
_CONTROL = frozenset(
    ["if", "for", "while", "switch", "catch", "return", "new", "else", "do", "try", "synchronized"]
)


def parse_imports(lines: Sequence[str], lang: str | None) -> list[ImportRef]:
    """The import statements among ``lines`` (1-based line numbers)."""
    refs: list[ImportRef] = []
    needs_import_word = lang in ("python", "java")  # each of their patterns has it
    for number, line in enumerate(lines, 1):
        if needs_import_word and "import" not in line:
            continue
        if lang == "python" or lang is None:
            if m := _PY_FROM.match(line):
                names = m.group(2)
                if "(" in line and ")" not in line:  # a parenthesised import goes on below
                    for more in lines[number : number + 200]:
                        names += " " + more.split("#", 1)[0]
                        if ")" in more:
                            names = names.split(")", 1)[0]
                            break
                for part in names.replace("\\", "").split(","):
                    words = part.split()
                    if words and words[0].isidentifier():
                        alias = words[2] if len(words) == 3 and words[1] == "as" else None
                        refs.append(ImportRef(m.group(1), words[0], alias, number))
                continue
            if m := _PY_IMPORT.match(line):
                for part in m.group(1).split(","):
                    words = part.split()
                    if words:
                        alias = words[2] if len(words) == 3 and words[1] == "as" else None
                        refs.append(ImportRef(words[0], None, alias, number))
                continue
        if lang in ("java", None) and (m := _JAVA_IMPORT.match(line)):
            module, star = m.group(1), m.group(2)
            if star:
                refs.append(ImportRef(module, None, None, number))
            else:
                pkg, _, name = module.rpartition(".")
                refs.append(ImportRef(pkg or module, name, None, number))
        elif lang in ("javascript", "typescript") and (
            m := _JS_IMPORT.match(js_statement(lines, number))
        ):
            if m.group(1):
                names, source = m.group(1), m.group(2)
            else:  # ``const { readFile: read } = require(...)``: ``read`` names ``readFile``
                names, source = _JS_RENAMED.sub(r"\1 as \2", m.group(3)), m.group(4)
            for alias in _JS_NAMESPACE.findall(names):
                refs.append(ImportRef(source, None, alias, number))
            names = _JS_NAMESPACE.sub(" ", names)
            for word in re.findall(r"[A-Za-z_$][\w$]*(?:\s+as\s+[A-Za-z_$][\w$]*)?", names):
                parts = word.split()
                alias = parts[2] if len(parts) == 3 else None
                if parts[0] not in ("type", "as"):
                    refs.append(ImportRef(source, parts[0], alias, number))
        elif lang == "go" and (m := _GO_IMPORT.match(line)) and ("import" in line or '"' in line):
            refs.append(ImportRef(m.group(2), None, m.group(1) or go_package(m.group(2)), number))
        elif lang == "rust" and (m := _RUST_USE.match(line)):
            statement = line[m.end() :]
            for more in lines[number : number + 200]:  # ``use a::{`` goes on below
                if ";" in statement:
                    break
                statement += " " + more.split("//", 1)[0]
            refs += _rust_uses([], statement.split(";", 1)[0], number)
        elif lang == "csharp" and (m := _CS_USING.match(line)):
            refs.append(ImportRef(m.group(1), None, None, number))
    return refs


def js_statement(lines: Sequence[str], number: int) -> str:
    """Line ``number`` (1-based), or, for an ``import {``, ``export {`` or ``const {``
    whose names go on below, the statement up to its closing brace's line as one line
    (line comments dropped)."""
    line = lines[number - 1]
    if "{" not in line or not _JS_IMPORT_OPEN.match(line):
        return line
    parts = [line]
    for more in lines[number : number + 200]:
        parts.append(more.split("//", 1)[0])
        if "}" in more:
            break
    return " ".join(parts)


_GO_MAJOR = re.compile(r"v\d+")


def go_package(path: str) -> str:
    """The name a Go import path is used by when not renamed: its last element, less a
    major version (``…/yaml/v3``, ``gopkg.in/yaml.v3``: ``yaml``)."""
    parts = path.split("/")
    if len(parts) > 1 and _GO_MAJOR.fullmatch(parts[-1]):
        parts.pop()
    return re.sub(r"\.v\d+$", "", parts[-1])


def _rust_uses(prefix: list[str], tree: str, number: int) -> list[ImportRef]:
    """The names a ``use`` tree brings in: ``a::B``, ``a::B as C``, each of ``a::{B,
    c::{D, E as F}, self}`` (``self``: the module ``a`` itself), the module of ``a::*``."""
    refs = []
    for item in _top_level_items(tree):
        if "{" in item:
            head, _, inner = item.partition("{")
            path = prefix + [p for p in head.strip().split("::") if p]
            refs += _rust_uses(path, inner.rsplit("}", 1)[0], number)
            continue
        words = item.split()
        if not words:
            continue
        alias = words[2] if len(words) == 3 and words[1] == "as" else None
        parts = prefix + [p for p in words[0].split("::") if p]
        if parts and parts[-1] == "*":
            refs.append(ImportRef("::".join(parts[:-1]), None, None, number))
        elif parts and parts[-1] == "self":
            if len(parts) >= 2:
                refs.append(ImportRef("::".join(parts[:-2]), parts[-2], alias, number))
        elif parts and parts[-1].isidentifier():
            refs.append(ImportRef("::".join(parts[:-1]), parts[-1], alias, number))
    return refs


def _top_level_items(tree: str) -> list[str]:
    """``tree`` cut at the commas outside braces."""
    items, depth, start = [], 0, 0
    for at, char in enumerate(tree):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(tree[start:at])
            start = at + 1
    return [*items, tree[start:]]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _python_scope(lines: Sequence[str], ctx: LocalContext) -> None:
    """Enclosing function and class by indentation, scanning up from the cursor."""
    current = _indent(ctx.prefix) if ctx.prefix.strip() else None
    limit = current if current is not None else 10**6
    scan = _MAX_SCANNED_LINES
    number = len(lines)
    while number > 0:
        number -= 1
        line = lines[number]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if number == len(lines) - 1 and ctx.prefix.strip():
            continue
        if line.lstrip()[:1] in _CLOSERS and scan > 0:  # ``):`` of a long signature:
            opener = _bracket_opener(lines, number, scan)  # its ``def`` line counts
            if opener is None:
                scan -= min(scan, number + 1)
            else:
                scan -= number - opener + 1
                number, line = opener, lines[opener]
        indent = _indent(line)
        if indent >= limit:
            continue
        if (
            ctx.enclosing_function is None
            and ctx.enclosing_class is None
            and (m := _PY_DEF.match(line))
        ):
            ctx.enclosing_function = m.group(2)
            ctx.function_signature = _join_signature(lines, number)
            limit = indent
            continue
        if m := _PY_CLASS.match(line):
            ctx.enclosing_class = m.group(2)
            ctx.class_header = line.strip()
            ctx.class_bases = [
                b.strip().split("[")[0]
                for b in (m.group(3) or "").split(",")
                if b.strip() and "=" not in b
            ]
            return
        limit = min(limit, indent)
        if indent == 0:
            return


_CLOSERS = ")]}"
# lines a bracketed signature may span: fastapi's run to 355, each parameter's doc a
# triple-quoted string in its annotation (``Doc("""...""")``)
_MAX_BRACKETED_LINES = 1000
# the lines all bracket scans of one context may read: a closing bracket on each of
# thousands of lines, unbalanced, cost seconds
_MAX_SCANNED_LINES = 4 * _MAX_BRACKETED_LINES
_TRIPLE_QUOTES = re.compile(r"\"\"\"|'''")


def _bracket_opener(
    lines: Sequence[str], number: int, most: int = _MAX_BRACKETED_LINES
) -> int | None:
    """The line where the brackets that line ``number`` closes were opened; None when not
    found within ``most`` lines. Python: brackets in strings, those spanning lines
    included, and in comments do not count."""
    depth = 0
    inside = False  # in a triple-quoted string, scanning up from below it
    for above in range(number, max(-1, number - most), -1):
        code = lines[above]
        parts = _TRIPLE_QUOTES.split(code)
        if len(parts) % 2 == 0:  # a string spanning lines closes (or opens) here
            code = parts[0] if inside else parts[-1]
            inside = not inside
        elif inside:
            continue
        code = _strip_strings(code).split("#", 1)[0]
        depth += sum(map(code.count, _CLOSERS)) - sum(map(code.count, "([{"))
        if depth <= 0:
            return above
    return None


def _join_signature(lines: Sequence[str], index: int, max_lines: int = 8) -> str:
    parts = []
    for line in lines[index : index + max_lines]:
        parts.append(line.strip())
        if line.rstrip().endswith((":", "{", ";")):
            break
    return " ".join(parts)


def _brace_scope(lines: Sequence[str], ctx: LocalContext) -> None:
    """Enclosing method and class for brace languages, by brace depth scanning upward."""
    depth = 0
    for number in range(len(lines) - 1, -1, -1):
        line = lines[number]
        if "{" not in line and "}" not in line:
            continue
        line = _strip_strings(line)
        depth += line.count("}") - line.count("{")
        if depth >= 0 or "{" not in line:
            continue
        depth = 0  # this line opens a scope that encloses the cursor
        # the header's lines without comments: ``// on a class`` above names no class
        parts = (_strip_strings(part).strip() for part in lines[max(0, number - 2) : number + 1])
        header = " ".join(part for part in parts if not part.startswith(("*", "/*")))
        header = header.split("{")[-2] if header.count("{") > 1 else header.split("{")[0]
        if m := _BRACE_CLASS.search(header):
            ctx.enclosing_class = ctx.enclosing_class or m.group(1)
            ctx.class_header = ctx.class_header or header.strip()
            if not ctx.class_bases:
                declared = {m.group(1), *_type_parameters(m.group(2))}
                bases = re.findall(r"[A-Z][\w$]*", m.group(2))
                ctx.class_bases = [w for w in dict.fromkeys(bases) if w not in declared]
            return
        if ctx.enclosing_function is None and _strip_strings(line).rstrip().endswith("{"):
            header = _brace_header_before(lines, number)  # a parameter list of many lines
        m = _BRACE_FUNC.search(header) if ctx.enclosing_function is None else None
        if m and m.group(1) not in _CONTROL:
            ctx.enclosing_function = m.group(1)
            ctx.function_signature = header.strip()


def _type_parameters(rest: str) -> list[str]:
    """The type parameters a class header declares right after its name (``<K, V extends
    Comparable<V>>`` → K, V): names, not classes to look for."""
    rest = rest.lstrip()
    if not rest.startswith("<"):
        return []
    depth, names, expecting = 0, [], True
    for token in re.finditer(r"[<>,]|[A-Za-z_$][\w$]*", rest):
        text = token.group(0)
        if text == "<":
            depth += 1
        elif text == ">":
            depth -= 1
            if depth == 0:
                break
        elif text == ",":
            expecting = depth == 1
        elif expecting and depth == 1:
            names.append(text)
            expecting = False
    return names


_STRINGS_AND_LINE_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//.*$')


def _strip_strings(line: str) -> str:
    return _STRINGS_AND_LINE_COMMENT.sub("", line)


def _bindings(lines: Sequence[str], ctx: LocalContext) -> None:
    """Visible annotations (name → type) and assignments (name → constructor/type)."""
    if ctx.lang in _TYPED_ONLY_LANGS:  # two patterns, each feeding its own map: one pass each
        text = "\n".join(lines)
        for type_name, name in _TYPED_DECL.findall(text):
            if type_name.split("<")[0] not in ("return", "new"):
                ctx.annotations[name] = type_name
        if "new" in text:  # a match lies within one line: only lines with "new" are read
            news = "\n".join(line for line in lines if "new" in line)
            ctx.assignments.update(_NEW_ASSIGN.findall(news))
        return
    for line in lines:
        if ctx.lang == "python" or ctx.lang is None:
            if "=" in line and "(" in line and (m := _PY_ASSIGN.match(line)):
                ctx.assignments[m.group(2)] = m.group(3)
            stripped = line.strip()
            if stripped.startswith(("with ", "async with ")) and " as " in stripped:
                ctx.assignments.update(
                    (name, callee) for callee, name in _PY_WITH_ITEM.findall(line)
                )
            if stripped.startswith(("def ", "async def ")) or ":" in stripped:
                for name, annotation in _PY_ANNOT.findall(stripped):
                    if name not in ("def", "class", "lambda", "return", "else", "try"):
                        ctx.annotations[name] = annotation
        if ctx.lang in _BRACE_LANGS or ctx.lang is None:
            for type_name, name in _TYPED_DECL.findall(line):
                if type_name.split("<")[0] not in ("return", "new"):
                    ctx.annotations[name] = type_name
            for name, type_name in _NEW_ASSIGN.findall(line) if "new" in line else ():
                ctx.assignments[name] = type_name
            if ctx.lang in ("typescript", "rust", "go"):
                for name, type_name in re.findall(r"\b(\w+)\s*[?!]?:\s*([A-Z][\w.]*)", line):
                    ctx.annotations[name] = type_name
            if ctx.lang == "go":
                for a, b, c, d in _GO_ASSIGN.findall(line):
                    if a:
                        ctx.assignments[a] = b
                    elif c:
                        ctx.assignments[c] = d


_PY_DOC_QUOTES = ('"""', "'''")
_ONE_LINE_DOCSTRING = re.compile(rf"[rRuU]?(?:{STRING_LITERAL_RE.pattern})")
# a comment after a docstring's closing quotes (pydantic's linter directives)
_COMMENT_AFTER_QUOTES = re.compile(r"(\"\"\"|'''|[\"'])\s*#.*$")
_PY_DEF_START = re.compile(r"^\s*(async\s+)?def\s")
_PY_BLOCK_START = re.compile(
    r"^\s*(if|elif|else|for|while|with|try|except|finally|class|match|case|async\s+(for|with))\b"
)
_SIGNATURE_LINES = 12  # a signature spread over more lines than this is not recognised


def _skip_docstring(lines: Sequence[str], index: int) -> int:
    """The index of the line above a docstring that ends on line ``index`` (or ``index``)."""
    stripped = _COMMENT_AFTER_QUOTES.sub(r"\1", lines[index].strip())
    if _ONE_LINE_DOCSTRING.fullmatch(stripped):  # ``"All args are strings"``
        return index - 1
    if not stripped.endswith(_PY_DOC_QUOTES):
        return index
    quote = stripped[-3:]
    opened = stripped[:-3]
    if quote in opened.lstrip("rRbBuUfF"):  # opens and closes on this line
        return index - 1
    for above in range(index - 1, -1, -1):
        if quote in lines[above]:
            return above - 1
    return index


def _empty_body(lines: Sequence[str], prefix: str, lang: str | None) -> bool:
    """The cursor opens an empty body: only whitespace typed after a function's signature
    (and its docstring), spread over one line or several, ``{`` on its own line or not."""
    if prefix.strip():
        return False
    above = [i for i in range(len(lines) - 2, -1, -1) if lines[i].strip()]
    if not above:
        return False
    last = above[0]
    if lang in _BRACE_LANGS:
        if not lines[last].rstrip().endswith("{"):
            return False
        header = _brace_header_before(lines, last)
        m = _BRACE_FUNC.search(header)
        return (
            bool(m)
            and m.group(1) not in _CONTROL
            and not re.search(r"\bnew\s+[\w.<>]+\s*\($", header[: m.end(1) + 1])
        )
    last = _skip_docstring(lines, last)
    while last >= 0 and not lines[last].strip():
        last -= 1
    if last < 0 or not lines[last].split("#", 1)[0].rstrip().endswith(":"):
        return False
    top = last  # a long signature's ``) -> X:`` is looked at from where it opened
    if lines[last].lstrip()[:1] in _CLOSERS:
        opener = _bracket_opener(lines, last)
        top = last if opener is None else opener
    for index in range(top, max(-1, top - _SIGNATURE_LINES), -1):
        if _PY_DEF_START.match(lines[index]):
            return _indent(lines[index]) < len(prefix.expandtabs())
        if _PY_BLOCK_START.match(lines[index]) or (
            index < last and lines[index].rstrip().endswith(":")
        ):
            return False  # another block opens in between
    return False


def _clipped(lines: Sequence[str]) -> list[str]:
    """``lines`` with each longer than ``MAX_LINE_CHARS`` cut: the last (the cursor's)
    keeps its end, the others their start."""
    last = len(lines) - 1
    return [
        line
        if len(line) <= MAX_LINE_CHARS
        else (line[-MAX_LINE_CHARS:] if number == last else line[:MAX_LINE_CHARS])
        for number, line in enumerate(lines)
    ]


def _brace_header_before(lines: Sequence[str], index: int) -> str:
    """The header a ``{`` at the end of line ``index`` closes: that line without the brace,
    joined with the lines above it back to the previous statement (at most a few, and
    the whole parameter list when it spans more lines, annotated parameters included)."""
    parts = [_strip_strings(lines[index]).rstrip().removesuffix("{")]
    open_parens = parts[0].count(")") - parts[0].count("(")  # inside a parameter list
    for above in range(index - 1, max(-1, index - _SIGNATURE_LINES), -1):
        code = _strip_strings(lines[above]).strip()
        if not code or code.endswith((";", "{", "}")):
            break
        if open_parens <= 0 and (code.startswith(("@", "*", "/")) or len(parts) > 3):
            break  # an annotation or comment above the header, or a header this long
        parts.insert(0, code)
        open_parens += code.count(")") - code.count("(")
    return " ".join(part.strip() for part in parts)


def build_local_context(
    before: str,
    *,
    path: str | None = None,
    lang: str | None = None,
    line: int | None = None,
    column: int | None = None,
    window_lines: int = WINDOW_LINES,
) -> LocalContext:
    """Read the local context out of the text before the cursor."""
    lines = _clipped(before.split("\n"))
    prefix = lines[-1]
    ctx = LocalContext(
        before="\n".join(lines),
        window="\n".join(lines[-window_lines:]),
        prefix=prefix,
        path=path,
        lang=lang,
        line=line if line is not None else len(lines),
        column=column if column is not None else len(before) - before.rfind("\n") - 1,
    )
    ctx.imports = parse_imports(lines, lang)
    if lang in _BRACE_LANGS:
        _brace_scope(lines, ctx)
    else:
        _python_scope(lines, ctx)
    _bindings(lines, ctx)
    ctx.empty_body = _empty_body(lines, prefix, lang)
    return ctx


def context_at(
    root: Path,
    file: str | Path,
    line: int | None,
    column: int | None = None,
    *,
    language: str | None = None,
    window_lines: int = WINDOW_LINES,
) -> LocalContext:
    """The LocalContext at (file, line, column) of the repo at ``root`` (a real path).

    Raises ``RetrievalError`` for a file outside the repo or missing, and a line or column
    past the end.
    """
    relative, full = repo_relative(root, file)
    if not full.is_file():
        raise RetrievalError(f"file not found: {file}")
    data = read_bytes(root, relative)
    if data is None:
        raise RetrievalError(f"cannot read {relative}")
    if is_binary(data):
        raise RetrievalError(f"{relative} is a binary file, not code")
    # rg's lines (split at "\n" only, "\r" dropped), plus the empty one after a final newline
    lines = [line.removesuffix("\r") for line in decode_text(data).split("\n")]
    if line is None:
        raise RetrievalError("a line number is needed with --file")
    if line < 1:
        raise RetrievalError(f"line {line}: lines count from 1")
    if line > len(lines):
        raise RetrievalError(f"line {line} is past the end of {relative} ({len(lines)} lines)")
    current = lines[line - 1]
    col = len(current) if column is None else column
    if col < 0:
        raise RetrievalError(f"column {col}: columns count from 0")
    if col > len(current):
        raise RetrievalError(f"column {col} is past the end of line {line} ({len(current)} chars)")
    before = "\n".join([*lines[: line - 1], current[:col]])
    lang = get_language(language) or language_for_path(relative)
    return build_local_context(
        before,
        path=relative,
        lang=lang.name if lang else None,
        line=line,
        column=col,
        window_lines=window_lines,
    )


def repo_relative(root: Path, file: str | Path) -> tuple[str, Path]:
    """``file`` (relative to ``root``, a real path, or absolute) as a repo-relative POSIX
    path and its resolved location; ``RetrievalError`` when it lies outside the repo."""
    path = Path(file)
    full = (path if path.is_absolute() else root / path).resolve()
    try:
        relative = full.relative_to(root).as_posix()
    except ValueError:
        raise RetrievalError(f"file is outside the repository: {file}") from None
    if relative == ".":
        raise RetrievalError(f"not a file: {file}")
    return relative, full


def context_of_text(
    left_context: str,
    *,
    language: str | None = None,
    window_lines: int = WINDOW_LINES,
    path: str | None = None,
) -> LocalContext:
    """The LocalContext after ``left_context`` (code before the cursor). ``path``, the
    repo-relative file the text comes from (an editor buffer), sets the language when
    ``language`` does not, and lets retrieval leave that file's lines out."""
    lang = get_language(language)
    if language and lang is None:
        raise RetrievalError(f"unknown language: {language}")
    if lang is None and path is not None:
        lang = language_for_path(path)
    return build_local_context(
        left_context, path=path, lang=lang.name if lang else None, window_lines=window_lines
    )


# -- cursor predicates (what the routes ask of a cursor) ----------------------------

PROSE_WORD_SHARE = 0.7
_MEMBER_RE = re.compile(r"(?:\b(?:self|this)\.)?\b([A-Za-z_$][\w$]*)\.\s*[\w$]*$")
_WORD_RE = re.compile(r"[A-Za-z][a-z'’-]*[,.;:!?]?")
_SELF_NAMES = frozenset({"self", "this", "cls", "super"})
_ACCESS_RE = re.compile(r"([A-Za-z_$][\w$]*)(?:\([^()]*\)|\[[^\[\]]*\])?\.\s*[\w$]*$")


def is_prose(ctx: LocalContext) -> bool:
    """A natural-language question: no language and mostly plain words."""
    if ctx.lang is not None:
        return False
    tokens = (ctx.window or ctx.before).split()
    words = [t for t in tokens if _WORD_RE.fullmatch(t)]
    return len(tokens) >= 3 and len(words) >= PROSE_WORD_SHARE * len(tokens)


def untyped_receiver(ctx: LocalContext) -> str | None:
    """The receiver of a member access at the cursor when its type is nowhere named."""
    match = _MEMBER_RE.search(ctx.prefix)
    if match is None:
        return None
    receiver = match.group(1)
    known = set(ctx.annotations) | set(ctx.assignments)
    imported = {imp.local_name for imp in ctx.imports}
    if (
        receiver in _SELF_NAMES
        or receiver in known
        or f"self.{receiver}" in known
        or receiver in imported
        or receiver[:1].isupper()
    ):
        return None
    return receiver


def member_receiver(ctx: LocalContext) -> str | None:
    """The object of a member access at the cursor (``item.``, ``self.io_loop.``,
    ``get().``, ``MLK_DAY.``: a constant); None after ``self.``, an imported name or a
    class name."""
    match = _ACCESS_RE.search(ctx.prefix)
    if match is None:
        return None
    receiver = match.group(1)
    imported = {imp.local_name for imp in ctx.imports}
    if receiver in _SELF_NAMES or receiver in imported:
        return None
    if receiver[:1].isupper() and not is_constant(receiver):
        return None
    return receiver
