"""What the writer is shown when the detector finds a warning sign: at ``risk`` instead of any
further question, at ``concern`` calmly above the next one."""

from __future__ import annotations

CRISIS_RESOURCES = [
    {"name": "988 Suicide & Crisis Lifeline (US)", "contact": "Call or text 988", "region": "US"},
    {"name": "Crisis Text Line", "contact": "Text HOME to 741741", "region": "US"},
    {
        "name": "Emergency services",
        "contact": "Call 911 (US) or your local emergency number",
        "region": "any",
    },
    {
        "name": "Find a helpline",
        "contact": "https://findahelpline.com",
        "region": "other countries",
    },
]
CRISIS_MESSAGE = (
    "What you wrote sounds like you might be in danger or thinking about ending your life. "
    "You deserve support right now from a person, not a questionnaire. Please reach out to one "
    "of these services, or to someone you trust, now."
)
CONCERN_MESSAGE = (
    "Some of what you wrote sounds heavy. If things feel like too much, you don't have to carry "
    "them alone: these services are free, confidential and there at any hour. You can also "
    "keep going here whenever you're ready."
)
