"""Migrations and replacements: "I moved the blog from Nikola to Hugo" (the old end replaced by
the new, and what was moved now on the new end), "through Amazon SES instead of Mailgun"."""

from __future__ import annotations

from kg.extraction.judge import migratable, owned_part, possessive, replaceable, strong
from kg.extraction.lexicon import HEAD_TYPES
from kg.extraction.names import KIND_NOUNS, clean
from kg.extraction.nouns import english_word, plain_word
from kg.extraction.phrases import Sentence
from kg.extraction.state import MIGRATION_VERBS, ExtractorBase, State

_HOST_NOUNS = {"box", "node", "server", "host", "vm", "instance", "cluster", "machine", "nuc", "pi"}


def _compound(word: str) -> bool:
    parts = word.split("-")
    return (
        len(parts) > 1
        and word.islower()
        and all(p.isalpha() and (english_word(p) or plain_word(p)) for p in parts)
    )


def _unopened(phrase: str) -> str:
    """ "Card tokenisation" at a sentence's start: the capital is the sentence's, not a name's."""
    first = phrase.split()[0]
    opened = first[:1].isupper() and (first[1:].islower() or not first[1:])
    return phrase[:1].lower() + phrase[1:] if opened else phrase


def _named(phrase: str) -> bool:
    """A name by its spelling, not only by an acronym before common words ("HTTP client")."""
    # "full-text search": English words joined by a hyphen are no name.
    words = [w for w in phrase.split() if not _compound(w)]
    if not strong(" ".join(words)):
        return False
    acronym = [w for w in words if w.isalpha() and w.isupper() and len(w) <= 5]
    return not (acronym and all(w in acronym or w.islower() for w in words))


class MigrationRules(ExtractorBase):
    def _from_to(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "I moved the blog from Nikola to Hugo": a migration verb, then "from X to Y" with
        both ends names (versions and metrics are refused as names, so ranges are not)."""
        toks = sent.toks
        verb = next((k for k, t in enumerate(toks) if t.low in MIGRATION_VERBS), None)
        if verb is None:
            return
        for k in range(verb + 1, len(toks)):
            if toks[k].low != "from":
                continue
            first = sent.phrase_after(k + 1)
            if first is None or first[1] >= len(toks) or toks[first[1]].low != "to":
                return
            second = sent.phrase_after(first[1] + 1)
            if second is None:
                return
            old, new = self._name(sent, first, names), self._name(sent, second, names)
            if not (migratable(names[old]) and migratable(names[new])):
                return
            if k > verb + 1:  # "moved from X to Y" is the verb scan's
                self._connect(edges, state, old, new, "replaced_by")
            self._migrated(sent, verb, k, (first, second), names, edges, state)
            return

    def _migrated(
        self,
        sent: Sentence,
        verb: int,
        k: int,
        ends: tuple[tuple[int, int], tuple[int, int]],
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "Migrated the networking layer from Retrofit to Ktor", "Physics moved from X to Jolt":
        what was moved now has the new end (the passage's project when the moved thing is named
        in common words); "ported ... to Python" is built with it, a move to a host runs on it."""
        toks = sent.toks
        moved = sent.phrase_after(verb + 1) if k > verb + 1 else sent.phrase_before(verb)
        if moved is None or (k > verb + 1 and moved[1] != k):
            return
        said = sent.span(*moved)
        owner, thing = possessive(said)
        if owner is not None and clean(owner) is not None and _named(owner):
            holder: str | None = owner.lower()  # "Fieldnote's image uploads": Fieldnote's
            names.setdefault(owner.lower(), owner)
        elif (
            clean(thing) is not None
            and _named(_unopened(thing) if moved[0] == 0 else thing)
            and not owned_part(sent, moved)
        ):
            holder = self._name(sent, moved, names)
        elif state.topic is not None and state.titled:
            holder = state.topic  # "Card tokenisation moved", "the local database": the project's
        elif (
            clean(thing) is not None
            and thing.islower()
            and thing.split()[-1] in KIND_NOUNS | set(HEAD_TYPES)
        ):
            holder = self._name(sent, moved, names)  # "moved the eval cron from ... to ..."
        else:
            holder = None
        if holder is None:
            return
        new = self._name(sent, ends[1], names)
        host = {sent.toks[ends[0][1] - 1].low, toks[ends[1][1] - 1].low} & _HOST_NOUNS
        rel = "built_with" if toks[verb].low.startswith("port") else "runs_on" if host else "uses"
        self._connect(edges, state, holder, new, rel)

    def _instead(
        self,
        sent: Sentence,
        i: int,
        new: str,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "... through Amazon SES instead of Mailgun", "rather than Postgres": old -> new."""
        toks = sent.toks
        j = i
        while j < len(toks) and j - i < 4 and toks[j].low not in ("instead", "rather"):
            if sent.verb_at(j) is not None:
                return
            j += 1
        if j + 1 >= len(toks) or (toks[j].low, toks[j + 1].low) not in (
            ("instead", "of"),
            ("rather", "than"),
        ):
            return
        j += 2
        # "instead of going through Celery", "rather than using cron": the gerund and its
        # preposition stand between the phrase and the name it replaces.
        if j < len(toks) and toks[j].low.endswith("ing") and toks[j].text.islower():
            j += 1
            if j < len(toks) and toks[j].low in ("through", "via", "with", "on", "to"):
                j += 1
        span = sent.phrase_after(j)
        if span is None:
            return
        old = self._name(sent, span, names)
        if replaceable(names[old]) and replaceable(names[new]):
            self._connect(edges, state, old, new, "replaced_by")
