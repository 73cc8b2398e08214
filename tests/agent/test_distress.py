"""The distress detector (agent.safety): warning signs by category in words it has never seen,
dark-but-safe writing left alone, the two levels at every door, the model layer that may only
raise, and the text never logged or stored.

The phrasings here were written for these tests, apart from the development set
(tests/agent/fixtures/distress/) and the statement bank (agent/safety/bank.json)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent import safety
from agent.safety import semantic
from agent.safety.patterns import explicit_match, mention_match, statement_match

FIXTURES = Path(__file__).parent / "fixtures"
FAKE_CLI = FIXTURES / "fake_screen_cli.py"
ORDINARY = (
    "Took the long way home through the park. The chestnut trees are turning and somebody had "
    "left a chalk hopscotch on the path. Made soup, rang my brother about his birthday plans."
)

# Several phrasings per warning-sign category, each inside ordinary life.
UNSEEN = {
    "burden": [
        "Mum paid my rent again. All I do is drain the people who love me; they'd breathe "
        "easier if I wasn't in the picture.",
        "My team would get more done without me slowing everyone down, and so would my "
        "family. I'm the dead weight everyone keeps carrying.",
        "i cost everyone so much, money, time, worry. they would honestly be freer without me",
    ],
    "trapped_pain": [
        "Another night awake. There's no door out of this, every way I turn it's the same "
        "wall, and I can't carry it much longer.",
        "The pain doesn't stop, not for an hour. I'm stuck inside it and I can't bear another "
        "month like this.",
        "Feels like I'm locked in a room that keeps getting smaller and nobody can hear me.",
    ],
    "hopelessness": [
        "People keep saying it gets better. It won't. I can't see anything ahead of me, no "
        "next year, nothing.",
        "What's the point of fixing the car or booking the dentist. Nothing is going to change "
        "and I've stopped expecting it to.",
        "There is no future version of me that I can picture. Just grey all the way down.",
    ],
    "goodbye": [
        "Sent everyone a long message tonight thanking them for everything, just in case I "
        "don't get another chance to say it.",
        "Recorded a voice note for my little sister telling her how proud I am of her and to "
        "remember me laughing.",
        "Dear Sam, if you're reading this, I'm sorry I couldn't stay. Look after Mum for me.",
    ],
    "affairs_in_order": [
        "Wrote down the bank logins and put them in an envelope for my brother. Found a good "
        "home for the cat with Priya. Everything is sorted now.",
        "Gave my guitar and my records to Leo. He asked why and I said I wouldn't be needing "
        "them anymore.",
        "Updated the will, cancelled the phone contract, left the insurance papers on the "
        "kitchen table where they'll find them.",
    ],
    "sudden_calm": [
        "For months everything was heavy. Since I made my decision on Sunday I feel strangely "
        "peaceful, like it's all settled.",
        "I'm calm for the first time in a year. I know how this ends now and that thought is "
        "a relief.",
        "Everyone says I seem better. I am. The choice is made and the fog has lifted.",
    ],
    "plan_means": [
        "I've been keeping back a few of my sleeping tablets every week. There's quite a "
        "collection in the drawer now.",
        "Spent the evening reading how many of my heart pills it would take. Saturday the "
        "house will be empty.",
        "Drove out to the multistorey car park and stood at the top level for a long time, "
        "working out the height.",
    ],
    "withdrawal": [
        "Turned my phone off a week ago and haven't turned it back on. I don't want anyone to "
        "find me. Easier if I just fade out of their lives.",
        "Stopped going to band practice, stopped answering the group chat. I want to vanish "
        "so nobody has to miss me later.",
        "Cancelled on everyone again. If I pull away now it'll hurt them less when I'm gone.",
    ],
    "self_harm": [
        "Relapsed tonight after four months clean. Long sleeves tomorrow even though it's "
        "thirty degrees.",
        "Pressed the hot spoon against my wrist until the noise in my head went quiet.",
        "Scratched my arms raw again in the shower so I'd feel something other than this.",
    ],
}

# Dark-but-safe writing, written for these tests.
BENIGN = [
    "This tax return is killing me. Three hours and I'm still on page two. Ordering noodles.",
    "Grandpa died on Tuesday. At the funeral we told stories about his terrible jokes and I "
    "cried and laughed at the same time. I'll miss him every day.",
    "My paladin finally died in the campaign tonight, a glorious last stand. Rolling a new "
    "character on Friday.",
    "Packed the last boxes before the move to Dublin. Gave the sofa and my old bike to the "
    "neighbours and said goodbye to the street.",
    "We signed our wills now that the baby is here, and put the insurance papers in the safe.",
    "Handed in my notice and sent the goodbye email to the team. I'm done with that place and "
    "I feel relieved.",
    "Cancelled the gym membership to end it once and for all. Walking to work instead.",
    "Finished the draft of my crime novel: the villain's death scene finally works.",
    ORDINARY,
]


@pytest.fixture(scope="module", autouse=True)
def _bank_loaded() -> None:
    semantic.read_texts(["Load the sentence model once for the module."])


@pytest.mark.parametrize("category", sorted(UNSEEN))
def test_each_warning_sign_category_is_caught_in_unseen_words(category: str) -> None:
    """Most phrasings of every category are caught, and most are named as that category (for
    the metrics). Not all: on an unseen writer the detector catches about nine in ten indirect
    signs and names about nine in ten of those it catches (docs/benchmarks.md); a farewell
    letter that asks someone to look after the family can read as burden."""
    found = [safety.assess([text], where="test") for text in UNSEEN[category]]
    caught = [a for a in found if a.level in ("concern", "risk")]
    assert len(caught) >= 2, [a.level for a in found]
    named = [a.category for a in caught]
    assert named.count(category) >= 2, named


@pytest.mark.parametrize("text", BENIGN)
def test_dark_but_safe_writing_is_not_flagged(text: str) -> None:
    assert safety.assess([text], where="test").level == "none"


@pytest.mark.parametrize(
    "text",
    [
        "I want to die. I've thought about it every night this week.",
        "Tonight I thought about killing myself.",
        "I cut myself again after the exam.",
        # Writers address themselves as "you" in a journal.
        "You've been planning how to end your own life since March and you haven't told anyone.",
        "Some nights you just wish you weren't alive at all.",
        # Passive and informal forms.
        "Honestly I'd rather be dead. Every morning is the same weight.",
        "I keep hoping I'll go to sleep and never wake up.",
        "lol no, not the joke kind. i wanna die and i mean it",
        "By the time anyone reads this I will have taken my life.",
        # Slang, typing slips, the future tense with a time, wanting out of life itself.
        "gonna neck myself if next week is anything like this one",
        "im so tired of this. i want to kil myslef",
        "Looked up sewerslide methods again at 3am.",
        "I'll end it this weekend when the flat is empty.",
        "Nothing has changed in a year. I want out of this life.",
        "I no longer want to be alive, and I mean it plainly.",
        # Wishing or praying for one's own death; "to" typed in a hurry or in Scots.
        "Most evenings on the night bus I only wish to be dead, then I get off and make tea.",
        "Lit a candle at St Anne's. Prayed to die before Christmas, and meant it.",
        "honestly want too die. exam or no exam",
        "Rain again. Wantin tae die. Fed the dog.",
        "Wishing ye were deid again, ya daft old sod, and not telling anyone.",
        "havnae slept. thinkin o toppin masel.",
        # The wish as an item of a list.
        "Goals this week:\n- pay the gas\n- to be dead\n- call Mam",
        "Want to go to sleep and never wake, that's the whole of it today.",
    ],
)
def test_explicit_statements_are_always_risk(text: str) -> None:
    assert safety.assess([text], where="test").level == "risk"


def test_someone_elses_words_about_the_writer_are_not_explicit() -> None:
    assert safety.assess(["Lou thought I'd cut myself on the tin."], where="test").level == "none"


@pytest.mark.parametrize(
    "text",
    [
        # "you" in quotation marks is someone speaking to someone else.
        'At the vigil training we practised asking it plainly: "Are you thinking of killing '
        'yourself?" Awkward, but it gets easier.',
        # Hyperbole and idioms.
        "I'd rather die than sing karaoke at the work party.",
        "Don't kill yourself over the quarterly report, said my manager, which was kind.",
        # Everyday senses of the same words.
        "Need to top myself up on phone credit before the trip.",
        "I don't want to live in London anymore, the rent is absurd.",
        "The gym membership is a waste. Going to end it for good and walk to work instead.",
        "I'm going to end it with Sam tonight, it's been over for months.",
        "Grandad wished to die at home, and he did, with the radio on.",
        "Shopping:\n- dead bolt for the shed\n- to die for brownies from Lidl",
        "I'd wish to be there when the band plays, but the tickets are gone.",
        # Phrasal idioms and accidents with the words of self-harm.
        "I always cut myself down in meetings before anyone else gets the chance.",
        "Hurt myself at the gym again, left calf this time.",
        "Burning myself out for a client who won't remember my name.",
        "Cut myself a slice of the lemon drizzle and went back to the spreadsheet.",
    ],
)
def test_quoted_questions_and_hyperbole_are_not_explicit(text: str) -> None:
    assert explicit_match(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Thinking about suicide again. Every night this week, longer each time.",
        "i overdosed once at nineteen and lately i keep working out how many it would take now",
        "The self-harm is back. Nobody knows, I wear long sleeves to the office.",
    ],
)
def test_a_mention_the_meaning_layer_reads_as_the_writers_own_is_a_risk(text: str) -> None:
    assert statement_match(text) is None and mention_match(text) is not None
    assert safety.assess([text], where="test").level == "risk"


@pytest.mark.parametrize(
    "text",
    [
        "Read a long article about suicide rates among dairy farmers. Rang Uncle Ted after, "
        "just to talk about the calving and the price of feed.",
        "Did the self-harm awareness module for work this afternoon, then picked the kids up "
        "and made fajitas.",
        "The inquest into the singer's overdose was on the radio while I drove to the coast.",
    ],
)
def test_a_mention_about_someone_else_is_a_concern_not_a_risk(text: str) -> None:
    """The word alone names the subject, not whose it is: the resources are shown calmly and
    the writer goes on."""
    assert statement_match(text) is None and mention_match(text) is not None
    found = safety.assess([text], where="test")
    assert found.level == "concern" and found.layer == "pattern"


def _load(name: str) -> list[dict[str, str]]:
    path = FIXTURES / "distress" / name
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _levels(name: str) -> dict[str, list[str]]:
    items = _load(name)
    return {
        label: [
            safety.assess([i["text"]], where="test").level for i in items if i["label"] == label
        ]
        for label in ("indirect", "explicit", "benign_dark", "ordinary")
    }


def _share(levels: list[str], *ok: str) -> float:
    return sum(level in ok for level in levels) / len(levels)


# The held-out writers' figures as docs/benchmarks.md reports them, each read once with the
# shipped model (none was fitted, tuned or chosen on): indirect signs caught (risk or concern),
# explicit entries at risk, dark-but-safe entries at risk and flagged, ordinary entries flagged
# and at risk. Each test holds its writer's measured figures: fewer caught, or more flagged,
# fails. Targets not met are kept visible rather than loosened: U's indirect 93 of 108 and
# explicit 19 of 20 at risk, every writer but B's ordinary entries above 2%.
HELD_OUT_FIGURES = {
    # writer: (indirect caught, explicit at risk, dark-but-safe at risk / flagged, ordinary
    # flagged / at risk), of (108, explicit, dark-but-safe, ordinary) entries
    "b": (105, 21, 0, 4, 0, 0),
    "j": (103, 20, 0, 10, 3, 0),
    "p": (100, 18, 2, 13, 2, 0),
    "t": (105, 20, 1, 10, 2, 0),
    "u": (93, 19, 2, 8, 6, 2),
    "y": (102, 20, 5, 13, 5, 0),
    "z": (104, 20, 2, 11, 2, 1),
}


@pytest.mark.parametrize("writer", sorted(HELD_OUT_FIGURES))
def test_held_out_writer_figures_hold(writer: str) -> None:
    """A held-out writer (written blind to the detector from the warning-sign categories) at
    the figures docs/benchmarks.md reports; the dark-but-safe targets (5% at risk, 15%
    flagged) and, but for U, the recall and explicit targets are met."""
    caught, explicit, benign_risk, benign_flagged, ordinary, ordinary_risk = HELD_OUT_FIGURES[
        writer
    ]
    levels = _levels(f"writer_{writer}.jsonl")
    assert len(levels["indirect"]) == 108 and len(levels["benign_dark"]) >= 100
    assert sum(level != "none" for level in levels["indirect"]) >= caught
    assert levels["explicit"].count("risk") >= explicit
    assert "none" not in levels["explicit"]
    assert levels["benign_dark"].count("risk") <= benign_risk
    assert sum(level != "none" for level in levels["benign_dark"]) <= benign_flagged
    assert sum(level != "none" for level in levels["ordinary"]) <= ordinary
    assert levels["ordinary"].count("risk") <= ordinary_risk
    assert _share(levels["benign_dark"], "risk") <= 0.05
    assert _share(levels["benign_dark"], "concern", "risk") <= 0.15


def test_everyday_entries_of_other_writers_are_rarely_flagged() -> None:
    """The crux set's held-out writers 05-08 (everyday entries about a hard day, none at risk,
    never fitted on): 24 of 160 flagged, 1 at risk, as docs/benchmarks.md reports. The 2%
    target is not met on entries like these; more flagged or at risk fails."""
    crux = FIXTURES / "crux"
    texts = [
        json.loads(line)["entry"]
        for name in ("writer_05.jsonl", "writer_06.jsonl", "writer_07.jsonl", "writer_08.jsonl")
        for line in (crux / name).read_text().splitlines()
        if line
    ]
    levels = [safety.assess([text], where="test").level for text in texts]
    assert len(levels) >= 160
    assert sum(level != "none" for level in levels) <= 24
    assert levels.count("risk") <= 1


def test_an_urgent_category_by_meaning_is_a_risk_only_at_the_bar() -> None:
    """A detection by meaning whose category is a plan or explicit intent is a concern under
    ``Params.risk`` and a risk at it; other categories stay a concern however sure; under the
    threshold nothing is detected."""
    params = semantic.PARAMS
    assert params.concern < params.risk < 1.0
    below = (params.concern + params.risk) / 2
    assert semantic.decide(below, "plan_means") == ("concern", "plan_means")
    assert semantic.decide(below, "explicit") == ("concern", "explicit")
    assert semantic.decide(params.risk, "plan_means") == ("risk", "plan_means")
    assert semantic.decide(0.999, "explicit") == ("risk", "explicit")
    assert semantic.decide(0.999, "burden") == ("concern", "burden")
    assert semantic.decide(params.concern - 0.01, "plan_means") == ("none", None)
    # The bar is a field of the parameters, not a constant: a stricter one moves the level.
    stricter = semantic.Params(concern=params.concern, risk=0.999)
    assert semantic.decide(params.risk, "plan_means", stricter) == ("concern", "plan_means")


def test_the_risk_bar_is_the_lowest_that_keeps_safe_entries_off_risk() -> None:
    """choosing.risk_bar: the lowest bar at which ordinary and dark-but-safe entries at risk by
    meaning are 1% or fewer each; a pattern's own false hit is no reason to raise it."""
    from agent.safety.choosing import risk_bar
    from agent.safety.training import Example

    def entries(label: str, n: int) -> list[Example]:
        return [Example("w", label, label, np.zeros((1, 1)), np.zeros(1)) for _ in range(n)]

    items = entries("ordinary", 200) + entries("benign_dark", 200) + entries("indirect", 100)
    chances = np.full(len(items), 0.1)
    urgent = np.zeros(len(items), dtype=bool)
    explicit = np.zeros(len(items), dtype=bool)
    # Three ordinary entries read as a plan at 0.6, 0.7 and 0.8: 1% allows two.
    for k, chance in enumerate((0.6, 0.7, 0.8)):
        chances[k], urgent[k] = chance, True
    # Three dark-but-safe ones whose explicit words match a pattern: counted apart.
    explicit[200:203] = True
    urgent[200:203], chances[200:203] = True, 0.95
    assert risk_bar(items, chances, urgent, explicit, 0.5) == pytest.approx(0.61)
    # A fourth dark-but-safe one by meaning at 0.9 and two more at 0.75: two of 200 are allowed.
    chances[203:206], urgent[203:206] = (0.9, 0.75, 0.75), True
    assert risk_bar(items, chances, urgent, explicit, 0.5) == pytest.approx(0.76)
    # Nothing urgent among the safe entries: the bar is the threshold itself.
    assert risk_bar(items, chances, np.zeros(len(items), bool), explicit, 0.5) == 0.5


def test_the_shipped_model_reads_entries_with_its_entry_reading(tmp_path: Path) -> None:
    """The shipped model carries the entry reading (the second stage over what the head says
    of every sentence), which is what sets the chance; written and read back, it decides
    exactly alike."""
    m = semantic.model()
    # The entry reading weighs what the head says and, last, the lexical reader's score.
    assert m.entry is not None and m.lexical is not None
    assert len(m.entry.weights) == len(semantic.FEATURES) + 1
    reading = semantic.read_texts([UNSEEN["burden"][0]])
    logits = m.logits(np.vstack([reading.sentences, reading.whole[None, :]]))
    features = semantic.entry_features(m, logits, reading.text)
    chance, _ = semantic.judge(m, reading.sentences, reading.whole, reading.text)
    assert chance == pytest.approx(m.entry.chance(features))
    m.save(tmp_path / "model.npz")
    again = semantic.Model.load(tmp_path / "model.npz")
    assert semantic.judge(again, reading.sentences, reading.whole, reading.text) == semantic.judge(
        m, reading.sentences, reading.whole, reading.text
    )


def test_a_lexical_reader_is_one_more_feature_of_the_entry_reading(tmp_path: Path) -> None:
    """A model with a lexical reader (``bench/distress.py --fit --lexical``) reads the entry's
    words as the entry reading's last feature; written and read back, it decides alike; an
    entry reading of the wrong length for it is refused."""
    from agent.safety.choosing import fit_lexical

    texts = [f"{w} the passwords for my sister" for w in ("wrote down", "left out", "sorted")]
    texts += [f"{w} the laundry for my sister" for w in ("did", "folded", "sorted")]
    reader = fit_lexical(texts, np.array([True] * 3 + [False] * 3))
    m = semantic.model()
    assert m.entry is not None
    n = len(semantic.FEATURES)
    entry = semantic.Entry(
        np.append(m.entry.centre[:n], 0.0),
        np.append(m.entry.scale[:n], 1.0),
        np.append(np.zeros(n), 1.0).astype(np.float32),
        np.zeros(1, np.float32),
    )
    lexical = m.with_entry(entry, reader)
    reading = semantic.read_texts(["Wrote down the passwords for my sister tonight."])
    logits = lexical.logits(np.vstack([reading.sentences, reading.whole[None, :]]))
    features = semantic.entry_features(lexical, logits, reading.text)
    assert len(features) == n + 1 and lexical.lexical is not None
    assert features[-1] == pytest.approx(lexical.lexical.score(reading.text)) and features[-1] > 0
    chance, _ = semantic.judge(lexical, reading.sentences, reading.whole, reading.text)
    assert chance == pytest.approx(1 / (1 + np.exp(-features[-1])), rel=1e-3)
    lexical.save(tmp_path / "lexical.npz")
    again = semantic.Model.load(tmp_path / "lexical.npz")
    assert again.lexical is not None and again.lexical.vocabulary == reader.vocabulary
    assert semantic.judge(again, reading.sentences, reading.whole, reading.text)[0] == chance
    heads_only = semantic.Entry(
        m.entry.centre[:n], m.entry.scale[:n], m.entry.weights[:n], m.entry.bias
    )
    m.with_entry(heads_only, reader).save(tmp_path / "wrong.npz")
    with pytest.raises(ValueError, match="weights"):
        semantic.Model.load(tmp_path / "wrong.npz")


def test_the_lexical_reader_learns_words_and_pairs_of_words() -> None:
    """fit_lexical: a logistic regression over an entry's words and adjacent pairs (TF-IDF)
    learns which words point to a sign; the same texts give the same weights; written at half
    precision and read back, it scores alike."""
    from agent.safety.choosing import fit_lexical
    from agent.safety.lexical import Lexical, terms

    assert terms("Last time. Last time\u2019s over") == {
        "last": 2,
        "time": 1,
        "time's": 1,
        "over": 1,
        "last time": 1,
        "time last": 1,
        "last time's": 1,
        "time's over": 1,
    }
    ends = ("today", "tonight", "at last", "quietly")
    signs = [f"sorted the {w} and the passwords, {e}" for w in ("insurance", "will") for e in ends]
    safe = [f"sorted the {w} and the laundry, {e}" for w in ("garden", "kitchen") for e in ends]
    sign = np.array([True] * len(signs) + [False] * len(safe))
    reader = fit_lexical(signs + safe, sign)
    assert reader.score("wrote down the passwords for my sister") > 0
    assert reader.score("did the laundry for my sister") < 0
    assert reader.score("") == pytest.approx(reader.bias)
    assert np.array_equal(fit_lexical(signs + safe, sign).weights, reader.weights)
    again = Lexical.from_arrays(reader.arrays())
    both = "the passwords and the laundry"
    assert again.score(both) == reader.score(both)


def test_the_entry_reading_is_fitted_to_the_labels() -> None:
    """fit_entry (logistic regression by Newton's method) learns which way a feature points
    and gives the same weights on every run."""
    from agent.safety.choosing import fit_entry

    rng = np.random.default_rng(1)
    features = rng.normal(size=(400, 3)).astype(np.float32)
    sign = features[:, 0] - 0.5 * features[:, 2] + 0.3 * rng.normal(size=400) > 0.8
    entry = fit_entry(features, sign)
    assert entry.weights[0] > 0 > entry.weights[2]
    assert abs(entry.weights[1]) < 0.5 * entry.weights[0]
    assert np.array_equal(fit_entry(features, sign).weights, entry.weights)
    assert entry.chance(np.array([3, 0, -3], np.float32)) > 0.9
    assert entry.chance(np.array([-3, 0, 3], np.float32)) < 0.1
