"""Where the crux bench loses accuracy, play by play (``bench/crux.py --diagnose``).

Each play of an entry is put in one class:

- **right**: the confirmed crux passes the judge.
- **A, no seed passes**: none of the first turn's hypotheses (the crux each would confirm)
  passes; split by whether the crux composed for another archetype of the catalogue would
  (A1), or only some frame with a single cited sentence of the entry would (A2), or nothing
  the composer can build would (A3).
- **B, a seed passes**: never shown to the writer (B1); shown, and the simulated writer picked
  another option or said "not sure" (B2); picked, and the agent confirmed another (B3).
- **C**: the writer picked the passing option and the agent confirmed its hypothesis, but the
  final wording (composed with the live rivals) fails.

Besides, per entry (no play): the composer's own ceiling when it knows the answer, i.e. the
labelled archetype's frame with the gold spans the dataset marks, the frame alone, and the spans
alone. Judge, writer and plays are those of bench/_crux_play.py; nothing here is tuned on.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent.engine import compose as C
from agent.engine.beliefs import seed_nodes
from agent.engine.wording import turned
from bench._crux_play import NOT_SURE, correct, signed_in, writer_answer


def _oracle(item: dict[str, Any]) -> dict[str, Any]:
    entry = item["entry"]
    seeds = [n.archetype for n in seed_nodes(entry)]
    every = {a: C.compose(entry, a).text for a in C.FRAMES}
    spans = C._fitting(C.candidate_spans(entry))
    bare = [turned(entry, s, s) for s in spans]
    gold = [s for s in item.get("gold_spans", []) if s in entry]
    shown = [C.shown(entry, item["archetype"], s, C.MAX_WORDS) or turned(entry, s, s) for s in gold]
    frame = C.FRAMES.get(item["archetype"], "")
    return {
        "seed_ok": {a: correct(item, every[a]) for a in seeds},
        "other_ok": any(correct(item, t) for a, t in every.items() if a not in seeds),
        "frame_span_ok": any(correct(item, f"{f}: {b}.") for f in C.FRAMES.values() for b in bare),
        "gold": {
            "frame and gold spans": bool(gold) and correct(item, f"{frame}: {'; '.join(shown)}."),
            "gold spans alone": bool(gold) and correct(item, "; ".join(shown) + "."),
            "frame alone": correct(item, frame + "."),
            "composed for the labelled archetype": correct(item, every[item["archetype"]]),
        },
    }


def _play(client: Any, item: dict[str, Any]) -> dict[str, Any] | None:
    """One play as bench/_crux_play.play runs it, recording which offered options pass."""

    def post(body: dict[str, Any]) -> dict[str, Any]:
        return client.post("/v3/agent/act", body, format="json").json()

    data = post({"mode": "init", "journal_entry": {"text": item["entry"]}})
    asks = []
    while not data["complete"]:
        action = data["action"]
        event = None
        if action["type"] == "AskUser":
            arche = {n["node_id"]: n["archetype"] for n in data["state"]["belief_state"]["nodes"]}
            value = writer_answer(item, action["quick_options"])
            options = [o for o in action["quick_options"] if o != NOT_SURE]
            asks.append(
                {
                    "targets": [arche.get(t, "") for t in action["targets"]],
                    "ok": [correct(item, o) for o in options],
                    "pick": action["quick_options"].index(value),
                    "texts": options,
                }
            )
            event = {"answer_to": action["action_id"], "value": value}
        data = post({"mode": "continue", "state": data["state"], "user_event": event})
    crux = data["result"]["confirmed_crux"]
    if crux is None:  # a guardrail stop
        return None
    nodes = {n["node_id"]: n["archetype"] for n in data["state"]["belief_state"]["nodes"]}
    top = nodes.get(str(crux["node_id"]), "")
    return {
        "asks": asks,
        "final": crux["text"],
        "top": top,
        "final_ok": correct(item, crux["text"]),
    }


def classify(oracle: dict[str, Any], play: dict[str, Any]) -> str:
    if play["final_ok"]:
        return "right"
    if not any(oracle["seed_ok"].values()):
        if oracle["other_ok"]:
            return "A1 no seed passes; another archetype's crux would"
        if oracle["frame_span_ok"]:
            return "A2 no seed passes; only a frame with one sentence would"
        return "A3 no seed passes; nothing composed would"
    passing = [(a, i) for a in play["asks"] for i, ok in enumerate(a["ok"]) if ok]
    if not passing:
        return "B1 a seed passes; never shown"
    picked = [a for a in play["asks"] if a["pick"] < len(a["ok"]) and a["ok"][a["pick"]]]
    if not picked:
        unsure = all(a["pick"] >= len(a["ok"]) for a in play["asks"])
        return "B2 shown; writer " + ("said not sure throughout" if unsure else "picked another")
    if play["top"] not in {a["targets"][a["pick"]] for a in picked}:
        return "B3 writer picked a passing option; agent confirmed another"
    return "C the picked hypothesis was confirmed, in words that fail"


def diagnose(items: list[dict[str, Any]], repeat: int) -> str:
    client = signed_in()
    classes: Counter[str] = Counter()
    ceilings: Counter[str] = Counter()
    seeds_any = guard = 0
    for item in items:
        oracle = _oracle(item)
        ceilings.update(k for k, ok in oracle["gold"].items() if ok)
        for _ in range(repeat):
            play = _play(client, item)
            if play is None:
                guard += 1
                continue
            classes[classify(oracle, play)] += 1
            seeds_any += any(oracle["seed_ok"].values())
    plays = sum(classes.values())
    lines = [
        f"{len(items)} entries, {plays} plays ({guard} guardrail stops left out)",
        "",
        "| class | plays | share |",
        "|---|---|---|",
        *(
            f"| {name} | {n} | {n / max(1, plays):.1%} |"
            for name, n in sorted(classes.items(), key=lambda kv: (kv[0] != "right", kv[0]))
        ),
        "",
        f"A seed passes (the first turn's oracle): {seeds_any / max(1, plays):.1%} of plays",
        "",
        "Composer knowing the answer (per entry, labelled archetype's frame):",
        *(f"- {k}: {ceilings[k] / len(items):.1%}" for k in _oracle_keys()),
    ]
    return "\n".join(lines)


def _oracle_keys() -> list[str]:
    return [
        "frame and gold spans",
        "gold spans alone",
        "frame alone",
        "composed for the labelled archetype",
    ]
