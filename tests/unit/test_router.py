"""The router package: its registry, its weights object, its query vocabulary, the second hop."""

from __future__ import annotations

from dataclasses import replace

import pytest

from greprag.config import ConfigError, Settings, load_settings
from greprag.context import build_local_context
from greprag.imports import resolve_imports
from greprag.languages import language_for_path
from greprag.models import QUERY_KINDS, QUERY_PURPOSES, Candidate, Query, QueryPlan
from greprag.router import ROUTERS, OfflineRouter, RouterWeights
from greprag.router.probes import receiver_types, type_probes
from tests.conftest import FIXTURES, written_repo


def test_the_router_setting_accepts_exactly_the_registered_routers():
    assert set(ROUTERS) == {"offline", "llm"}
    for name, build in ROUTERS.items():
        router = build(Settings(max_queries=4))
        assert router.name == name and router.max_queries == 4
    with pytest.raises(ConfigError, match="router must be one of offline, llm"):
        load_settings(None, router="nope")


def test_the_weights_object_drives_the_plan():
    ctx = build_local_context(
        'def f(cfg):\n    t = cfg.get("request_timeout")\n    ', lang="python"
    )
    default = OfflineRouter().plan(ctx)
    key = next(q for q in default.queries if q.identifier == "request_timeout")
    assert key.weight == RouterWeights().string_key and default.queries[0] != key

    boosted = OfflineRouter(weights=replace(RouterWeights(), string_key=5.0)).plan(ctx)
    assert boosted.queries[0].identifier == "request_timeout"
    assert boosted.queries[0].weight == 5.0


def test_plans_over_the_fixture_repos_use_only_declared_kinds_and_purposes():
    router = OfflineRouter()
    seen: set[str] = set()
    for path in sorted(FIXTURES.rglob("*")):
        lang = language_for_path(path.name)
        if lang is None:
            continue
        repo = FIXTURES / path.relative_to(FIXTURES).parts[0]
        rel = path.relative_to(repo).as_posix()
        lines = path.read_text().split("\n")
        for number in range(1, len(lines) + 1, 3):
            before = "\n".join(lines[:number])
            ctx = build_local_context(before, path=rel, lang=lang.name, line=number)
            for query in router.plan(ctx, resolve_imports(ctx, repo)).queries:
                assert query.kind in QUERY_KINDS and query.purpose in QUERY_PURPOSES, query
                seen.add(query.purpose)
    assert seen == {"definition", "usage", "wildcard", "import"}


def test_receiver_types_reads_the_class_a_receiver_is_bound_to_elsewhere():
    ctx = build_local_context(
        "class Job(Base):\n    def run(self):\n        self.store.", lang="python"
    )
    plan = QueryPlan(
        queries=[
            Query(r"self\.store\s*=", "variable", identifier="store", purpose="definition"),
            Query(r"\bstore\b", "variable", identifier="store", purpose="usage"),
        ]
    )
    files = {
        "base.py": [
            "class Base:",
            "    def __init__(self, cache):",
            "        self.store = BlobStore(Optional[Cache], Path('x'), cache)",
            "        self.store: DiskStore = make()",
        ],
        "other.py": ["store = MemoryStore()"],
    }
    candidates = [
        Candidate("base.py", 1, 4, "", queries=(0,), match_lines=(3, 4)),
        Candidate("other.py", 1, 1, "", queries=(1,), match_lines=(1,)),  # a usage probe
    ]
    types = receiver_types(ctx, plan, candidates, files.__getitem__, externals={"Path"})
    assert types == ["BlobStore", "Cache", "DiskStore"]

    typed = build_local_context("store: BlobStore = get()\nstore.", lang="python")
    assert receiver_types(typed, plan, candidates, files.__getitem__, set()) == []

    probes = type_probes("python", types[:2], weight=0.9)
    assert [(q.identifier, q.purpose, q.weight) for q in probes] == [
        ("BlobStore", "second hop", 0.9),
        ("Cache", "second hop", 0.9),
    ]
    assert probes[0].pattern == r"^\s*class\s+BlobStore\b"


def test_rust_use_paths_resolve_to_the_crates_own_module_files(tmp_path):
    """``crate::``, ``self::`` and ``super::`` name the crate's modules (``a/b.rs`` or
    ``a/b/mod.rs``, the crate root ``lib.rs``); ``std::`` and other crates name none."""
    crate = ("src/lib.rs", "src/ast/mod.rs", "src/ast/parse.rs", "src/ast/print/mod.rs")
    written_repo(tmp_path, dict.fromkeys(crate, ""))
    before = (
        "use std::fmt::Display;\n"
        "use serde::Serialize;\n"
        "use crate::ast::parse::Parser;\n"
        "use super::{Ast, Span};\n"
        "use super::print::Printer;\n"
        "use super::super::Error;\n"
        "use self::helpers::Helper;\n"
        "fn f() {\n    "
    )
    ctx = build_local_context(before, path="src/ast/parse.rs", lang="rust", line=9)
    assert resolve_imports(ctx, tmp_path) == {
        "Parser": "src/ast/parse.rs",
        "Ast": "src/ast/mod.rs",
        "Span": "src/ast/mod.rs",
        "Printer": "src/ast/print/mod.rs",
        "Error": "src/lib.rs",
    }


GO_FILE = (
    "package main\n"
    "\n"
    "import (\n"
    '\t"net/http"\n'
    '\tyaml "gopkg.in/yaml.v3"\n'
    '\t"example.com/shop/cart"\n'
    '\t"example.com/shop/internal/pricing/v2"\n'
    ")\n"
    "\n"
    "func checkout(url string) {\n"
    '\treq, _ := http.NewRequest("GET", url, nil)\n'
    "\ttotal := cart.AddItem(req)\n"
    "\t"
)


def test_go_imports_of_the_module_resolve_to_their_package_and_others_stay_outside(tmp_path):
    """A Go package is named by its path's last element (less a major version); the
    module's own packages (``go.mod``) resolve to their folder's file named after the
    package, so their members are sought, and the standard library's are not."""
    files = {
        "go.mod": "module example.com/shop\n\ngo 1.21\n",
        "cart/cart.go": "package cart\n",
        "cart/a_util.go": "package cart\n",
        "cart/cart_test.go": "package cart\n",
        "internal/pricing/v2/rules.go": "package pricing\n",
    }
    written_repo(tmp_path, files)
    ctx = build_local_context(GO_FILE, path="main.go", lang="go", line=13)
    assert [i.local_name for i in ctx.imports] == ["http", "yaml", "cart", "pricing"]
    imported = resolve_imports(ctx, tmp_path)
    assert imported == {"cart": "cart/cart.go", "pricing": "internal/pricing/v2/rules.go"}
    plan = OfflineRouter().plan(ctx, imported)
    probed = {q.identifier for q in plan.queries}
    defined = {q.identifier for q in plan.queries if q.purpose == "definition"}
    assert "AddItem" in defined and not {"NewRequest", "http"} & probed
    assert "cart" not in defined  # a package: no definition bears its name


def test_a_java_import_found_under_two_roots_resolves_to_the_first_path_in_sorted_order(tmp_path):
    """Not to whichever a set happens to hold first: that changes with the hash seed."""
    before = "package app;\nimport com.acme.util.Text;\nimport java.util.List;\nclass A {\n  "
    ctx = build_local_context(before, path="app/A.java", lang="java", line=5)
    known = {
        "mod-b/src/com/acme/util/Text.java",
        "mod-a/src/com/acme/util/Text.java",
        "mod-a/src/com/acme/util/OtherText.java",
        "docs/Text.java",
    }
    found = resolve_imports(ctx, tmp_path, frozenset(known))
    assert found == {"Text": "mod-a/src/com/acme/util/Text.java"}  # List: not in the repo


def test_typescript_names_resolve_through_barrels_to_the_file_declaring_them(tmp_path):
    """``./x.js`` names the file emitted from ``x.ts``, ``./types`` may be ``types.d.ts``;
    a name imported from a module that re-exports it (``export *``, ``export { a as b }``
    over several lines, a barrel of barrels) maps to the file that declares it, and again
    once that file changes."""
    from greprag.files import FileStore

    files = {
        "src/utils/common.ts": "export let isMap = (t: any) => t instanceof Map\n",
        "src/utils/env.ts": "export const enum ArchType {\n  Object,\n}\n",
        "src/utils/index.ts": (
            'export * from "./common.js"\n'
            'export {\n  ArchType as Kind, // renamed\n} from "./env"\n'
        ),
        "src/internal.ts": 'export * from "./utils/index.js"\nexport const VERSION = 1\n',
        "src/core/scope.ts": "",
        "src/types.d.ts": "export interface Draft {}\n",
    }
    written_repo(tmp_path, files)
    before = (
        'import {\n  isMap,\n  Kind,\n  VERSION,\n  missing,\n} from "../internal.js"\n'
        'import * as utils from "../utils/index.js"\n'
        'import type { Draft } from "../types"\n'
        "function f() {\n  const k = utils.other()\n  "
    )
    ctx = build_local_context(before, path="src/core/scope.ts", lang="typescript", line=11)
    store = FileStore(tmp_path)
    assert resolve_imports(ctx, tmp_path, None, store.lines) == {
        "isMap": "src/utils/common.ts",
        "Kind": "src/utils/env.ts",
        "VERSION": "src/internal.ts",
        "missing": "src/internal.ts",  # declared nowhere: the module it is imported from
        "utils": "src/utils/index.ts",
        "Draft": "src/types.d.ts",  # a declaration file
    }
    (tmp_path / "src/utils/common.ts").write_text("export const other = 1\n")
    store.invalidate()
    found = resolve_imports(ctx, tmp_path, None, store.lines)
    assert (found["isMap"], found["Kind"]) == ("src/internal.ts", "src/utils/env.ts")
    plan = OfflineRouter().plan(ctx, found)
    defined = {q.identifier for q in plan.queries if q.purpose == "definition"}
    assert "other" in defined and "utils" not in defined  # a module: no definition bears it


def test_typescript_members_of_a_module_imported_whole_are_sought_in_its_file(tmp_path):
    """``import * as util``, then ``util.parsedType(...)``: the members the code takes are
    probed in the module's file (``$`` names too, never the ``js`` of ``util.js``); on the
    line after such a use, or with ``util.`` at the cursor, every name the file declares
    too."""
    written_repo(tmp_path, {"src/util.ts": "", "src/app.ts": ""})
    head = 'import * as util from "./util.js"\nconst a = util.parsedType(x) + util.$Kind\n'
    ctx = build_local_context(head, path="src/app.ts", lang="typescript", line=3)
    imported = resolve_imports(ctx, tmp_path)
    assert imported == {"util": "src/util.ts"}
    probes = [q for q in OfflineRouter().plan(ctx, imported).queries if q.purpose == "import"]
    assert [(q.identifier, q.paths) for q in probes] == [
        ("parsedType,$Kind", ("src/util.ts",)),
        ("*", ("src/util.ts",)),
    ]
    later = build_local_context(head + "f()\n" * 3, path="src/app.ts", lang="typescript", line=6)
    probes = [q for q in OfflineRouter().plan(later, imported).queries if q.purpose == "import"]
    assert [(q.identifier, q.paths) for q in probes] == [("parsedType,$Kind", ("src/util.ts",))]
    at = build_local_context(head + "const b = util.", path="src/app.ts", lang="typescript", line=3)
    probes = [q for q in OfflineRouter().plan(at, imported).queries if q.purpose == "import"]
    assert ("*", ("src/util.ts",)) in [(q.identifier, q.paths) for q in probes]


def test_a_go_package_at_the_cursor_is_probed_for_every_name_its_folder_exports(tmp_path):
    """``cart.`` at the cursor, ``cart`` a package of the module: the exported top-level
    names of every file in its folder (the import resolves to one of them); a package
    from outside the module (``http.``) gets no such probe."""
    files = {"go.mod": "module example.com/shop\n", "cart/cart.go": "package cart\n"}
    written_repo(tmp_path, files)
    for typed, expected in [("cart.", [("*", ("cart/",))]), ("http.", [])]:
        ctx = build_local_context(GO_FILE + typed, path="main.go", lang="go", line=14)
        plan = OfflineRouter().plan(ctx, resolve_imports(ctx, tmp_path))
        probes = [(q.identifier, q.paths) for q in plan.queries if q.purpose == "import"]
        assert probes == expected


def test_a_name_imported_under_another_is_probed_by_the_name_its_definition_bears(tmp_path):
    """``use crate::error::Error as ClapError;`` then ``ClapError::``: the definition
    says ``Error``, so that is what is sought (and where the import points); a module's
    alias (``from . import errors as e``) is no definition's name either way."""
    written_repo(tmp_path, {"src/lib.rs": "", "src/error.rs": "", "pkg/errors.py": ""})
    before = "use crate::error::Error as ClapError;\nfn f() {\n    return ClapError::"
    ctx = build_local_context(before, path="src/lib.rs", lang="rust", line=3)
    imported = resolve_imports(ctx, tmp_path)
    assert imported == {"ClapError": "src/error.rs", "Error": "src/error.rs"}
    defined = {
        q.identifier
        for q in OfflineRouter().plan(ctx, imported).queries
        if q.purpose == "definition"
    }
    assert "Error" in defined and "ClapError" not in defined
    before = "from . import errors as e\n\ndef f():\n    return e."
    ctx = build_local_context(before, path="pkg/use.py", lang="python", line=4)
    imported = resolve_imports(ctx, tmp_path)
    assert imported["e"] == "pkg/errors.py"
    defined = {
        q.identifier
        for q in OfflineRouter().plan(ctx, imported).queries
        if q.purpose == "definition"
    }
    assert not {"e", "errors"} & defined


def test_a_barrel_re_exporting_a_module_not_written_yet_sees_it_once_written(tmp_path):
    """``export * from "./later.js"`` before ``later.ts`` exists: the name stays with the
    barrel, and maps to ``later.ts`` on the first retrieval after it is created."""
    from greprag.files import FileStore

    written_repo(tmp_path, {"src/index.ts": 'export * from "./later.js"\n', "src/app.ts": ""})
    before = 'import { soon } from "./index.js"\nsoon('
    ctx = build_local_context(before, path="src/app.ts", lang="typescript", line=2)
    store = FileStore(tmp_path)
    assert resolve_imports(ctx, tmp_path, None, store.lines) == {"soon": "src/index.ts"}
    (tmp_path / "src/later.ts").write_text("export function soon() {}\n")
    assert resolve_imports(ctx, tmp_path, None, store.lines) == {"soon": "src/later.ts"}


def test_a_go_value_of_a_type_of_its_own_package_is_probed_for_the_type_s_methods(tmp_path):
    """``c.`` in a method of ``*Command`` (or after ``sub := &Command{...}``): every method
    of ``Command``, in the package's folder (after ``cmd.NewCommand()``, the folder ``cmd``
    resolves to); a value of unknown type, or of a package outside, gets no such probe."""
    from greprag import Retriever

    methods = "package cmd\n\nfunc (c *Command) Name() string {\n\treturn c.name\n}\n"
    methods += '\nfunc (o *Other) Name() string {\n\treturn ""\n}\n'
    written_repo(tmp_path, {"go.mod": "module example.com/x\n", "cmd/name.go": methods})
    in_method = "package cmd\n\nfunc (c *Command) Run() {\n\tc."
    local = 'package cmd\n\nfunc run() {\n\tsub := &Command{Use: "sub"}\n\tsub.'
    unknown = "package cmd\n\nfunc run(x int) {\n\tc."
    after = "package cmd\n\nfunc (c *Command) Run() {\n}\n\nvar names = c."  # outside it
    for before, expected in [(in_method, 1), (local, 1), (unknown, 0), (after, 0)]:
        ctx = build_local_context(before, path="cmd/run.go", lang="go", line=4)
        probes = [
            q for q in OfflineRouter().plan(ctx, {}).queries if q.pattern.startswith("^func\\s+\\(")
        ]
        assert len(probes) == expected
        for q in probes:
            assert q.paths == ("cmd/",) and q.purpose == "import"
    main = 'package main\n\nimport (\n\t"example.com/x/cmd"\n\t"net/http"\n)\n\nfunc main() {\n'
    for made, expected in [("c := cmd.NewCommand()", ("cmd/",)), ("s := http.NewServer()", None)]:
        before = f"{main}\t{made}\n\t{made[0]}."
        ctx = build_local_context(before, path="main.go", lang="go", line=10)
        probes = [
            q.paths
            for q in OfflineRouter().plan(ctx, resolve_imports(ctx, tmp_path)).queries
            if q.pattern.startswith("^func\\s+\\(")
        ]
        assert probes == ([expected] if expected else [])  # outside the repo: none
    (tmp_path / "cmd" / "run.go").write_text(in_method + "\n}\n")
    result = Retriever(tmp_path, budget=512).retrieve(file="cmd/run.go", line=4, column=3)
    assert "func (c *Command) Name() string" in result.context
    assert "func (o *Other)" not in result.context
