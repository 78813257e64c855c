"""routes.returns: the class a def returns, by its annotation or its first return, and the
class a Java method returns, by the type before its name."""

from __future__ import annotations

import pytest

from greprag.routes.returns import java_returned_class, returned_class


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["def parse(value) -> ds.ETags:"], "ds.ETags"),
        (["def parse(", "    value: str,", ") -> 'Loader':  # cached"], "Loader"),
        (["async def get(self) -> Optional[Session]:"], "Session"),
        (["def get(self) -> Session | None:"], "Session"),
        (["def get(self) -> list[Session]:"], None),
        (["def get(self) -> A | B:"], None),
        (["def get(self) -> None:"], None),
        (["def get(self) -> Self:"], None),
        (["def env():", '    """An environment."""', "    return Environment()"], "Environment"),
        (["def app(tmp):", "    if tmp:", "        yield flask.Flask(tmp)"], "flask.Flask"),
        (["def get(self):", "    return helper()"], None),
        (["def get(cls):", "    return cls()"], None),
        (["def get(self):", "    return", "def other():", "    return Session()"], None),
        (["def get(self):", "    pass", "", "def other():", "    return Session()"], None),
        (["class rrule(rrulebase):", "    def __init__(self, freq):"], "rrule"),
    ],
)
def test_returned_class(lines, expected):
    assert returned_class(lines, 1) == expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("    public Builder setQuote(final char quote) {", "Builder"),
        ("public static <T> CSVFormat.Builder<T> create(", "CSVFormat.Builder"),
        ("  static <K, V> Map<K, List<V>> create(", "Map"),
        ("  public int create() {", None),
        ("  public String[] create() {", None),
        ("  public T create(int i) {", None),
        ("    return create(x);", None),
    ],
)
def test_the_class_a_java_method_returns_is_the_type_before_its_name(header, expected):
    assert java_returned_class([header], 1, "create" if "create" in header else "setQuote") == (
        expected
    )
