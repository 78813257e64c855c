"""Languages we know: file extensions, rg types, keywords and every rg query template.

Templates are regexes for ripgrep (Rust regex syntax) with ``{name}`` standing for an
already-escaped identifier (identifiers are ``[A-Za-z_$][\\w$]*``, so only ``$`` needs
escaping) and ``{names}`` for a group of alternatives, ``(A|B|C)``. A language has
definition templates per kind, wildcard templates (``Wildcards``) and, where imports can
be traced, an import-probe template; ``USAGE`` is shared by all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import PurePosixPath

# Unicode letters count (``größe``); patterns naming them run with Unicode word classes
# (``greprag.rg.rg_pattern``), the rest ASCII-only for speed.
IDENTIFIER_RE = re.compile(r"(?:[^\W\d]|\$)[\w$]*")
STRING_LITERAL_RE = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")  # on one line


def words(text: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words of ``text``."""
    return frozenset(text.split())


# Call sites and member uses of a name, by the kind of name (any language). A class's
# generic construction (``new Name<>(``) is matched after the name, not as
# ``new\s+Name``: rg would take ``new `` and its kin as the literals that pick the
# lines to check, and ``new`` is on every tenth line of Java (the pass's rg CPU falls
# 10-15 % on the JDK: docs/benchmarks.md).
USAGE = {
    "method": r"\.{name}\s*\(|\b{name}\s*\(",
    "class": r"\b{name}\s*(?:[.(]|<[^;]*>\s*\()|:\s*{name}\b",
    "variable": r"\.{name}\.\w+|\b{name}\.\w+\s*\(",
}


@dataclass(frozen=True)
class Wildcards:
    """Templates for a name that is only part of the one sought, or for its subclasses."""

    class_suffix: str  # ``self.data_loader.`` → a class named ``*DataLoader``
    class_prefix: str  # a half-typed class name
    method_prefix: str  # a half-typed method name
    subclass: str  # classes deriving from {name} (siblings of an empty body's class)


BRACE_WILDCARDS = Wildcards(
    class_suffix=r"\b(class|interface|struct|type)\s+\w*{name}\b",
    class_prefix=r"\b(class|interface|enum|record|struct|trait|type)\s+{name}\w*",
    method_prefix=r"\b{name}\w*\s*\([^;]*\)\s*(\{|throws|:|=>)",
    subclass=r"\b(extends|implements)\s+([\w.<>, ]*\b)?{name}\b",
)


@dataclass(frozen=True)
class Language:
    name: str
    extensions: tuple[str, ...]
    rg_type: str
    keywords: frozenset[str]
    definition: dict[str, str] = field(default_factory=dict)
    grammar: str | None = None  # module of the tree-sitter grammar wheel
    line_comment: str = "//"
    wildcards: Wildcards = BRACE_WILDCARDS
    # top-level definitions of any of {names}: the in-repo names a file imports
    import_probe: str | None = None
    # the similar route's prior in this language, times ``similar_weight``
    similar_scale: float = 1.0
    # BM25's share of the final score's mix of BM25 and the probes' prior (their weights'
    # sum kept); None: the settings' own mix
    bm25_share: float | None = None


_COMMON_GENERIC = words(
    """
    self this cls super init config run data value values result results item items
    key keys name names args kwargs obj object options opts params get set put add
    main test tests type id len str int list dict tuple bool float none null true
    false new i j k n x y z e ex err error tmp temp val var res ret out input output
    file path line lines text count size index idx start end buf buffer msg message
    ctx context log logger
    """
)

PYTHON = Language(
    name="python",
    extensions=(".py", ".pyi"),
    rg_type="py",
    keywords=words(
        """
    False None True and as assert async await break class continue def del elif else
    except finally for from global if import in is lambda nonlocal not or pass raise
    return try while with yield match case print isinstance len range str int float
    dict list set tuple bool object super self cls type hasattr getattr setattr
    """
    ),
    definition={
        "class": r"^\s*class\s+{name}\b",
        "method": r"^\s*(async\s+)?def\s+{name}\s*\(",
        # ``(self\.|\s*)``, not ``(self\.)?``: the same lines, but rg's literal prefilter
        # (``greprag.rg.prefilter_friendly``) then sees the name alone, not ``self.name``
        # as well, which it cuts to ``self`` once a pass holds over 64 literals
        "variable": r"^\s*(self\.|\s*){name}\s*(:[^=\n]+)?=[^=]|^\s*{name}\s*:\s*[\w\[\]., |]+$",
    },
    grammar="tree_sitter_python",
    line_comment="#",
    wildcards=Wildcards(
        class_suffix=r"^\s*class\s+\w*{name}\b",
        class_prefix=r"^\s*class\s+{name}\w*|^{name}\w*\s*=",
        method_prefix=r"^\s*(async\s+)?def\s+{name}\w*\s*\(",
        subclass=r"^\s*class\s+\w+\s*\([^)]*\b{name}\b",
    ),
    import_probe=r"^\s*(class|(async\s+)?def)\s+{names}\b|^{names}\s*(:[^=\n]+)?=[^=]",
    # a Python file imports many in-repo names and their probes find every definition:
    # similar code needs a higher prior to keep its place (measured, docs/benchmarks.md)
    similar_scale=1.5,
)

_JAVA_MODIFIERS = (
    r"(public|private|protected|static|final|abstract|synchronized|native|default|"
    r"strictfp|transient|volatile)"
)

JAVA = Language(
    name="java",
    extensions=(".java",),
    rg_type="java",
    keywords=words(
        """
    abstract assert boolean break byte case catch char class const continue default
    do double else enum extends final finally float for goto if implements import
    instanceof int interface long native new package private protected public return
    short static strictfp super switch synchronized this throw throws transient try
    void volatile while var record yield null true false String Object Override
    Integer Long Boolean Double List Map Set System out println
    """
    ),
    definition={
        "class": r"\b(class|interface|enum|record|@interface)\s+{name}\b",
        "method": r"^\s*(" + _JAVA_MODIFIERS + r"\s+)*(<[^>]*>\s+)?[\w$<>\[\],.? ]+\s+{name}\s*\(",
        "variable": r"^\s*(" + _JAVA_MODIFIERS + r"\s+)*[\w$<>\[\],.? ]+\s+{name}\s*(=|;)",
    },
    grammar="tree_sitter_java",
    import_probe=r"\b(class|interface|enum|record|@interface)\s+{names}\b",
    # typed, verbose code: how much a candidate reads like the cursor's code says more
    # (docs/benchmarks.md: every Java set gained, the held-out bodies 66.5 -> 68.9)
    bm25_share=0.5,
)

_JS_KEYWORDS = words(
    """
    break case catch class const continue debugger default delete do else export
    extends finally for function if import in instanceof let new return super switch
    this throw try typeof var void while with yield async await of static get set
    null undefined true false console log require module exports
    """
)

_JS_DEFINITION = {
    "class": r"\b(class|interface|type|enum)\s+{name}\b",
    "method": (
        r"(\bfunction\s*\*?\s*{name}\s*[(<]|^\s*(public|private|protected|static|async|"
        r"readonly|abstract|\s)*\*?{name}\s*[(<]|"
        r"\b{name}\s*[:=]\s*(async\s+)?(function|\([^)]*\)\s*(:\s*[^=]+)?=>))"
    ),
    "variable": (
        r"\b(const|let|var|readonly)\s+{name}\b|"
        r"^\s*(public|private|protected|readonly|static|\s)*{name}\s*[?!]?:"
    ),
}

JAVASCRIPT = Language(
    name="javascript",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    rg_type="js",
    keywords=_JS_KEYWORDS,
    definition=_JS_DEFINITION,
    grammar="tree_sitter_javascript",
    import_probe=r"\b(class|function\*?|const|let|var)\s+{names}\b",
)

TYPESCRIPT = Language(
    name="typescript",
    extensions=(".ts", ".tsx", ".mts", ".cts"),
    rg_type="ts",
    keywords=_JS_KEYWORDS
    | words(
        """
    interface type enum namespace declare implements private public protected
    readonly abstract keyof infer is as any unknown never string number boolean
    """
    ),
    definition=_JS_DEFINITION,
    grammar="tree_sitter_typescript",
    import_probe=r"\b(class|interface|type|enum|function\*?|const|let|var)\s+{names}\b",
)

GO = Language(
    name="go",
    extensions=(".go",),
    rg_type="go",
    keywords=words(
        """
    break case chan const continue default defer else fallthrough for func go goto
    if import interface map package range return select struct switch type var nil
    true false err error string int bool byte rune make len append fmt
    """
    ),
    definition={
        "class": r"^\s*type\s+{name}\b",
        "method": r"^func\s+(\([^)]*\)\s*)?{name}\s*[\[(]",
        "variable": r"\b{name}\s*(:=|=)|^\s*(var|const)\s+{name}\b",
    },
    grammar="tree_sitter_go",
    wildcards=replace(BRACE_WILDCARDS, method_prefix=r"^func\s+(\([^)]*\)\s*)?{name}\w*\s*\("),
)

RUST = Language(
    name="rust",
    extensions=(".rs",),
    rg_type="rust",
    keywords=words(
        """
    as async await break const continue crate dyn else enum extern false fn for if
    impl in let loop match mod move mut pub ref return self Self static struct super
    trait true type unsafe use where while Some None Ok Err Option Result String Vec
    Box
    """
    ),
    definition={
        "class": (
            r"\b(struct|enum|trait|type|union)\s+{name}\b|"
            r"\bimpl(<[^>]*>)?\s+([\w:]+\s+for\s+)?{name}\b"
        ),
        "method": r"\bfn\s+{name}\s*[<(]",
        "variable": r"\b(let|const|static)\s+(mut\s+)?{name}\b",
    },
    grammar="tree_sitter_rust",
    import_probe=r"\b(struct|enum|trait|type|union|fn|const|static)\s+{names}\b",
    wildcards=replace(BRACE_WILDCARDS, method_prefix=r"\bfn\s+{name}\w*\s*[<(]"),
)

CSHARP = Language(
    name="csharp",
    extensions=(".cs",),
    rg_type="csharp",
    keywords=words(
        """
    abstract as base bool break byte case catch char checked class const continue
    decimal default delegate do double else enum event explicit extern false finally
    fixed float for foreach goto if implicit in int interface internal is lock long
    namespace new null object operator out override params private protected public
    readonly ref return sbyte sealed short sizeof stackalloc static string struct
    switch this throw true try typeof uint ulong unchecked unsafe ushort using
    virtual void volatile while var async await get set value record
    """
    ),
    definition={
        "class": r"\b(class|interface|enum|struct|record)\s+{name}\b",
        "method": r"^\s*(\w+\s+)*[\w<>\[\],.? ]+\s+{name}\s*[(<]",
        "variable": r"^\s*(\w+\s+)*[\w<>\[\],.? ]+\s+{name}\s*(=|;|\{)",
    },
    grammar="tree_sitter_c_sharp",
    import_probe=r"\b(class|interface|enum|struct|record)\s+{names}\b",
)

LANGUAGES: dict[str, Language] = {
    lang.name: lang for lang in (PYTHON, JAVA, JAVASCRIPT, TYPESCRIPT, GO, RUST, CSHARP)
}

_BY_EXTENSION: dict[str, Language] = {
    ext: lang for lang in LANGUAGES.values() for ext in lang.extensions
}

DOC_EXTENSIONS: tuple[str, ...] = (".md", ".markdown", ".rst", ".txt", ".html", ".htm")


def language_for_path(path: str | PurePosixPath) -> Language | None:
    """The language of a file, from its extension; None when unknown."""
    return _BY_EXTENSION.get(_suffix(str(path)))


@lru_cache(maxsize=8192)
def _suffix(path: str) -> str:
    """``path``'s extension, lower-cased (remembered: packing asks per block, every time)."""
    return PurePosixPath(path).suffix.lower()


def get_language(name: str | None) -> Language | None:
    """Look a language up by name (``python``, ``java``, ...); None for None or unknown."""
    if name is None:
        return None
    return LANGUAGES.get(name.lower())


def wildcards_for(name: str | None) -> Wildcards:
    """The wildcard templates of a language; the brace-language ones when it is unknown."""
    lang = get_language(name)
    return lang.wildcards if lang else BRACE_WILDCARDS


def is_constant(identifier: str) -> bool:
    """``MLK_DAY``, ``DEFAULT``: all capitals, longer than one letter (``T`` names a type)."""
    return identifier.isupper() and len(identifier) > 1


def is_generic(identifier: str) -> bool:
    """True for names so common that searching them floods (``init``, ``config``, ``run``)."""
    lowered = identifier.lower().strip("_")
    return lowered in _COMMON_GENERIC or len(lowered) <= 2


def escape_identifier(identifier: str) -> str:
    """Escape an identifier for a ripgrep regex (only ``$`` is special)."""
    if not IDENTIFIER_RE.fullmatch(identifier):
        raise ValueError(f"not an identifier: {identifier!r}")
    return identifier.replace("$", r"\$")
