"""The seven frameworks of specs/002 "Cognitive Framework Integration". Each reads only the
text, so the same thought always gets the same analysis; none calls a model."""

from __future__ import annotations

from thoughts.think.frameworks.base import FrameworkOutput
from thoughts.think.frameworks.text import (
    clip,
    key_terms,
    markers,
    pick,
    sentences,
    sentences_with,
    topic,
)

UNCERTAINTY = ("maybe", "unsure", "not sure", "confused", "might", "perhaps", "wonder", "unclear")
ACTION = ("will", "going to", "plan to", "next", "try", "start", "ship", "fix", "build")
ABSOLUTES = ("always", "never", "everyone", "nobody", "obviously", "must", "all", "none")
INHERITED = ("usually", "everyone", "best practice", "supposed to", "always", "normally")
PROBLEM = (
    "error", "bug", "fails", "failed", "broken", "problem", "issue", "wrong", "slow", "crash",
    "stuck", "can't", "cannot", "doesn't", "won't", "not",
)  # fmt: skip
CAUSAL = ("because", "due to", "caused by", "since", "as a result", "therefore", "so that")
RELATION = (
    "depends on", "affects", "leads to", "causes", "feeds", "drives", "blocks", "triggers",
    "influences", "relies on", "results in",
)  # fmt: skip
OPPOSITION = ("but", "however", "although", "on the other hand", "yet", "versus", "vs", "whereas")
DOMAINS = ("biology", "architecture", "music", "cooking", "gardening", "sport", "theatre", "chess")


def _questions(text: str) -> list[str]:
    return [s for s in sentences(text) if s.endswith("?")]


def _claims(text: str) -> list[str]:
    return [s for s in sentences(text) if not s.endswith("?")]


class Ooda:
    name = "ooda"

    def analyze(self, text: str) -> FrameworkOutput:
        claims, asks = _claims(text), _questions(text)
        terms = key_terms(text, 3)
        if asks:
            phase = "decide"
        elif markers(text, UNCERTAINTY):
            phase = "orient"
        elif markers(text, ACTION):
            phase = "act"
        else:
            phase = "observe"
        out = FrameworkOutput(meta={"phase": phase, "terms": terms})
        if claims:
            out.insights.append(f"Observe: {clip(claims[0])}")
        if terms:
            out.insights.append(f"Orient: the situation turns on {', '.join(terms)}.")
        if asks:
            out.insights.append(f"Decide: the open decision is '{clip(asks[0], 100)}'")
        out.questions.append(f"What new observation would change your view of {topic(text)}?")
        out.next_steps.append(
            f"Act: take the smallest step that tests your read of {topic(text)}, then observe again."
        )
        return out


class Socratic:
    name = "socratic"

    def analyze(self, text: str) -> FrameworkOutput:
        terms = key_terms(text, 2)
        claims = _claims(text)
        absolutes = markers(text, ABSOLUTES)
        out = FrameworkOutput(meta={"claims": len(claims), "absolutes": absolutes})
        if terms:
            out.questions.append(f"What exactly do you mean by '{terms[0]}'?")
        if claims:
            out.questions.append(f"What evidence supports '{clip(claims[0], 90)}'?")
        out.questions.append("What would someone who disagrees say, and what would convince you?")
        if absolutes:
            out.insights.append(
                f"Absolute words ({', '.join(absolutes)}) hide assumptions worth testing."
            )
        out.insights.append(
            f"{len(claims)} claim(s) and {len(_questions(text))} question(s) stated."
        )
        out.next_steps.append("Write down the one assumption everything else depends on.")
        return out


class FirstPrinciples:
    name = "first_principles"

    def analyze(self, text: str) -> FrameworkOutput:
        components = key_terms(text, 4)
        inherited = markers(text, INHERITED)
        out = FrameworkOutput(meta={"components": components, "inherited": inherited})
        if components:
            out.insights.append(f"Core components: {', '.join(components)}.")
        if inherited:
            out.insights.append(
                f"Inherited beliefs ({', '.join(inherited)}) are conventions, not facts."
            )
        out.questions.append("Which of these components is true by necessity, and which by habit?")
        if components:
            out.next_steps.append(
                f"Rebuild the approach starting from '{components[0]}' alone, adding only what is needed."
            )
        else:
            out.next_steps.append("State the goal in one sentence without any solution in it.")
        return out


class Lateral:
    name = "lateral"

    def analyze(self, text: str) -> FrameworkOutput:
        subject = topic(text)
        domain = pick(DOMAINS, text, "domain")
        provocation = pick(("reversal", "exaggeration", "removal", "analogy"), text, "provocation")
        out = FrameworkOutput(meta={"provocation": provocation, "domain": domain})
        ideas = {
            "reversal": f"Reverse it: what if {subject} were the goal rather than the obstacle?",
            "exaggeration": f"Exaggerate it: what if {subject} were ten times bigger, or gone?",
            "removal": f"Remove it: what would you do if {subject} could not be used at all?",
            "analogy": f"Borrow it: how does {domain} handle something like {subject}?",
        }
        out.insights.append(ideas[provocation])
        out.questions.append(f"How would someone from {domain} approach {subject}?")
        out.next_steps.append("List three deliberately odd options before judging any of them.")
        return out


class RootCause:
    name = "root_cause"

    def analyze(self, text: str) -> FrameworkOutput:
        symptoms = sentences_with(text, PROBLEM)
        causes = sentences_with(text, CAUSAL)
        out = FrameworkOutput(meta={"symptoms": len(symptoms), "stated_causes": len(causes)})
        if symptoms:
            out.insights.append(f"Symptom: {clip(symptoms[0])}")
            out.questions.append(f"Why does this happen: '{clip(symptoms[0], 80)}'?")
            out.questions.append("And why is that? (ask until the answer is something you control)")
        else:
            out.insights.append("No explicit symptom stated; name what is actually going wrong.")
            out.questions.append(f"What outcome around {topic(text)} are you unhappy with?")
        if causes:
            out.insights.append(f"Stated cause: {clip(causes[0])}")
            out.next_steps.append(
                "Verify the stated cause with one observation before acting on it."
            )
        else:
            out.next_steps.append("Collect one concrete instance of the problem and trace it back.")
        return out


class Systems:
    name = "systems"

    def analyze(self, text: str) -> FrameworkOutput:
        lower = text.lower()
        relations = []
        for sentence in sentences(lower):
            for verb in markers(sentence, RELATION):
                left, _, right = sentence.partition(verb)
                before, after = key_terms(left, 1), key_terms(right, 1)
                if before and after:
                    relations.append((before[0], verb, after[0]))
        sources = {a for a, _, _ in relations}
        loops = sorted({b for _, _, b in relations if b in sources})
        out = FrameworkOutput(meta={"relations": len(relations), "loops": loops})
        for a, verb, b in relations[:3]:
            out.insights.append(f"{a} {verb} {b}.")
        if loops:
            out.insights.append(f"Feedback loop through {', '.join(loops)}.")
        if not relations:
            out.insights.append(f"No explicit relations stated around {topic(text)}.")
        out.questions.append(f"What else changes downstream when {topic(text)} changes?")
        out.next_steps.append(
            "Sketch the parts and arrows; look for the loop that sustains the problem."
        )
        return out


class Dialectical:
    name = "dialectical"

    def analyze(self, text: str) -> FrameworkOutput:
        split = None
        for sentence in sentences(text):
            found = markers(sentence, OPPOSITION)
            if found:
                split = (sentence, found[0])
                break
        out = FrameworkOutput(meta={"tension": split is not None})
        if split:
            sentence, marker = split
            thesis, _, antithesis = sentence.lower().partition(f" {marker} ")
            out.insights.append(f"Thesis: {clip(thesis or sentence, 90)}")
            if antithesis:
                out.insights.append(f"Antithesis: {clip(antithesis, 90)}")
            out.questions.append("What would have to be true for both sides to hold at once?")
        else:
            out.insights.append(
                f"Thesis: {clip(sentences(text)[0] if sentences(text) else text, 90)}"
            )
            out.questions.append("What is the strongest case against this?")
        out.next_steps.append("Write a synthesis that keeps what is right in each side.")
        return out


FRAMEWORKS = {
    cls.name: cls()
    for cls in (Ooda, Socratic, FirstPrinciples, Lateral, RootCause, Systems, Dialectical)
}
