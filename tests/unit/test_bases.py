"""routes.bases: the base class names read off a class header."""

from __future__ import annotations

import pytest

from greprag.routes.bases import header_bases


@pytest.mark.parametrize(
    ("lines", "lang", "expected"),
    [
        (["class A(pkg.B, C[int], metaclass=Meta):"], "python", ["pkg.B", "C"]),
        (["class A(", "    Base,", "    Generic[T],", "):"], "python", ["Base", "Generic"]),
        (["class A:"], "python", []),
        (["class A(object):"], "python", []),
        (["def f(x):"], "python", []),
        (
            ["public class X<T extends Comparable<T>>", "    extends Y<T> implements Z, W<T> {"],
            "java",
            ["Y", "Z", "W"],
        ),
        (["interface Shape extends Outer.Inner {"], "java", ["Outer.Inner"]),
        (["final class Plain {"], "java", []),
    ],
)
def test_header_bases(lines, lang, expected):
    assert header_bases(lines, 1, lang) == expected
