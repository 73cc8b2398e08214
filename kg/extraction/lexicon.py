"""Word lists of the heuristic extractor: relation verbs, words that never start or end a name,
and the head nouns that say an entity's type."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VerbPattern:
    words: tuple[str, ...]  # lower-case tokens, matched in sequence
    relation: str
    particle: str | None = None  # preposition that must follow, possibly after a short gap
    reverse: bool = False  # passive voice: the object is the source
    two_objects: str | None = None  # "replaced X with Y": the word between X and Y


def _forms(forms: str, relation: str, particle: str | None = None) -> list[VerbPattern]:
    return [VerbPattern((form,), relation, particle) for form in forms.split()]


_AUX = ("is", "are", "was", "were", "be", "been", "being")

# Verbs whose object follows directly ("A uses B").
_DIRECT: list[tuple[str, str]] = [
    ("use uses used using", "uses"),
    ("call calls called calling", "calls"),
    ("invoke invokes invoked", "calls"),
    ("query queries queried", "queries"),
    ("poll polls polled", "queries"),
    ("manage manages managed managing", "manages"),
    ("lead leads led", "leads"),
    ("own owns owned", "owns"),
    ("maintain maintains maintained", "maintains"),
    ("fix fixes fixed", "fixed"),
    ("break breaks broke", "broke"),
    ("require requires required", "depends_on"),
    ("need needs needed", "depends_on"),
    ("wrap wraps wrapped", "wraps"),
    ("extend extends extended", "extends"),
    ("implement implements implemented", "implements"),
    ("import imports imported", "imports"),
    ("contain contains contained", "contains"),
    ("include includes included", "includes"),
    ("consume consumes consumed", "consumes"),
    ("produce produces produced", "produces"),
    ("power powers powered", "powers"),
    ("support supports supported", "supports"),
    ("monitor monitors monitored", "monitors"),
    ("trigger triggers triggered", "triggers"),
    ("host hosts hosted", "hosts"),
    ("feed feeds fed", "feeds"),
    ("create creates created", "created"),
    ("build builds built", "built"),
    ("write wrote", "wrote"),
    ("mentor mentors mentored", "mentors"),
    ("hire hires hired", "hired"),
    ("review reviews reviewed", "reviewed"),
    ("deploy deploys deployed", "deploys"),
    ("cache caches cached", "caches"),
    ("schedule schedules scheduled", "schedules"),
    ("replace replaces", "replaces"),
    ("run runs", "runs"),
    ("join joins joined", "part_of"),
    ("store stores stored", "stores"),
    ("send sends sent", "sends"),
    ("notify notifies notified", "notifies"),
    ("emit emits emitted", "emits"),
    ("index indexes indexed", "indexes"),
    ("process processes processed", "processes"),
    ("render renders rendered", "renders"),
    ("validate validates validated", "validates"),
    ("parse parses parsed", "parses"),
    ("generate generates generated", "generates"),
    ("supersede supersedes superseded", "replaces"),
    ("deprecate deprecates deprecated", "deprecates"),
    ("reach reaches reached", "calls"),
]

# Verbs that need a preposition ("X depends on Y", "Kibana reads logs from Elasticsearch").
_PARTICLE: list[tuple[str, str, str]] = [
    ("depend depends depended depending", "on", "depends_on"),
    ("rely relies relied relying", "on", "depends_on"),
    ("read reads reading", "from", "reads_from"),
    ("pull pulls pulled", "from", "reads_from"),
    ("fetch fetches fetched", "from", "reads_from"),
    ("load loads loaded", "from", "reads_from"),
    ("write writes writing", "to", "writes_to"),
    ("send sends sent", "to", "sends_to"),
    ("push pushes pushed", "to", "writes_to"),
    ("post posts posted", "to", "writes_to"),
    ("publish publishes published", "to", "publishes_to"),
    ("stream streams streamed", "to", "streams_to"),
    ("export exports exported", "to", "exports_to"),
    ("stage stages staged", "to", "stages_to"),
    ("subscribe subscribes subscribed", "to", "subscribes_to"),
    ("listen listens listened", "to", "listens_to"),
    ("connect connects connected", "to", "connects_to"),
    ("talk talks talked", "to", "talks_to"),
    ("report reports reported", "to", "reports_to"),
    ("belong belongs belonged", "to", "part_of"),
    ("relate relates related", "to", "related_to"),
    ("migrate migrates migrated", "to", "migrated_to"),
    ("run runs ran", "on", "runs_on"),
    ("work works worked", "on", "works_on"),
    ("store stores stored", "in", "stores_in"),
    ("save saves saved", "to", "writes_to"),
    ("integrate integrates integrated", "with", "integrates_with"),
    ("sync syncs synced", "with", "syncs_with"),
    ("feed feeds fed", "into", "feeds"),
    ("inherit inherits inherited", "from", "inherits_from"),
    ("proxy proxies proxied", "to", "proxies_to"),
    ("forward forwards forwarded", "to", "sends_to"),
    ("route routes routed", "to", "routes_to"),
    ("log logs logged", "to", "writes_to"),
    ("import imports imported", "from", "imports_from"),
    ("authenticate authenticates authenticated", "against", "authenticates_with"),
    ("authenticate authenticates authenticated", "with", "authenticates_with"),
    ("written", "in", "built_with"),
    ("send sends sent", "through", "uses"),
    ("send sends sent", "via", "uses"),
    ("built", "with", "built_with"),
    ("built", "on", "built_with"),
    ("made", "with", "uses"),
    ("wrapped", "with", "uses"),
    ("served", "by", "runs_on"),
    ("served", "from", "runs_on"),
    ("hosted", "on", "runs_on"),
    ("orchestrated", "by", "uses"),
    ("scheduled", "by", "uses"),
    ("delivered", "through", "uses"),
    ("delivered", "via", "uses"),
    ("go goes going went", "through", "uses"),
    ("tested", "against", "runs_on"),
    ("lean leans leaned", "on", "depends_on"),
    ("persist persists persisted", "with", "uses"),
    ("persist persists persisted", "in", "stores_in"),
    ("cache caches cached", "in", "stores_in"),
    ("keep keeps kept", "in", "stores_in"),
    ("schedule schedules", "through", "uses"),
    ("sit sits", "behind", "depends_on"),
    ("deployed", "to", "runs_on"),
    ("deploy deploys deploying", "to", "runs_on"),
    ("deployed", "on", "runs_on"),
    ("runs ran run running", "in", "runs_on"),
    ("build builds", "on", "built_with"),
    ("ship ships shipped", "to", "writes_to"),
    ("upload uploads uploaded", "to", "writes_to"),
    ("back backs backed", "to", "writes_to"),
    ("consume consumes consumed consuming", "from", "consumes_from"),
    ("work works", "with", "integrates_with"),
    ("train trains trained", "on", "trained_on"),
    ("fine-tuned finetuned", "on", "trained_on"),
    # "runs under Gunicorn", "sits on a single VM", "lives on a Pi".
    ("run runs ran running", "under", "runs_on"),
    ("sit sits sat", "on", "runs_on"),
    ("live lives lived", "on", "runs_on"),
    # Data put somewhere: "loads feeds into DuckDB", "archived to ClickHouse", "syncs to X".
    ("load loads loaded loading", "into", "writes_to"),
    ("build builds built building", "into", "writes_to"),
    ("upsert upserts upserted", "into", "writes_to"),
    ("dump dumps dumped", "into", "writes_to"),
    ("archive archives archived", "to", "writes_to"),
    ("mirror mirrors mirrored", "to", "writes_to"),
    ("sync syncs synced syncing", "to", "integrates_with"),
    ("compile compiles compiled", "to", "runs_on"),
]


def _build() -> list[VerbPattern]:
    patterns = _verb_forms()
    for aux in _AUX:
        patterns += _aux_phrases(aux)
        patterns += _aux_passives(aux)
    patterns += _bare_passives()
    patterns += _phrasal_verbs()
    patterns += _replacements()
    # Longest first, so "is part of" wins over a bare "is" and "replaced X with" over "replaced".
    patterns.sort(key=lambda p: (-len(p.words), p.two_objects is None, p.particle is None))
    return patterns


def _verb_forms() -> list[VerbPattern]:
    """Every form of the verbs with a direct object, then of those that need a preposition."""
    patterns: list[VerbPattern] = []
    for forms, rel in _DIRECT:
        patterns += _forms(forms, rel)
    for forms, particle, rel in _PARTICLE:
        patterns += _forms(forms, rel, particle)
    return patterns


def _aux_phrases(aux: str) -> list[VerbPattern]:
    """ "is part of", "was built with", "were deployed to": an auxiliary and a fixed phrase."""
    patterns: list[VerbPattern] = []
    for head in (("part", "of"), ("a", "part", "of"), ("a", "component", "of")):
        patterns.append(VerbPattern((aux, *head), "part_of"))
    patterns.append(VerbPattern((aux, "related", "to"), "related_to"))
    patterns.append(VerbPattern((aux, "connected", "to"), "connects_to"))
    patterns.append(VerbPattern((aux, "built", "on"), "built_on"))
    patterns.append(VerbPattern((aux, "built", "with"), "built_with"))
    patterns.append(VerbPattern((aux, "hosted", "on"), "runs_on"))
    # "Lanternfish is written in Zig", "results are kept in TimescaleDB": the passive of a verb
    # whose subject keeps the role it has in the active ("X writes itself in Y" is no reading).
    for past, particle, rel in (
        ("written", "in", "built_with"), ("implemented", "in", "built_with"),
        ("stored", "in", "stores_in"), ("kept", "in", "stores_in"), ("cached", "in", "stores_in"),
        ("persisted", "in", "stores_in"), ("served", "from", "runs_on"), ("run", "on", "runs_on"),
        ("trained", "on", "trained_on"), ("synced", "with", "integrates_with"),
        ("served", "by", "runs_on"), ("deployed", "with", "uses"),
    ):  # fmt: skip
        patterns.append(VerbPattern((aux, past, particle), rel))
    patterns.append(VerbPattern((aux, "deployed", "to"), "deploys_to"))
    patterns.append(VerbPattern((aux, "deployed", "on"), "runs_on"))
    patterns.append(VerbPattern((aux, "replaced", "by"), "replaced_by"))
    patterns.append(VerbPattern((aux, "used", "for"), "uses", reverse=True))
    patterns.append(VerbPattern((aux, "used", "in"), "uses", reverse=True))
    patterns.append(VerbPattern((aux, "superseded", "by"), "replaced_by"))
    return patterns


def _aux_passives(aux: str) -> list[VerbPattern]:
    """ "is used by", "was written by": the passive voice, so the object is the source."""
    patterns: list[VerbPattern] = []
    for past, rel in (
        ("used", "uses"),
        ("called", "calls"),
        ("managed", "manages"),
        ("owned", "owns"),
        ("maintained", "maintains"),
        ("fixed", "fixed"),
        ("broken", "broke"),
        ("led", "leads"),
        ("created", "created"),
        ("built", "built"),
        ("written", "wrote"),
        ("consumed", "consumes"),
        ("powered", "powers"),
        ("triggered", "triggers"),
        ("monitored", "monitors"),
        # "The Parquet output is read by DuckDB", "fed by Segment": the agent is the source.
        ("read", "reads_from"),
        ("pulled", "reads_from"),
        ("polled", "reads_from"),
        ("queried", "reads_from"),
        ("ingested", "reads_from"),
        ("scraped", "monitors"),
        ("watched", "monitors"),
        ("fed", "writes_to"),
        ("populated", "writes_to"),
        ("filled", "writes_to"),
    ):
        patterns.append(VerbPattern((aux, past, "by"), rel, reverse=True))
    return patterns


def _bare_passives() -> list[VerbPattern]:
    """ "maintained by", "consumed by" without an auxiliary: "a tool maintained by Ana"."""
    patterns: list[VerbPattern] = []
    for past, rel in (("maintained", "maintains"), ("created", "created"), ("built", "created"),
                      ("deployed", "deploys"), ("monitored", "monitors"), ("used", "uses"),
                      ("needed", "depends_on"), ("required", "depends_on"),
                      ("consumed", "consumes_from"), ("watched", "monitors"),
                      ("owned", "owns"), ("led", "leads")):  # fmt: skip
        patterns.append(VerbPattern((past, "by"), rel, reverse=True))
    return patterns


def _phrasal_verbs() -> list[VerbPattern]:
    """Verbs of several words: "shells out to", "forms part of", "sits behind"."""
    return [
        VerbPattern(("shells", "out", "to"), "calls"),
        VerbPattern(("shell", "out", "to"), "calls"),
        VerbPattern(("talks", "to"), "calls"),
        VerbPattern(("pulls", "in"), "uses"),
        VerbPattern(("pull", "in"), "uses"),
        VerbPattern(("pulled", "in"), "uses"),
        VerbPattern(("talk", "to"), "calls"),
        VerbPattern(("forms", "part", "of"), "part_of"),
        VerbPattern(("sits", "behind"), "depends_on", reverse=True),
        VerbPattern(("talks", "to"), "talks_to"),
    ]


def _replacements() -> list[VerbPattern]:
    """ "replaced X with Y", "swapped X for Y", "switched from X to Y": two objects, old -> new."""
    patterns: list[VerbPattern] = []
    for form in ("replaced", "replace", "swapped", "swap"):
        patterns.append(VerbPattern((form,), "replaced_by", two_objects="with"))
    for form in ("swapped", "swap", "traded"):
        patterns.append(VerbPattern((form,), "replaced_by", two_objects="for"))
    for form in ("switched", "switch", "moved", "move", "migrated", "migrate", "went", "ported"):
        patterns.append(VerbPattern((form, "from"), "replaced_by", two_objects="to"))
    # "moved gitea to the NUC", "flashed Klipper onto the board": the first now runs on the second.
    for form in ("moved", "move", "moves", "migrated", "migrate", "migrates"):
        patterns.append(VerbPattern((form,), "runs_on", two_objects="to"))
    for form in ("flashed", "flash", "flashes", "installed", "install", "installs"):
        patterns.append(VerbPattern((form,), "runs_on", two_objects="onto"))
    # "It runs QMK on an RP2040", "we run Gitea on a NUC": the first runs on the second.
    for form in ("run", "runs", "ran", "running"):
        patterns.append(VerbPattern((form,), "runs_on", two_objects="on"))
    # "CircleCI replaced Travis CI": the object was replaced by the subject.
    patterns.append(VerbPattern(("replaced",), "replaced_by", reverse=True))
    return patterns


VERB_PATTERNS = _build()
# First word -> the patterns starting with it, longest first (the matcher runs per token).
VERBS_BY_FIRST: dict[str, list[VerbPattern]] = {}
for _pattern in VERB_PATTERNS:
    VERBS_BY_FIRST.setdefault(_pattern.words[0], []).append(_pattern)

ARROWS = {"->", "→", "=>", "-->"}

DETERMINERS = {
    "the", "a", "an", "our", "my", "their", "your", "his", "her", "its", "this", "that",
    "these", "those", "each", "every", "some", "any", "all", "both", "new", "another",
}  # fmt: skip

PRONOUNS = {
    "i", "we", "you", "he", "she", "it", "they", "me", "us", "him", "them", "myself",
    "ourselves", "itself", "themselves", "who", "which", "what", "whom", "whose", "there",
    "here", "everything", "nothing", "something", "anything", "everyone", "someone", "anyone",
    "nobody", "somebody", "everybody", "one", "none", "i'm", "i've", "we're", "it's", "that's",
    "i'll", "we'll", "they're", "you're",
}  # fmt: skip

# Function words, auxiliaries and adverbs: never part of a name.
FUNCTION_WORDS = {
    "and", "or", "but", "nor", "so", "yet", "if", "then", "than", "because", "while",
    "when", "whenever", "where", "wherever", "whether", "though", "although", "unless",
    "until", "since", "as", "for", "with", "from", "to", "of", "in", "on", "at", "by",
    "into", "onto", "over", "under", "about", "after", "before", "through", "via", "per",
    "without", "within", "between", "against", "during", "behind", "across", "around",
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do",
    "does", "did", "will", "would", "can", "could", "should", "may", "might", "must",
    "shall", "not", "no", "never", "also", "still", "just", "only", "even", "very",
    "really", "too", "maybe", "perhaps", "however", "therefore", "thus", "hence", "now",
    "today", "yesterday", "tomorrow", "tonight", "currently", "recently", "finally",
    "eventually", "again", "already", "always", "often", "sometimes", "usually", "soon",
    "later", "earlier", "first", "next", "last", "meanwhile", "instead", "rather", "actually",
    "basically", "probably", "definitely", "like", "more", "most", "less", "much", "many",
    "few", "such", "own", "same", "other", "please", "yes", "ok", "okay", "well", "kind",
    "up", "down", "out", "off", "away", "back", "long", "anymore", "anyway", "together", "ago", "sort", "lot", "lots", "thing", "things", "way", "ways", "time", "times", "day", "days",
    "week", "weeks", "month", "months", "year", "years", "morning", "afternoon", "evening",
    "night", "idea", "question", "answer", "something", "hunch", "feeling", "moment",
    "sources", "source", "note", "notes", "take", "let", "make", "get", "got", "go", "went",
    "come", "came", "feel", "feels", "felt", "think", "thought", "know", "knew", "seem",
    "seems", "try", "tried", "want", "wanted", "hope", "wish", "says", "said", "tell",
    "told", "see", "saw", "look", "looks", "happen", "happens", "happened", "counts",
    "right", "wrong", "good", "bad", "great", "hard", "easy", "sure", "able", "why", "how",
    "cannot",
}  # fmt: skip

# Capitalised words that are not names when they stand alone.
NOT_NAMES = {
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "june", "july", "august", "september",
    "october", "november", "december", "mr", "mrs", "ms", "dr", "tl", "dr.", "fyi", "ps",
    "todo", "note", "update", "edit", "summary", "answer", "question", "sources", "source",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
}  # fmt: skip

# Head nouns that say the type ("the Payments team", "the reporting service").
HEAD_TYPES = {
    "team": "team", "squad": "team", "group": "team", "department": "team", "org": "team",
    "service": "service", "services": "service", "api": "service", "endpoint": "service",
    "server": "service", "backend": "component", "frontend": "component", "gateway": "service",
    "worker": "component", "workers": "component", "module": "component",
    "modules": "component", "renderer": "component", "helper": "component",
    "parser": "component", "job": "component", "jobs": "component", "indexer": "component",
    "agent": "component", "notebook": "component", "sensor": "component",
    "buffer": "component", "queue": "component", "component": "component",
    "pipeline": "component", "cache": "component", "script": "component",
    "plugin": "component", "store": "component", "daemon": "component",
    "scheduler": "component", "handler": "component", "client": "component",
    "deploy": "component", "cron": "component", "library": "technology",
    "framework": "technology", "database": "technology", "db": "technology",
    "language": "technology", "project": "project", "platform": "project",
    "initiative": "project", "app": "project", "application": "project",
    "dataset": "dataset", "data": "dataset", "corpus": "dataset", "tool": "tool",
    "cli": "tool", "model": "technology", "engine": "component", "generator": "component",
    "bot": "component", "service-mesh": "technology", "repo": "project",
    "repository": "project", "dashboard": "component", "page": "component",
    "monolith": "component", "registry": "component", "controller": "component",
    "tests": "component", "scraper": "component", "crawler": "component", "ui": "component",
    "site": "project", "website": "project", "portal": "project", "warehouse": "technology",
    "lake": "technology", "bucket": "technology", "topic": "technology",
    "topics": "technology", "table": "component", "microservice": "service",
    "function": "component", "lambda": "component", "cluster_": "technology", "stack": "technology", "cluster": "technology",
}  # fmt: skip

# Relations whose endpoints are usually people when written as a single capitalised name.
PERSON_SUBJECT_RELATIONS = {
    "manages", "leads", "owns", "maintains", "fixed", "created", "wrote", "mentors",
    "hired", "reviewed", "reports_to", "works_on",
}  # fmt: skip
PERSON_OBJECT_RELATIONS = {"manages", "mentors", "hired", "reports_to"}

# The relations a moderator sees (tests/kg/fixtures/prose/GUIDELINES.md): 22 named ones and
# "related_to" for a verb that states a link but none of them. A verb's own name maps here so
# the queue does not hold "wraps", "talks_to" and "calls" for one idea.
CANONICAL_RELATIONS = (
    "uses", "depends_on", "built_with", "part_of", "reads_from", "writes_to", "stores_in",
    "publishes_to", "consumes_from", "calls", "routes_to", "runs_on", "deploys",
    "integrates_with", "replaced_by", "monitors", "trained_on", "owns", "manages", "maintains",
    "created", "works_on", "related_to",
)  # fmt: skip
# Verb relation -> (canonical relation, reversed?): "X contains Y" is "Y part_of X".
RELATION_MAP: dict[str, tuple[str, bool]] = {
    "queries": ("reads_from", False), "leads": ("manages", False),
    "fixed": ("works_on", False), "broke": ("related_to", False),
    "wraps": ("calls", False), "extends": ("built_with", False),
    "implements": ("uses", False), "imports": ("uses", False), "imports_from": ("uses", False),
    "contains": ("uses", False), "includes": ("uses", False),
    "consumes": ("consumes_from", False), "produces": ("publishes_to", False),
    "powers": ("uses", True), "supports": ("integrates_with", False),
    "triggers": ("calls", False), "hosts": ("runs_on", True), "feeds": ("writes_to", False),
    "built": ("created", False), "wrote": ("created", False), "mentors": ("related_to", False),
    "hired": ("related_to", False), "reviewed": ("works_on", False),
    "caches": ("stores_in", False), "schedules": ("uses", False),
    "replaces": ("replaced_by", True), "runs": ("uses", False), "stores": ("stores_in", False),
    "sends": ("writes_to", False), "notifies": ("publishes_to", False),
    "emits": ("publishes_to", False), "indexes": ("reads_from", False),
    "processes": ("reads_from", False), "renders": ("uses", False),
    "validates": ("uses", False), "parses": ("reads_from", False),
    "generates": ("writes_to", False), "deprecates": ("related_to", False),
    "sends_to": ("writes_to", False), "streams_to": ("publishes_to", False),
    "exports_to": ("writes_to", False), "stages_to": ("writes_to", False),
    "subscribes_to": ("consumes_from", False), "listens_to": ("consumes_from", False),
    "connects_to": ("calls", False), "talks_to": ("calls", False),
    "reports_to": ("manages", True), "migrated_to": ("uses", False),
    "syncs_with": ("integrates_with", False), "inherits_from": ("built_with", False),
    "proxies_to": ("routes_to", False), "authenticates_with": ("calls", False),
    "built_on": ("built_with", False), "deploys_to": ("runs_on", False),
}  # fmt: skip


def canonical(relation: str) -> tuple[str, bool]:
    """A verb's relation in the moderators' vocabulary, and whether its ends swap."""
    return RELATION_MAP.get(relation, (relation, False))
