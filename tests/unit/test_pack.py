"""Budget packing: definitions first, later ones compact, similar code within its share."""

from __future__ import annotations

from dataclasses import replace

from greprag.fusion.dedup import MergedRange
from greprag.fusion.pack import pack

FUNC = [
    "def load(path, mode):",
    '    """Read every row of ``path``."""',
    *[f"    row_{i} = read_line(path, mode, {i})" for i in range(12)],
    "    return rows",
]
FILES = {f"f{i}.py": FUNC for i in range(6)}


def _range(path: str, route: str = "grep", score: float = 1.0) -> MergedRange:
    return MergedRange(path, 1, len(FUNC), score, route, match_lines={1})


def test_blocks_past_the_first_share_go_in_compact_and_similar_code_stays_whole():
    ranges = [_range("f0.py"), _range("f1.py"), _range("f2.py", "similar"), _range("f3.py")]
    whole = pack(ranges, FILES.__getitem__, budget=4000)
    tokens = whole.blocks[0].tokens
    packed = pack(ranges, FILES.__getitem__, budget=4000, compact_after=tokens, compact_tokens=40)
    forms = [(b.path, b.outline) for b in packed.blocks]
    assert forms == [("f0.py", False), ("f1.py", True), ("f2.py", False), ("f3.py", True)]
    assert all(b.tokens <= 40 for b in packed.blocks if b.outline)
    assert packed.blocks[1].text.startswith("def load(path, mode):")  # the signature stays


def test_similar_code_past_its_share_waits_for_the_rest():
    ranges = [_range("f0.py", "similar"), _range("f1.py", "similar"), _range("f2.py")]
    one = pack(ranges[:1], FILES.__getitem__, budget=4000).blocks[0].tokens
    packed = pack(ranges, FILES.__getitem__, budget=4000, similar_share=(one + 2) / 4000)
    assert [b.path for b in packed.blocks] == ["f0.py", "f2.py", "f1.py"]
    tight = pack(ranges, FILES.__getitem__, budget=2 * one + 4, similar_share=0.5)
    assert [b.path for b in tight.blocks] == ["f0.py", "f2.py"]
    assert any("similar code past its share" in d.reason for d in tight.dropped)
    calls: list[str] = []
    pack(
        [*ranges, _range("f3.py", "similar")],
        FILES.__getitem__,
        budget=4000,
        similar_share=(one + 2) / 4000,
        similar_full=lambda: calls.append("full"),
    )
    assert calls == ["full"]  # once, when the first similar block waits


BIG_CLASS = [
    "@register",
    "class Style:",
    '    """A terminal style."""',
    "",
    *[
        line
        for i in range(30)
        for line in (
            f"    def style_method_{i}(self, color: str, bold: bool = False) -> 'Style':",
            f"        value = compute_style_value(color, bold, {i})",
            "        return value",
            "",
        )
    ],
]


def test_a_needed_class_over_the_cap_shows_its_member_signatures_not_a_stub():
    item = MergedRange("style.py", 1, len(BIG_CLASS), 1.0, "grep", match_lines={2})
    packed = pack([item], {"style.py": BIG_CLASS}.__getitem__, budget=4096, max_block_tokens=512)
    block = packed.blocks[0]
    assert block.outline and 512 < block.tokens <= 1024
    assert "def style_method_0(self, color: str, bold: bool = False)" in block.text
    assert "def style_method_29(" in block.text and "compute_style_value" not in block.text


def test_a_class_with_more_headers_than_the_room_holds_signatures_gets_no_outline():
    from greprag.fusion.pack import marked_forms

    item = MergedRange("style.py", 1, len(BIG_CLASS), 1.0, "grep", match_lines={2})

    def class_forms(most_headers: int | None) -> list[str]:
        forms = marked_forms("style.py", BIG_CLASS, item, most_headers=most_headers)
        return [form.text for form in forms if form.of_class]

    assert class_forms(None) and class_forms(30) == class_forms(None)  # 30 methods
    assert class_forms(29) == []
    # a compact form of 120 tokens holds at most 30 signatures: this class's do not fit
    packed = pack([item], {"style.py": BIG_CLASS}.__getitem__, budget=4096, compact_after=0)
    assert packed.blocks[0].tokens <= 120 and "def style_method_1(" not in packed.blocks[0].text


def test_the_receivers_type_past_the_first_share_still_shows_its_member_signatures():
    lines = {"style.py": BIG_CLASS}.__getitem__
    found = MergedRange("style.py", 1, len(BIG_CLASS), 1.0, "grep", match_lines={2})
    stub = pack([found], lines, budget=4096, max_block_tokens=512, compact_after=0).blocks[0]
    assert stub.tokens <= 120 and "def style_method_29(" not in stub.text
    hop = replace(found, type_hop=True)  # a second hop: the class ``x.`` at the cursor has
    shown = pack([hop], lines, budget=4096, max_block_tokens=512, compact_after=0).blocks[0]
    assert shown.outline and "def style_method_29(" in shown.text
    assert "compute_style_value" not in shown.text


# a long Java class with a builder nested in it: the class is too long to outline
FORMAT = [
    "/** Formats. */",
    "public final class Format {",
    *[
        line
        for i in range(150)
        for line in (
            f"    /** Option {i}, described at length for the reader. */",
            f"    public int option{i}(int value) {{",
            f"        return value * {i} + compute(value, {i});",
            "    }",
        )
    ],
    "    public static class Builder {",
    *[
        line
        for i in range(12)
        for line in (
            f"        public Builder setOption{i}(boolean on) {{",
            "            return this;",
            "        }",
        )
    ],
    "    }",
    "}",
]


def test_a_nested_class_the_receiver_has_shows_its_members_inside_a_long_class():
    builder = FORMAT.index("    public static class Builder {") + 1
    found = MergedRange("Format.java", 1, len(FORMAT), 1.0, "grep", match_lines={builder})
    lines = {"Format.java": FORMAT}.__getitem__
    plain = pack([found], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert "setOption11" not in plain.text
    hop = replace(found, type_hop=True)  # the second hop to ``class Builder``
    shown = pack([hop], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert "public final class Format {" in shown.text
    assert all(f"public Builder setOption{i}(boolean on)" in shown.text for i in range(12))
    assert "option149" not in shown.text and "return this;" not in shown.text


def test_signatures_only_keeps_one_line_per_member():
    from greprag.fusion.pack import _signatures_only

    outline = "\n".join(
        [
            "class Style:",
            '    """A terminal style."""',
            "    bold = _Bit(0)",
            "    @classmethod",
            "    def null(cls) -> 'Style': ...",
            "    def __init__(",
            "        ...",
            "    ): ...",
            "    def copy(self, bold: bool) -> None:",
            "        self.bold = bold",
            "        ...",
        ]
    )
    assert _signatures_only(outline).split("\n") == [
        "class Style:",
        "    def null(cls) -> 'Style': ...",
        "    def __init__( ...",
        "    def copy(self, bold: bool) -> None: ...",  # rows under it go, " ..." marks them
    ]


SCOPES = [
    'ScopeName = Literal["session", "module", "function"]',
    "",
    "",
    "@total_ordering",
    *BIG_CLASS[1:16],
    "",
    "_ALL_SCOPES = list(Style)",
]


def test_a_range_of_statements_around_a_class_shows_the_class_members_when_compact():
    matched = {1, 9, len(SCOPES)}  # the constant, a method body, the statement after
    item = MergedRange("scopes.py", 1, len(SCOPES), 1.0, "grep", match_lines=matched)
    packed = pack(
        [item], {"scopes.py": SCOPES}.__getitem__, budget=4096, compact_after=0, compact_tokens=100
    )
    text = packed.blocks[0].text
    assert text.startswith("ScopeName = Literal[") and "class Style:" in text
    assert "def style_method_0(" in text and "def style_method_2(" in text
    assert "compute_style_value" not in text


def test_signatures_only_keeps_a_java_method_without_a_modifier():
    from greprag.fusion.pack import _signatures_only

    outline = "\n".join(
        [
            "public class UIViewOperationQueue {",
            "  public UIViewOperationQueue(ReactContext context) { ... }",
            "  /*package*/ NativeViewHierarchyManager getNativeViewHierarchyManager() { ... }",
            "  Map<String, List<Long>> profiledCounters() { ... }",
            "  private final class RemoveOperation extends ViewOperation { ... }",
            "  private int mTag = 0;",
            "}",
        ]
    )
    assert _signatures_only(outline).split("\n") == [
        "public class UIViewOperationQueue {",
        "  public UIViewOperationQueue(ReactContext context) { ... }",
        "  /*package*/ NativeViewHierarchyManager getNativeViewHierarchyManager() { ... }",
        "  Map<String, List<Long>> profiledCounters() { ... }",
        "}",
    ]


LONG_SIGNATURE = [
    "def connect(",
    *[f"    option_{i}=None," for i in range(20)],
    "    *,",
    "    timeout: float = 5.0,",
    "):",
    '    """Open a connection."""',
    *[f"    step_{i} = prepare(option_{i % 20}, timeout)" for i in range(200)],
    "    return step_0",
]


def test_a_definition_over_the_cap_keeps_its_whole_signature_unless_compact_or_similar():
    item = MergedRange("net.py", 1, len(LONG_SIGNATURE), 1.0, "grep", match_lines={1})
    lines = {"net.py": LONG_SIGNATURE}.__getitem__
    early = pack([item], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert early.outline and "option_19=None," in early.text and "timeout: float" in early.text
    assert "step_5 =" not in early.text
    late = pack([item], lines, budget=4096, max_block_tokens=512, compact_after=0).blocks[0]
    assert late.text.startswith("def connect(") and "timeout: float" not in late.text
    similar = MergedRange("net.py", 1, len(LONG_SIGNATURE), 1.0, "similar", match_lines={30})
    copied = pack([similar], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert "step_5 =" in copied.text and "option_19=None," not in copied.text  # its match
    call = ["settings = connect(", *LONG_SIGNATURE[1:]]  # a call over many lines: no signature
    item = MergedRange("use.py", 1, len(call), 1.0, "grep", match_lines={1})
    shown = pack([item], {"use.py": call}.__getitem__, budget=4096, max_block_tokens=512)
    assert "option_19=None," not in shown.blocks[0].text


JAVA_CLASS = [
    "public class Styles {",
    *[
        line
        for i in range(30)
        for line in (
            f"    public Style styleMethod{i}(String color, boolean bold) {{",
            f"        Style value = computeStyleValue(color, bold, {i});",
            f'        return value.withName("style{i}");',
            "    }",
            "",
        )
    ],
    "}",
]


def test_a_java_class_outline_shows_the_method_that_matched_whole():
    """Hits inside ``styleMethod7`` merged into the whole class: its outline shows that
    method whole (what a completion copies), the others by their signatures. A single
    hit line (a definition probe on the class header) opens nothing; nor does Python."""
    body = 1 + 7 * 5 + 2  # styleMethod7's first body line
    item = MergedRange(
        "Styles.java", 1, len(JAVA_CLASS), 1.0, "similar", match_lines={body, body + 1}
    )
    lines = {"Styles.java": JAVA_CLASS, "styles.py": BIG_CLASS}.__getitem__
    block = pack([item], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert block.outline and 'return value.withName("style7");' in block.text
    assert block.text.count("computeStyleValue") == 1
    assert "public Style styleMethod29(String color, boolean bold) { ... }" in block.text
    header = replace(item, match_lines={1})
    assert (
        "computeStyleValue"
        not in pack([header], lines, budget=4096, max_block_tokens=512).blocks[0].text
    )
    python = MergedRange("styles.py", 1, len(BIG_CLASS), 1.0, "similar", match_lines={6, 7})
    shown = pack([python], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert shown.outline and "compute_style_value" not in shown.text


def test_definition_headers_are_found_as_the_pattern_alone_finds_them():
    """``_def_headers`` skips lines that cannot start a header before matching: it finds
    exactly the lines ``_DEF_HEADER`` matches, in every language's form."""
    from greprag.fusion.pack import _DEF_HEADER, _def_headers

    lines = [
        "def load(path):",
        "    async def fetch(self):",
        "class Store(Base):",
        "\tfn parse(input: &str) -> u32 {",
        "func (s *Server) Serve() error {",
        "export function render() {",
        "function render() {",
        "  public static <T> List<T> copy(List<T> items) {",
        "  private final Map<String, Integer> counts = new HashMap<>();",
        "    protected abstract void run();",
        "  override fun close() {",
        "    virtual int Size() const;",
        "  final int size() {",
        "  static int total(int[] values) {",
        "    result = compute(values)  # def in a comment",
        "  defaultValue(x);",
        "  classify(x);",
        "  functional(y);",
        "  publicKey.sign(data);",
        "",
        "    return (a, b)",
    ]
    expected = [n for n, line in enumerate(lines, 1) if _DEF_HEADER.match(line)]
    assert len(expected) >= 10
    assert _def_headers(lines, 1, len(lines)) == expected


def test_a_text_far_over_the_limit_is_over_it_uncounted_and_one_within_is_counted_exactly():
    from greprag.fusion.pack import _count_upto
    from greprag.tokens import count_tokens, count_tokens_upto

    long = "value = compute(value)\n" * 600
    assert _count_upto(long, 100, "cl100k_base") == 101  # not encoded: 10,800 letters
    assert count_tokens_upto(long, 100, "cl100k_base") > 100  # as counting says
    short = "\n".join(FUNC)
    assert _count_upto(short, 4096, "cl100k_base") == count_tokens(short)
    spaced = " " * 3000 + "x"  # spaces count for nothing in the shortcut: this is counted
    assert _count_upto(spaced, 100, "cl100k_base") == count_tokens(spaced)


def test_a_definition_too_long_with_its_doc_comment_goes_in_by_its_header_line():
    lines = [
        "/**",
        *[f" * Static utilities, part {i} of a long description." for i in range(40)],
        " */",
        "@GwtCompatible",
        "public final class Futures {",
        *[f"  static int step{i}(int value) {{ return value + {i}; }}" for i in range(200)],
        "}",
    ]
    header = lines.index("public final class Futures {") + 1
    item = MergedRange("Futures.java", 1, len(lines), 1.0, "grep", match_lines={header})
    packed = pack([item], {"Futures.java": lines}.__getitem__, budget=60)
    (block,) = packed.blocks  # without the change: dropped, its doc comment over the budget
    assert block.outline and "public final class Futures {" in block.text
    assert "description" not in block.text


def test_blocks_of_a_file_that_touch_are_joined_in_the_first_ones_place():
    """A unit packed right after another's block (two ranges of one file, lines 1-14 and
    15-28) becomes one block where the first was packed; ``f1.py`` keeps its place."""
    two = {"two.py": FUNC + FUNC, "f1.py": FUNC}
    second = MergedRange("two.py", len(FUNC) + 1, 2 * len(FUNC), 0.5, "grep", match_lines={15})
    ranges = [_range("two.py"), _range("f1.py", score=0.8), second]
    packed = pack(ranges, two.__getitem__, budget=4000)
    assert [(b.path, b.start_line, b.end_line) for b in packed.blocks] == [
        ("two.py", 1, 2 * len(FUNC)),
        ("f1.py", 1, len(FUNC)),
    ]
    assert packed.blocks[0].text == "\n".join(FUNC + FUNC)
    assert packed.context.count("# two.py") == 1


def test_the_receivers_type_too_long_to_outline_shows_its_public_member_headers():
    """Two classes in one range (no class outline for it), the second the receiver's
    type's base: a type hop shows the member headers that fit, public ones first, where
    another range shows the class lines alone."""
    from greprag.fusion.pack import marked_forms

    other = [line.replace("Style", "Base").replace("style_", "base_") for line in BIG_CLASS]
    private = ["    def _hidden(self):", "        return 0", ""]
    both = [*other[1:], *private, *BIG_CLASS[1:]]
    item = MergedRange("both.py", 1, len(both), 1.0, "grep", match_lines={1})
    hop = replace(item, type_hop=True)
    plain = [f.text for f in marked_forms("both.py", both, item, most_headers=200) if f.of_class]
    shown = [f.text for f in marked_forms("both.py", both, hop, most_headers=200) if f.of_class]
    assert not any("def base_method_3(" in text for text in plain)
    assert "def base_method_3(" in shown[0] and "def style_method_3(" in shown[0]
    assert "def _hidden" not in shown[1] and "compute_style_value" not in shown[0]


PLUGIN_METHODS = [
    *[
        line
        for name in ("add_initializer", "add_construct_method", "set_frozen")
        for line in (
            f"    def {name}(self, fields: list[Field], frozen: bool) -> None:",
            f'        """Step {name} of the transform."""',
            *[f"        info_{i} = self.api.lookup({name!r}, fields, {i})" for i in range(6)],
            "        info.names[var.name] = SymbolTableNode(MDEF, var)",
            "",
        )
    ],
]


def test_an_empty_bodys_same_named_definition_shows_whole_in_a_range_too_long():
    """At an empty ``set_frozen`` body, a merged range of three methods over the cap shows
    the other ``set_frozen`` whole (the sibling to copy) and the rest by their headers;
    without the name, by headers and matched lines only."""
    item = MergedRange("plugin.py", 1, len(PLUGIN_METHODS), 1.0, "grep", match_lines={1, 21})
    lines = {"plugin.py": PLUGIN_METHODS}.__getitem__
    plain = pack([item], lines, budget=4096, max_block_tokens=256).blocks[0]
    assert plain.outline and "SymbolTableNode" not in plain.text
    twin = pack([item], lines, budget=4096, max_block_tokens=256, twin="set_frozen").blocks[0]
    assert twin.outline and twin.tokens <= 256
    assert "def add_initializer(" in twin.text and "'add_initializer', fields, 3" not in twin.text
    assert "self.api.lookup('set_frozen', fields, 5)" in twin.text
    assert twin.text.rstrip().endswith("SymbolTableNode(MDEF, var)")
    other = pack([item], lines, budget=4096, max_block_tokens=256, twin="missing").blocks[0]
    assert other.text == plain.text


def test_an_empty_bodys_same_named_method_shows_whole_in_its_class_outline():
    """A class over the cap, at an empty ``style_method_7`` body elsewhere: its outline
    (attributes and every member's signature) with ``style_method_7`` whole; Java too."""
    item = MergedRange("styles.py", 1, len(BIG_CLASS), 1.0, "grep", match_lines={2})
    lines = {"styles.py": BIG_CLASS, "Styles.java": JAVA_CLASS}.__getitem__
    plain = pack([item], lines, budget=4096, max_block_tokens=512).blocks[0]
    assert plain.outline and "compute_style_value" not in plain.text
    twin = pack([item], lines, budget=4096, max_block_tokens=512, twin="style_method_7")
    text = twin.blocks[0].text
    assert text.count("compute_style_value") == 1 and "compute_style_value(color, bold, 7)" in text
    assert '"""A terminal style."""' in text and "def style_method_29(" in text
    java = MergedRange("Styles.java", 1, len(JAVA_CLASS), 1.0, "grep", match_lines={1})
    shown = pack([java], lines, budget=4096, max_block_tokens=512, twin="styleMethod7")
    assert 'return value.withName("style7");' in shown.blocks[0].text
    assert shown.blocks[0].text.count("computeStyleValue") == 1
