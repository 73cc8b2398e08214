"""The features the learned scorer (``kg.extraction.learned``) weighs for each candidate of
:mod:`kg.extraction.candidates`: for a name, its first and last word, spelling shapes, which
English word lists hold it, the words around it and what the rules said; for a pair of names,
the words between them (names masked, list commas dropped), the verb nearest them, direction,
distance, the two ends' shapes and types, and the rule that proposed it.

Features are strings, one-hot; they say what generalises across domains. No name of a set is a
feature by itself beyond the words of the candidate, which the scorer sees only as first and
last word."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from kg.extraction.candidates import (
    _MODALS,
    _NEGATIONS,
    _VERBS,
    MAX_GAP,
    MAX_MENTIONS,
    Mention,
    Passage,
    Word,
    _lex,
    _shape,
)
from kg.extraction.lexicon import HEAD_TYPES
from kg.extraction.names import KIND_NOUNS, clean, known_type
from kg.extraction.nouns import english_word, plain_word


def entity_features(p: Passage, key: str) -> list[str]:
    surface = p.names[key]
    words = surface.split()
    f = [
        "bias",
        f"origin={p.origin[key]}",
        f"n={min(len(words), 4)}",
        f"shape={'_'.join(_shape(w) for w in words[:3])}",
        f"shape0={_shape(words[0])}",
        f"shapeL={_shape(words[-1])}",
        f"w0={words[0].lower()}",
        f"wL={words[-1].lower()}",
    ]
    if p.origin[key] == "rule" and key in p.rule_types:
        f.append(f"rtype={p.rule_types[key]}")
    if (known := known_type(surface)) is not None:
        f.append(f"known={known}")
    if clean(surface) is None:
        f.append("refused")
    elif clean(surface).lower() != key:  # type: ignore[union-attr]
        f.append("cleaned_other")
    if len(words) == 1:
        low = words[0].lower()
        f.append(f"lex={_lex(low)}")
    else:
        first, last = words[0].lower(), words[-1].lower()
        f += [f"lex0={_lex(first)}", f"lexL={_lex(last)}|{_shape(words[0])}"]
        if first in _VERBS or first.endswith(("ing", "ed")):
            f.append("verb_first")
        if last in KIND_NOUNS or last in HEAD_TYPES:
            f.append("kind_last")
        if " of " in f" {key} ":
            f.append("of_inside")
    if surface.endswith("+"):
        f.append("plus_end")
    if p.topic and key == p.topic.lower():
        f.append("topic")
    ruled = [k for k in p.rule_types if k != key]
    if any(key in k for k in ruled):
        f.append("inside_rule_name")
    if any(k in key for k in ruled):
        f.append("holds_rule_name")
    mentions = p.mentions.get(key, [])
    f.append(f"count={min(len(mentions), 3)}")
    for m in mentions[:2]:
        words_s = p.sentences[m.sentence][1]
        before = words_s[m.first - 1].low if m.first else "<s>"
        after = words_s[m.last].low if m.last < len(words_s) else "</s>"
        f += [f"prev={before}", f"next={after}", f"nextlex={_lex(after)}"]
        if after in KIND_NOUNS or after in HEAD_TYPES:
            f.append("kind_next")
        if m.first == 0:
            # A capitalised English word opening a sentence is capitalised by its place, not
            # by being a name ("Installation is through …", "Builds now run on …").
            lex = _lex(words[0].lower()) if len(words) == 1 else "many"
            f += ["sentence_first", f"first|{_shape(words[0])}|{lex}|{p.origin[key]}"]
    if any(k in p.rule_edges for k in p.rule_edges if key in k):
        f.append("rule_edge_end")
    if len(p.sentences) == 1:
        # A lone sentence is another genre than prose: "The frontend uses React." names the
        # frontend as a part of the system, where a passage would not count a bare role noun.
        f += ["solo", f"solo|{p.origin[key]}", *(["solo|edge_end"] if "rule_edge_end" in f else [])]
    return f


def _nearest(mentions: list[Mention], other: Mention) -> Mention | None:
    same = [m for m in mentions if m.sentence == other.sentence]
    clear = [m for m in same if m.last <= other.first or m.first >= other.last]
    if not clear:
        return None
    return min(clear, key=lambda m: min(abs(m.first - other.last), abs(other.first - m.last)))


def _distance(n: int) -> str:
    return (
        "0"
        if n <= 0
        else "1"
        if n == 1
        else "2"
        if n == 2
        else "3-4"
        if n <= 4
        else "5-8"
        if n <= 8
        else "9+"
    )


@dataclass
class PairCandidate:
    source: str
    target: str
    sentence: int
    features: list[str]
    verb_relation: str | None


def pair_candidates(p: Passage, keys: set[str]) -> list[PairCandidate]:
    """Every ordered pair of candidate names in one sentence, and the topic with every name in
    a sentence that does not name it; each with its features."""
    out: dict[tuple[str, str], PairCandidate] = {}
    topic = p.topic.lower() if p.topic else None
    for s, (_, words) in enumerate(p.sentences):
        present = [m for k in keys for m in p.mentions.get(k, []) if m.sentence == s]
        present = sorted(present, key=lambda m: (m.first, m.last))[:MAX_MENTIONS]
        names_here = {m.key for m in present}
        masked = _masked(p, words, present)
        for m in present:
            for other in present:
                if other.key == m.key or (m.key, other.key) in out:
                    continue
                if not (m.last <= other.first or other.last <= m.first):
                    continue
                if max(m.first, other.first) - min(m.last, other.last) > MAX_GAP:
                    continue  # far apart in a long sentence: the pairs would grow as its square
                mine = _nearest([x for x in present if x.key == m.key], other) or m
                out[(m.key, other.key)] = _pair(p, mine, other, masked, present)
            if topic and topic in keys and topic not in names_here and m.key != topic:
                for pair in ((topic, m.key), (m.key, topic)):
                    if pair not in out:
                        out[pair] = _implied(p, pair, m, masked, present)
    for pair in p.rule_edges:
        if pair not in out and pair[0] in keys and pair[1] in keys:
            said = p.rule_evidence.get(pair, "")
            at = next((s for s, (text, _) in enumerate(p.sentences) if text == said), 0)
            out[pair] = PairCandidate(*pair, at, ["pbias", "rule_only", *_common(p, *pair)], None)
    return list(out.values())


_WHOLE = ("rule", "run", "topic")
_LIST_WORDS = {"<N>", ",", "and", "or", "&", "as", "well"}


def _masked(p: Passage, words: list[Word], present: list[Mention]) -> list[str]:
    """The sentence's words lower-cased, with every word of a whole name ("<N>") hidden, so
    that a pair's context is its grammar, not the names around it."""
    lows = [w.low for w in words]
    for m in present:
        if p.origin[m.key] in _WHOLE:
            for i in range(m.first, m.last):
                lows[i] = "<N>"
    return lows


def _nested(p: Passage, m: Mention, present: list[Mention]) -> bool:
    """The mention lies inside a longer whole name ("cron" in "billing cron job")."""
    return any(
        x.first <= m.first and x.last >= m.last and x.last - x.first > m.last - m.first
        for x in present
        if p.origin[x.key] in _WHOLE
    )


def _sentence_features(words: list[str]) -> list[str]:
    lows = set(words)
    f = []
    if lows & _NEGATIONS or any(w.endswith("n't") for w in words):
        f.append("negated")
    if lows & _MODALS:
        f.append("modal")
    if words and words[-1] == "?":
        f.append("question")
    if "from" in lows and "to" in lows:
        f.append("from_to")
    return f


def _pair(
    p: Passage, a: Mention, b: Mention, words: list[str], present: list[Mention]
) -> PairCandidate:
    forward = a.last <= b.first
    d = "f" if forward else "r"
    lo, hi = (a.last, b.first) if forward else (b.last, a.first)
    between = words[lo:hi]
    f = ["pbias", f"dir={d}", f"dist={_distance(len(between))}|{d}"]
    f += [f"btw={w}|{d}" for w in between[:8]]
    # What is between once other names and the commas and "and"s of a list are left out:
    # "uses React, Redux and TypeScript" relates the last name as it does the first.
    core = [w for w in between if w not in _LIST_WORDS]
    f.append(f"core={'_'.join(core[:4])}|{d}")
    if between:
        f += [f"b1={between[0]}|{d}", f"bL={between[-1]}|{d}"]
        f += [f"bb={x}_{y}|{d}" for x, y in itertools.pairwise(between)][:6]
    else:
        f.append(f"adjacent|{d}")
    first = min(a.first, b.first)
    last = max(a.last, b.last)
    f.append(f"before={words[first - 1] if first else '<s>'}|{d}")
    f.append(f"after={words[last] if last < len(words) else '</s>'}|{d}")
    if first >= 2:
        f.append(f"before2={words[first - 2]}|{d}")
    verb = next((w for w in between if w in _VERBS), None)
    if verb is None:
        verb = next((w for w in reversed(words[:first]) if w in _VERBS), None)
        f.append(f"verb_before={verb}|{d}")
    else:
        f.append(f"verb={verb}|{d}")
    inside = sum(
        1 for m in present if m.first >= lo and m.last <= hi and m.key not in (a.key, b.key)
    )
    f.append(f"names_between={min(inside, 3)}")
    if _nested(p, a, present):
        f.append("a_nested")
    if _nested(p, b, present):
        f.append("b_nested")
    f += _sentence_features(words)
    f += _common(p, a.key, b.key)
    return PairCandidate(a.key, b.key, a.sentence, f, _VERBS.get(verb) if verb else None)


def _implied(
    p: Passage, pair: tuple[str, str], m: Mention, words: list[str], present: list[Mention]
) -> PairCandidate:
    d = "it" if pair[0] != m.key else "ti"  # topic first or topic second
    before = words[: m.first]
    f = ["pbias", f"implied={d}", f"pos={_distance(m.first)}|{d}"]
    f += [f"ibtw={w}|{d}" for w in before[-6:]]
    f.append(f"iprev={before[-1] if before else '<s>'}|{d}")
    f.append(f"ifirst={before[0] if before else '<name>'}|{d}")
    verb = next((w for w in reversed(before) if w in _VERBS), None)
    f.append(f"iverb={verb}|{d}")
    f.append(f"names_before={min(sum(1 for x in present if x.last <= m.first), 3)}|{d}")
    if _nested(p, m, present):
        f.append("nested")
    f += _sentence_features(words)
    f += _common(p, *pair)
    return PairCandidate(pair[0], pair[1], m.sentence, f, _VERBS.get(verb) if verb else None)


def _end(p: Passage, key: str, side: str) -> list[str]:
    """What the pair's scorer needs to know of one end: is it a name at all."""
    surface = p.names[key]
    words = surface.split()
    f = [
        f"{side}origin={p.origin[key]}",
        f"{side}shape={_shape(words[0])}",
        f"{side}n={min(len(words), 3)}",
    ]
    cleaned = clean(surface)
    f.append(
        f"{side}clean={'refused' if cleaned is None else 'same' if cleaned.lower() == key else 'other'}"
    )
    if len(words) == 1 and words[0].islower():
        f.append(
            f"{side}lex={'noun' if english_word(key) else 'other' if plain_word(key) else 'none'}"
        )
    f.append(f"{side}last={words[-1].lower()}")
    return f


def _common(p: Passage, a: str, b: str) -> list[str]:
    ta = p.rule_types.get(a) or known_type(p.names[a]) or "?"
    tb = p.rule_types.get(b) or known_type(p.names[b]) or "?"
    f = [f"ta={ta}", f"tb={tb}", f"tt={ta}|{tb}", *_end(p, a, "a_"), *_end(p, b, "b_")]
    if (a, b) in p.rule_edges:
        f += ["rule_fwd", f"rule_fwd={p.rule_edges[(a, b)]}"]
    if (b, a) in p.rule_edges:
        f.append("rule_rev")
    if p.topic and a == p.topic.lower():
        f.append("src_topic")
    if p.topic and b == p.topic.lower():
        f.append("dst_topic")
    return f
