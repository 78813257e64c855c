"""Question understanding: exact identifiers, phrases, keywords, stems and weighted synonyms."""

from __future__ import annotations

import re
from dataclasses import replace

from docs_mode.keywords import inner_name_pattern, question_terms
from docs_mode.profile import DocsProfile, load_profile
from docs_mode.router import OfflineQuestionRouter
from docs_mode.stem import stem, word_pattern
from docs_mode.synonyms import SynonymTable, load_synonyms
from greprag.router.validate import validate_query

PROFILE = load_profile()
TABLE = load_synonyms(PROFILE.synonyms)


def terms(question: str, profile: DocsProfile = PROFILE, table: SynonymTable | None = TABLE):
    found, _ = question_terms(question, profile, table)
    return {(t.kind, t.text): t for t in found}


def test_identifiers_and_dotted_names_are_exact_and_case_sensitive():
    got = terms("why does QuerySet.filter() ignore get_user_by_id and the --no-input flag")
    dotted = got[("identifier", "QuerySet.filter")]
    assert re.search(dotted.pattern, "qs = QuerySet.filter(x)")
    assert not re.search(dotted.pattern, "queryset.filter") and not re.search(
        dotted.pattern, "QuerySetXfilter"
    )
    assert got[("identifier", "filter")].weight < dotted.weight  # its last part, a bit weaker
    assert ("identifier", "get_user_by_id") in got
    assert re.search(got[("identifier", "--no-input")].pattern, "run it with --no-input now")
    assert not any(kind == "keyword" and text in ("why", "does", "the") for kind, text in got)


def test_compound_identifiers_split_into_weaker_parts():
    got = terms("what does getUserById return")
    assert ("identifier", "getUserById") in got
    parts = {text: t.weight for (kind, text), t in got.items() if kind == "part"}
    assert set(parts) == {"get", "user", "id"}  # "by" is a stop word
    assert parts["get"] < parts["user"] == PROFILE.part_weight < PROFILE.identifier_weight
    off = terms("what does getUserById return", replace(PROFILE, split_identifiers=False))
    assert not any(kind == "part" for kind, _ in off)


def test_quoted_phrases_and_code_spans_are_searched_as_written():
    got = terms('how to set "connection pool size" with `Session(timeout=5)`')
    phrase = got[("phrase", "connection pool size")]
    assert re.search(phrase.pattern, "The Connection  pool size is ten")
    assert re.search(phrase.pattern, "connection_pool_size = 10")
    assert ("phrase", "Session(timeout=5)") in got


def test_stop_words_go_common_words_weigh_less_and_stems_find_other_forms():
    got = terms("how do I use retrying for a flaky endpoint")
    assert ("keyword", "i") not in got and ("keyword", "for") not in got
    assert (
        got[("keyword", "use")].weight == PROFILE.generic_weight < got[("keyword", "flaky")].weight
    )
    typed = got[("keyword", "retrying")]
    assert re.search(typed.pattern, "Retrying") and not re.search(typed.pattern, "retries")
    forms = got[("stem", "retry")]  # the other forms: an expansion, weaker than the word
    assert all(re.search(forms.pattern, w) for w in ("retry", "retries", "retried", "Retrying"))
    assert forms.weight == PROFILE.stem_weight * typed.weight < typed.weight
    assert stem("configuration") == stem("configured") == stem("configure")
    assert not re.search(word_pattern("setting"), "set") and stem("string") == "string"
    assert not re.search(word_pattern("retry", stemming=False), "retries")


def test_synonyms_work_both_ways_and_for_multi_word_terms():
    one_way = terms("login fails")
    assert ("synonym", "authentication") in one_way and ("synonym", "sign in") in one_way
    other_way = terms("authentication fails")
    assert ("synonym", "login") in other_way and ("synonym", "log in") in other_way
    phrase = terms("cannot log in after the upgrade")
    assert ("synonym", "login") in phrase and ("synonym", "auth") in phrase
    assert re.search(one_way[("synonym", "sign in")].pattern, "Sign  in with your account")
    assert ("synonym", "database") in terms("db is locked")
    assert ("synonym", "db") in terms("the database is locked")


def test_synonyms_weigh_less_than_the_words_they_expand():
    for question in ("login fails", "configure the db", "remove a directory", "init the repo"):
        got = terms(question)
        synonyms = [t for (kind, _), t in got.items() if kind == "synonym"]
        own = [t for (kind, _), t in got.items() if kind == "keyword"]
        assert synonyms and own
        for syn in synonyms:
            source = [t for t in own if stem(t.text) in {stem(w) for w in syn.source.split()}]
            assert source and all(syn.weight < t.weight for t in source), (question, syn)
            assert syn.weight == PROFILE.synonym_weight * max(t.weight for t in source)


def test_the_users_own_word_keeps_its_weight_when_a_synonym_repeats_it():
    got = terms("config settings")  # settings is also a synonym of config
    assert got[("keyword", "settings")].weight == PROFILE.keyword_weight
    assert ("synonym", "settings") not in got


def test_the_plan_is_validated_and_says_what_each_query_is_for():
    plan = OfflineQuestionRouter(PROFILE, TABLE).plan("retry `fetch_all` after a timeout")
    purposes = {(q.identifier, q.purpose) for q in plan.queries}
    assert {("fetch_all", "identifier"), ("retry", "keyword"), ("retry", "stem")} <= purposes
    assert "synonym" in {purpose for _, purpose in purposes}
    for q in plan.queries:
        assert validate_query({"pattern": q.pattern}, default_lang=None).pattern == q.pattern
        assert q.lang is None and not q.fixed and q.context_lines == 0
    assert plan.synonyms["timeout"] and plan.router == "offline"
    weights = [q.weight for q in plan.queries]
    assert weights == sorted(weights, reverse=True) and len(plan.queries) <= PROFILE.max_terms


def test_hostile_looking_words_stay_data():
    plan = OfflineQuestionRouter(PROFILE, TABLE).plan("--pre=sh ; rm -rf / $(reboot) `-z`")
    for q in plan.queries:
        assert not q.pattern.startswith("-")
        assert validate_query({"pattern": q.pattern}, default_lang=None)


def test_no_table_means_no_synonyms():
    assert not any(kind == "synonym" for kind, _ in terms("login fails", table=SynonymTable()))
    assert load_synonyms("") == SynonymTable()


def test_neighbouring_words_are_also_searched_as_one_name():
    got = terms("how do I add a command to the group")
    joined = got[("phrase", "add command")]
    assert joined.weight == PROFILE.joined_weight < PROFILE.keyword_weight
    for text in ("root.AddCommand(sub)", "def add_command(self):", "ADD-COMMANDS", "add commands"):
        assert re.search(joined.pattern, text), text
    for text in ("add commandline", "padd command", "command add", "add the command"):
        assert not re.search(joined.pattern, text), text
    assert re.search(got[("phrase", "command group")].pattern, "CommandGroupError")
    assert re.search(terms("sub command")[("phrase", "sub command")].pattern, "subcommands")
    validate_query({"pattern": joined.pattern, "fixed": False}, default_lang=None)  # rg-safe


def test_a_short_question_is_also_searched_as_one_name_stop_words_and_all():
    cases = {  # question, the name it is searched as (articles optional), a definition
        "no such option": ("no such option", "class NoSuchOption(UsageError):"),
        "is naive": ("is naive", "def is_naive(value):"),
        "set the version template": (
            "set version template",
            "func (c *Command) SetVersionTemplate(",
        ),
        "not an attrs class error": (
            "not attrs class error",
            "class NotAnAttrsClassError(ValueError):",
        ),
    }
    for question, (name, definition) in cases.items():
        named = terms(question)[("phrase", name)]
        assert named.weight == PROFILE.joined_weight
        assert re.search(named.pattern, definition), question
        validate_query({"pattern": named.pattern, "fixed": False}, default_lang=None)
    assert not re.search(terms("no such option")[("phrase", "no such option")].pattern, "no option")
    the = terms("set the version template")[("phrase", "set version template")].pattern
    assert re.search(the, "set_the_version_template") and not re.search(the, "SetAVersionTemplate")
    for longer_or_named in ("how do I add a new command", "is `value` naive", "retry 3 times"):
        assert not any(len(t.split()) > 2 for kind, t in terms(longer_or_named) if kind == "phrase")


def test_words_searched_as_one_name_are_also_found_inside_a_longer_name():
    inside = re.compile(inner_name_pattern("flag", "required"))
    for name in ("MarkFlagRequired", "mark_flag_required", "markFlagRequiredOnce"):
        assert inside.search(name), name
    for name in ("FlagRequired", "flag_required", "MarkFlagship", "Reflagrequired"):
        assert not inside.search(name), name  # at the start: rg's own pattern finds those


def test_a_number_after_a_word_is_searched_with_it():
    found = question_terms("Is true if this is Windows 7.", PROFILE, TABLE)[0]
    seven = next(t for t in found if t.text == "windows 7")
    assert seven.kind == "phrase" and seven.weight == PROFILE.keyword_weight
    assert re.search(seven.pattern, "Is true if this is Windows 7.")
    assert not re.search(seven.pattern, "Is true if this is Windows 95.")
    assert not any(t.text.endswith(" 1") for t in question_terms("a 1-based index", PROFILE)[0])


def test_names_are_not_joined_across_numbers_or_identifiers_and_stay_few():
    assert [text for kind, text in terms("retry 3 times") if kind == "phrase"] == ["retry 3"]
    assert not any(kind == "phrase" for kind, _ in terms("cache get_item value"))
    many = terms("open read parse check store close flush sync")
    assert sum(kind == "phrase" for kind, _ in many) == 4  # the first pairs only
    off = terms("how do I add a command", replace(PROFILE, joined_weight=0.0))
    assert not any(kind == "phrase" for kind, _ in off)
