"""Budget packing: each block goes in whole, as its outline, or is dropped with a reason.

Blocks are taken best first. A block larger than ``max_block_tokens`` (or than what is
left) is offered as its outline: for a class, its header, first docstring line and
member signatures; for a function or statement, its signature and the matched lines,
with explicit ``...`` elisions; in a braced language the outline first shows the
methods that matched whole (a hit merged into its whole class is still the code to
copy). The final context is re-counted as a whole, so the budget holds to the token.

Definitions come first: once ``compact_after`` tokens are used, a block the probes found
goes in only in a compact form (at most ``compact_tokens``: its outline or signature and
matched lines), since a definition that far down the ranking is less likely the one
needed, and its signature is what names it. A type the receiver at the cursor has (a
second hop, ``MergedRange.type_hop``) still shows its member signatures: ``x.`` needs
them. Similar code (``SIMILAR_ROUTE``) keeps its body, which is what a completion
copies, up to ``similar_share`` of the budget; past that, it waits until everything
else had its turn.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from greprag import syntax
from greprag.files import LinesMemo
from greprag.fusion.dedup import MergedRange
from greprag.models import SIMILAR_ROUTE, Block, Drop
from greprag.render import block_text, render_context
from greprag.tokens import count_tokens, count_tokens_upto

LinesOf = Callable[[str], Sequence[str]]


@dataclass
class Packed:
    blocks: list[Block]
    context: str
    tokens: int
    dropped: list[Drop]


def _elide(lines: Sequence[str], keep: set[int], start: int, end: int) -> str:
    """The kept lines of [start, end] in order, with ``...`` wherever lines are left out."""
    out: list[str] = []
    previous = start - 1
    for number in sorted(n for n in keep if start <= n <= end):
        if number > previous + 1:
            line = lines[number - 1]
            out.append(line[: len(line) - len(line.lstrip())] + "...")
        out.append(lines[number - 1])
        previous = number
    if previous < end:
        out.append("...")
    return "\n".join(out)


@dataclass(frozen=True)
class Form:
    """A shortened form of a range; ``of_class`` marks a class outline (member signatures),
    which a needed class may show at more than the usual cap."""

    text: str
    of_class: bool = False


def marked_forms(
    path: str,
    lines: Sequence[str],
    item: MergedRange,
    whole_signature: bool = True,
    most_headers: int | None = None,
    twin: str | None = None,
) -> Iterator[Form]:
    """Ever shorter forms of the range that keep its signatures and what matched.

    First, for a range that is one class, the class outline (header, first docstring
    line, member signatures; tree-sitter), in a braced language first with the members
    holding most of the matched lines whole, then its member signatures alone; for a range
    of top-level units holding a class (constants around it, say), the same with the
    other units by their first lines. Then the
    first line(s), every definition header inside and each matched line with one line
    around it; then the first line(s) and the matched lines alone. A definition whose
    signature runs over many lines shows it whole in those forms first (the parameters a
    call needs; not with ``whole_signature`` False), then by its first line. Last, the
    same from the first line on, without the doc comment and annotations above it.
    A range holding more than ``most_headers`` definition headers gets no class forms: an
    outline shows a signature per member, and so many do not fit (outlining a long class
    costs a parse). A type hop's range whose matched line opens a nested class (a call
    chain's ``CSVFormat.Builder``) first gets the outer header with that class's member
    signatures, with and then without the matched lines around. At an empty body,
    ``twin`` names the function being written: a range holding definitions of that name
    (the sibling to copy from) first shows them whole, in the class outline when it has
    one, else with the other definitions by their headers.
    """
    start, end = item.start_line, item.end_line
    first = next((n for n in range(start, end + 1) if not _DECORATION.match(lines[n - 1])), start)
    headers = set(_def_headers(lines, first + 1, end))  # per file chunk, remembered
    roomy = most_headers is None or len(headers) <= most_headers
    outlined = None
    if roomy and _CLASS_HEADER.search(lines[first - 1]):
        outlined = syntax.class_outlined(path, lines, start, first, end)
    elif roomy and _holds_class(lines, first, headers):
        outlined = syntax.range_outlined(path, lines, start, end)
    outline = outlined.text if outlined else ""
    if twin and outline:  # the same-named member whole in its class's outline
        opened = syntax.members_named(outlined, lines, twin)
        if opened != outline:
            yield Form(opened, of_class=True)
    twins = _twin_lines(lines, item, first, headers, twin) if twin and not outline else set()
    if twins and len(twins) < end - start + 1:  # the same-named definition whole
        yield Form(_elide(lines, twins | set(range(start, first + 1)) | headers, start, end))
    if outline and item.match_lines and syntax.opens_members(path):
        # the members that matched, whole: what a class-wide merge would hide
        opened = syntax.members_whole(outlined, lines, frozenset(item.match_lines))
        if opened != outline:
            yield Form(opened, of_class=True)
    if outline:
        yield Form(outline, of_class=True)
        signatures = _signatures_only(outline)
        if signatures != outline:
            yield Form(signatures, of_class=True)
    around: set[int] = set()
    for hit in item.match_lines:
        around |= {hit - 1, hit, hit + 1}
    # a definition's signature over many lines whole (its parameters), then its first line
    definition = whole_signature and _DEF_HEADER.match(lines[first - 1]) is not None
    last = _statement_end(lines, first, end) if definition else first
    heads = [set(range(start, last + 1))] if last > first else []
    tried: list[set[int]] = []
    undecorated = [{first}] if first > start else []  # a long doc comment may not fit
    nested = _nested_members(path, lines, item, first, headers) if item.type_hop else set()
    if nested:  # a nested class's members: its outline, in the outer class's header
        for kept in ({first} | around | nested, {first} | nested):
            yield Form(_elide(lines, kept, start, end), of_class=True)
    if item.type_hop and headers:
        # the receiver's type too long to outline: as many member headers as fit, the
        # public ones first, rather than its class line alone
        public = sorted(headers, key=lambda n: (_PRIVATE.search(lines[n - 1]) is not None, n))
        most = most_headers or len(headers)
        for count in (most // 4, most // 8):
            kept = {first} | around | set(public[:count])
            yield Form(_elide(lines, kept, start, end), of_class=True)
    for signature in [*heads, set(range(start, first + 1)), *undecorated]:
        keep = signature | around
        bare = signature | set(item.match_lines)  # the signature and matched lines alone
        for kept in (keep | headers, keep, bare):
            if kept not in tried:
                tried.append(kept)
                yield Form(_elide(lines, kept, start, end))


_MAX_PARAMETER_LINES = 60  # a longer signature is shown by its first line


def _statement_end(lines: Sequence[str], first: int, end: int) -> int:
    """The line (at most ``end``) where the statement starting at line ``first`` closes
    its parentheses and brackets: a signature's parameters over many lines; ``first``
    when it closes there or is not seen to close within ``_MAX_PARAMETER_LINES``."""
    depth = 0
    for number in range(first, min(end, first + _MAX_PARAMETER_LINES) + 1):
        line = lines[number - 1]
        depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if depth <= 0:
            return number
    return first


def _nested_members(
    path: str, lines: Sequence[str], item: MergedRange, first: int, headers: set[int]
) -> set[int]:
    """The header, closing line and member headers of each class nested in the range
    whose header line matched (``class Builder`` inside ``class CSVFormat``, where a call
    chain's type led): the outline wanted of a class too small a part of the range for
    the range's own outline to show it."""
    found: set[int] = set()
    for hit in item.match_lines:
        if hit == first or not _CLASS_HEADER.search(lines[hit - 1]):
            continue
        close = syntax.nested_class_end(path, lines, hit)
        if close is not None:
            found |= {hit, close} | {h for h in headers if hit < h <= close}
    return found


def _twin_lines(
    lines: Sequence[str], item: MergedRange, first: int, headers: set[int], twin: str
) -> set[int]:
    """The lines of the definitions in the range named ``twin`` (each from its header to
    the next header no deeper than it, or the range's end)."""
    named = syntax.header_of(twin)
    ordered = sorted({first} | headers)
    kept: set[int] = set()
    for i, header in enumerate(ordered):
        line = lines[header - 1]
        if not named.search(line):
            continue
        depth = len(line) - len(line.lstrip())
        after = (
            n for n in ordered[i + 1 :] if len(lines[n - 1]) - len(lines[n - 1].lstrip()) <= depth
        )
        kept.update(range(header, next(after, item.end_line + 1)))
    return kept


def _holds_class(lines: Sequence[str], first: int, headers: set[int]) -> bool:
    """Whether a class header among ``headers`` sits at the indentation of line ``first``:
    a range of top-level units, one of them a class."""
    line = lines[first - 1]
    indent = len(line) - len(line.lstrip())
    for number in headers:
        header = lines[number - 1]
        if len(header) - len(header.lstrip()) == indent and _CLASS_HEADER.search(header):
            return True
    return False


def shortened_forms(path: str, lines: Sequence[str], item: MergedRange) -> Iterator[str]:
    """The texts of ``marked_forms``."""
    for form in marked_forms(path, lines, item):
        yield form.text


def _signatures_only(outline: str) -> str:
    """A class outline with its member signatures only, one line each: no attributes,
    decorators or continuation lines."""
    rows = outline.split("\n")
    header = next((i for i, row in enumerate(rows) if _CLASS_HEADER.search(row)), 0)
    kept = rows[: header + 1]
    for row in rows[header + 1 :]:
        if _DEF_HEADER.match(row) or _BARE_METHOD.match(row):
            done = row.rstrip().endswith(("...", "}", ";"))
            kept.append(row if done else row.rstrip() + " ...")
    if rows[-1].strip() == "}":
        kept.append(rows[-1])
    return "\n".join(kept)


# a member only its own class calls: a leading underscore, or declared private
_PRIVATE = re.compile(r"\b(?:def|fn|func|function)\s+_|\bprivate\b")
_DECORATION = re.compile(r"\s*(@|#\[|\[|/\*\*|\*|//|$)")
_CLASS_HEADER = re.compile(r"\b(class|interface|enum|record|struct|trait|impl)\s+\w")
_DEFINERS = "def|class|fn|func|function"  # the keyword a definition starts with
_MODIFIERS = "public|private|protected|static|final|abstract|override|async|virtual"
_DEF_HEADER = re.compile(
    rf"\s*((async\s+)?{_DEFINERS})\s+\w|"
    rf"\s*(({_MODIFIERS})\s+)+"
    r"[\w<>\[\], .?]+\("
)
# the words ``_DEF_HEADER`` lets a line start with (after its indentation)
_HEADER_STARTS = (*_DEFINERS.split("|"), *_MODIFIERS.split("|"))


# a method with no modifier (Java's package-private), its body elided: ``Queue queue() { ... }``
# (a return type that is a class or a primitive: not ``async`` or ``get`` of JavaScript)
_BARE_METHOD = re.compile(
    r"\s*(/\*\w*\*/\s*)?(<[^>]*>\s*)?"
    r"([A-Z][\w$<>\[\],.? ]*?|(void|boolean|byte|char|short|int|long|float|double)[\[\] ]*)"
    r"\s+[\w$]+\s*\(.*\{ \.\.\. \}$"
)


_HEADER_CHUNK = 256  # lines whose definition headers are found and kept together
_HEADERS = LinesMemo(4096)  # per file content and chunk, across retrievals


def _def_headers(lines: Sequence[str], first: int, last: int) -> list[int]:
    """The lines in [first, last] (1-based) that ``_DEF_HEADER`` matches, in order. Found
    per chunk of ``_HEADER_CHUNK`` lines and kept per file content, so a range seen again,
    or one overlapping it, costs a lookup."""
    found: list[int] = []
    for chunk in range((first - 1) // _HEADER_CHUNK, (last - 1) // _HEADER_CHUNK + 1):
        low = chunk * _HEADER_CHUNK
        part = _HEADERS.get(lines, ("headers", chunk), lambda low=low: _chunk_headers(lines, low))
        found += part[bisect_left(part, first) : bisect_right(part, last)]
    return found


def headers_ahead(lines: Sequence[str]) -> bool:
    """Find a file's definition headers before a retrieval asks (kept as
    ``_def_headers`` keeps them); False, finding nothing, once half the chunks the cache
    keeps are found."""
    if _HEADERS.half_full():
        return False
    _def_headers(lines, 1, max(1, len(lines)))
    return True


def _chunk_headers(lines: Sequence[str], low: int) -> list[int]:
    """The 1-based header lines of the chunk after line ``low``; a line is first checked
    to start with a word the pattern starts with: most lines of code do not (a third of
    the time of matching every line with a parenthesis)."""
    match = _DEF_HEADER.match
    return [
        n
        for n, line in enumerate(lines[low : low + _HEADER_CHUNK], low + 1)
        if line.lstrip().startswith(_HEADER_STARTS) and match(line)
    ]


# Code runs 3-5 characters per token (at most 7.9 on 5,000 blocks of jdk17, sqlalchemy
# and django): a text with more non-space characters than this per token of the limit is
# over it without counting (counting big classes to say so cost jdk17 1.2 ms a retrieval)
_SURELY_OVER_CHARS_PER_TOKEN = 12


def _count_upto(text: str, limit: int, encoding: str) -> int:
    """``count_tokens_upto``, except that a text far too long for ``limit`` is taken to be
    over it uncounted (``limit + 1``)."""
    if len(text) - text.count(" ") > _SURELY_OVER_CHARS_PER_TOKEN * (limit + 1):
        return limit + 1
    return count_tokens_upto(text, limit, encoding)


# the fewest tokens a member's signature row of an outline takes (``    int size() { ... }``
# takes 8): a class with more definition headers than a limit holds at this many tokens
# each does not fit it. Outlining such classes compact (120 tokens) cost jdk17-base 3.4 ms
# a retrieval; in 100 retrievals each on it, jdk17, sqlalchemy and sympy, one fit (headers
# in method bodies count too)
_MIN_SIGNATURE_TOKENS = 4


def _first_fitting(
    item: MergedRange,
    lines: Sequence[str],
    end: int,
    score: float,
    cap: int,
    left: int,
    encoding: str,
    class_cap: int | None = None,
    whole_signature: bool = False,
    twin: str | None = None,
) -> Block | None:
    """The longest shortened form within ``cap`` (a class outline within ``class_cap``;
    the shortest form may use all that is left; ``whole_signature``: see
    ``marked_forms``). Shorter forms are made only when a longer one fails, and a form is
    counted only as far as its limit. A class outline is not made for a range with more
    definition headers than its limit holds signatures."""
    class_limit = min(cap if class_cap is None else max(cap, class_cap), left)
    most_headers = class_limit // _MIN_SIGNATURE_TOKENS
    block = None
    for form in marked_forms(item.path, lines, item, whole_signature, most_headers, twin):
        limit = cap if not form.of_class or class_cap is None else max(cap, class_cap)
        limit = min(limit, left)
        block = Block(item.path, item.start_line, end, form.text, score, item.route, outline=True)
        block.tokens = _count_upto(block_text(block), limit, encoding)
        if block.tokens <= limit:
            return block
    if block is None or block.tokens > left:  # the shortest form may use all that is left
        return None
    block.tokens = _count_upto(block_text(block), left, encoding)
    return block if block.tokens <= left else None


MIN_USEFUL_TOKENS = 24


@dataclass
class _Packer:
    """The running state of one ``pack``: what is chosen, dropped and used."""

    lines_of: LinesOf
    budget: int
    cap: int
    encoding: str
    chosen: list[Block]
    dropped: list[Drop]
    twin: str | None = None
    used: int = 0
    similar_used: int = 0

    def block(self, item: MergedRange, limit: int, compact: int | None) -> Block | Drop | None:
        """``item`` whole within ``limit``, else its longest shortened form within the cap
        (``compact``: within that many tokens); a Drop when nothing fits."""
        lines = self.lines_of(item.path)
        end = min(item.end_line, len(lines))
        if end < item.start_line:
            return None
        whole = Block(
            path=item.path,
            start_line=item.start_line,
            end_line=end,
            text="\n".join(lines[item.start_line - 1 : end]),
            score=round(item.score, 4),
            route=item.route,
        )
        if not whole.text.strip():  # a hit on blank lines (a pattern like ^\s+$) says nothing
            return Drop(item.path, item.start_line, end, "blank lines", whole.score)
        left = self.budget - self.used
        if compact is not None:
            limit = min(limit, compact)
        # exact when it fits; a huge block is known not to from a prefix alone
        whole.tokens = _count_upto(block_text(whole), min(limit, left), self.encoding)
        if whole.tokens <= min(limit, left) and not item.outline_only:
            return whole
        cap = min(self.cap if compact is None else compact, left)
        # a class early in the ranking shows its members, up to twice the cap while at
        # least as much budget is left
        class_cap = min(2 * self.cap, left // 2) if compact is None else None
        # a definition's parameters, unless compact; similar code shows what matched instead
        whole_signature = compact is None and item.route != SIMILAR_ROUTE
        short = _first_fitting(
            item,
            lines,
            end,
            whole.score,
            cap,
            left,
            self.encoding,
            class_cap,
            whole_signature,
            self.twin,
        )
        if short is not None:
            return short
        # a lower bound: counting a whole class of thousands of lines only to say so cost
        # jdk17 12 ms per retrieval
        reason = f"over budget (at least {whole.tokens} tokens whole, {left} left)"
        return Drop(item.path, item.start_line, end, reason, whole.score)

    def take(self, block: Block) -> None:
        self.chosen.append(block)
        self.used += block.tokens + 1
        if block.route == SIMILAR_ROUTE:
            self.similar_used += block.tokens + 1


def pack(
    ranges: Iterable[MergedRange],
    lines_of: LinesOf,
    *,
    budget: int,
    max_block_tokens: int | None = None,
    max_usage_tokens: int | None = None,
    encoding: str = "cl100k_base",
    compact_after: int | None = None,
    compact_tokens: int = 120,
    similar_share: float = 1.0,
    similar_full: Callable[[], None] | None = None,
    twin: str | None = None,
) -> Packed:
    """Pack ranges (best first) into at most ``budget`` tokens.

    Stops taking ranges once fewer than ``MIN_USEFUL_TOKENS`` are left, so lazily
    produced ranges past that point are never computed. A range only usage probes hit
    goes in whole up to ``max_usage_tokens``; past that, its call sites are what counts.
    Past ``compact_after`` tokens, ranges other than similar code go in compact; similar
    code beyond ``similar_share`` of the budget waits until the end; ``similar_full`` is
    called when the first such block waits (``BlockExpansion.hold``); ``twin``: the
    function an empty body writes (``marked_forms``).
    """
    packer = _Packer(lines_of, budget, max_block_tokens or budget, encoding, [], [], twin)
    waiting: list[Block] = []
    for item in ranges:
        if budget - packer.used < MIN_USEFUL_TOKENS:
            packer.dropped.append(
                Drop(item.path, item.start_line, item.end_line, "budget full", round(item.score, 4))
            )
            break
        limit = packer.cap
        if item.usage_only and max_usage_tokens:
            limit = min(limit, max_usage_tokens)
        similar = item.route == SIMILAR_ROUTE
        late = compact_after is not None and packer.used >= compact_after
        compact = late and not similar and not item.type_hop
        result = packer.block(item, limit, compact_tokens if compact else None)
        if isinstance(result, Drop):
            packer.dropped.append(result)
        elif result is not None:
            if similar and packer.similar_used + result.tokens > similar_share * budget:
                if not waiting and similar_full is not None:
                    similar_full()
                waiting.append(result)
            else:
                packer.take(result)
    for block in waiting:  # similar code past its share, if room is left
        if packer.used + block.tokens <= budget:
            packer.take(block)
        else:
            reason = f"similar code past its share ({block.tokens} tokens)"
            packer.dropped.append(
                Drop(block.path, block.start_line, block.end_line, reason, block.score)
            )
    return finish(_joined(packer.chosen), packer.dropped, budget, encoding)


def _joined(blocks: list[Block]) -> list[Block]:
    """``blocks`` with those of one file that touch joined, in the place of the first
    packed: a unit packed right after a block already there (``def b`` below ``def a``),
    or a class outlined around the members packed whole (``BlockExpansion``)."""
    joined: list[Block] = []
    for block in blocks:
        place: int | None = None
        while (i := _touching(joined, block)) is not None:
            other = joined.pop(i)
            place = i if place is None else min(place, i)
            first, second = sorted((other, block), key=lambda b: b.start_line)
            block = replace(
                other,
                start_line=first.start_line,
                end_line=second.end_line,
                text=first.text + "\n" + second.text,
                score=max(first.score, second.score),
                outline=first.outline or second.outline,
                tokens=first.tokens + second.tokens,
            )
        joined.insert(len(joined) if place is None else place, block)
    return joined


def _touching(blocks: list[Block], block: Block) -> int | None:
    """The index of the first of ``blocks`` of ``block``'s file that ends just before it
    or starts just after it (sections of a page never: each has its anchor)."""
    for i, other in enumerate(blocks):
        if other.path != block.path or other.anchor is not None or block.anchor is not None:
            continue
        if other.end_line + 1 == block.start_line or block.end_line + 1 == other.start_line:
            return i
    return None


def finish(chosen: list[Block], dropped: list[Drop], budget: int, encoding: str) -> Packed:
    """The context of ``chosen``, counted as a whole; the last blocks go (with a reason)
    until it fits, since joined blocks can tokenize differently."""
    context = render_context(chosen)
    tokens = count_tokens(context, encoding)
    while chosen and tokens > budget:
        last = chosen.pop()
        dropped.append(
            Drop(last.path, last.start_line, last.end_line, "over budget after join", last.score)
        )
        context = render_context(chosen)
        tokens = count_tokens(context, encoding)
    return Packed(blocks=chosen, context=context, tokens=tokens, dropped=dropped)
