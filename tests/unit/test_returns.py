"""routes.returns: the class a def is annotated to return."""

from __future__ import annotations

import pytest

from greprag.routes.returns import return_annotation


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
        (["def get(self):", "    return Session()"], None),
    ],
)
def test_return_annotation(lines, expected):
    assert return_annotation(lines, 1) == expected
