"""Follow-ups over the kind of documents users upload (a staff handbook, an appliance manual,
a meeting transcript, a medicine leaflet): what is searched after "she", "they", "it" and a new
subject described in the message, through both knowledge-base agents that reformulate offline
(conversational_rag: ``parenting``; corrective_rag: ``medical``), and where the answer is
found. The earlier replies are given, so what is checked is the follow-up, not the composer."""

from __future__ import annotations

import pytest

from ragchat.agents.config import AgentConfig, AppConfig, KnowledgeBaseConfig
from ragchat.agents.conversational_rag.state import ConversationalTrace
from ragchat.agents.engine import ChatEngine
from ragchat.agents.types import TurnResult
from ragchat.embed.base import Embedder
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.settings import Settings
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from ..helpers import Chat, EngineFactory, run

DOCUMENTS = {
    "staff_handbook.md": """# Northwind staff handbook

## Annual leave

Full-time staff get 25 days of annual leave a year plus bank holidays. The leave year runs
from 1 January to 31 December. Book leave through the HR portal at least two weeks ahead.

### Carrying leave over

You can carry up to 5 unused days into the next leave year; other unused leave is lost on
31 December. If you could not take your leave because you were off sick, you can carry over
up to 20 days, and they must be used within 18 months.

## Sickness absence

If you are ill, call your line manager before 9:30 on your first day off. For absences longer
than 7 calendar days you need a fit note from your GP; send it to hr@northwind.example.

## Gifts and hospitality

You may accept gifts worth up to £50 from a client or supplier. Anything worth more than £50
must be declared in the gift register within five working days.
""",
    "dishwasher_manual.md": """# AquaClean 500 dishwasher: user manual

## Error codes

E15 means there is water in the base tray: turn off the water supply and call service.
E24 means the water is not draining: clean the drain filter and check the drain hose for
kinks.

## Cleaning the drain filter

The drain filter sits in the bottom of the tub, under the lower spray arm. Twist it
anticlockwise, lift it out and rinse it under running water. Clean it once a month.

## Installation

Before first use, remove the two transit screws from the back of the dishwasher. Keep the
screws: you will need them if you move the dishwasher. The drain hose must be fixed at a
height between 40 cm and 80 cm above the floor.
""",
    "garden_meeting.vtt": """WEBVTT

00:00:01.000 --> 00:00:06.000
<v Chair>Tonight we have three items: the garden budget, the newsletter and the compost workshop.

00:00:06.500 --> 00:00:12.000
<v Chair>First the garden budget. We have 400 pounds for new tools this year.

00:00:12.500 --> 00:00:18.000
<v Chair>Finally the compost workshop. Maria Lopez has agreed to run it on Saturday 14 June.

00:00:18.500 --> 00:00:24.000
<v Maria Lopez>I will run it at the community hall from ten until noon.

00:00:24.500 --> 00:00:30.000
<v Chair>Anyone with questions can email Maria at maria@greenstreet.example.
""",
    "cetirizine_leaflet.md": """# Cetirizine 10 mg tablets: patient leaflet

## What cetirizine is used for

Cetirizine is an antihistamine. It relieves hay fever symptoms such as sneezing, a runny
nose and itchy eyes, and itchy skin rashes (hives).

## Possible side effects

Cetirizine can make you feel sleepy or drowsy, though less than older antihistamines. Do not
drive or use machines if you feel drowsy. Other side effects are a dry mouth and tiredness.

## How much to take

Adults and children aged 12 and over: one 10 mg tablet once a day. Children aged 6 to 11:
5 mg twice a day. Do not give cetirizine tablets to children under 6.

## If you forget a dose

Take it as soon as you remember, unless it is nearly time for the next dose. Do not take a
double dose to make up for a forgotten one.
""",
    "headaches.md": """# Headaches

## Common causes

Most headaches are tension headaches, brought on by stress, poor posture, dehydration or
lack of sleep. A pounding headache on one side of the head, with feeling sick, may be a
migraine.
""",
}


@pytest.fixture(scope="module")
def documents_kb(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, settings: Settings
) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("user-docs")
    folder = root / "docs"
    folder.mkdir()
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase.create(root / "kbs", "mydocs", embedder)
    assert not ingest_paths(kb, [folder], Chunker(settings.chunking)).errors
    return kb


@pytest.fixture(scope="module")
def engine(
    make_engine: EngineFactory, app_config: AppConfig, documents_kb: KnowledgeBase
) -> ChatEngine:
    """One engine whose two knowledge-base agents search the user's documents."""
    agents = {
        name: app_config.agents[name].model_copy(update={"knowledge_base": "mydocs"})
        for name in ("parenting", "medical")
    }
    config = app_config.model_copy(
        update={"knowledge_bases": {"mydocs": KnowledgeBaseConfig()}, "agents": agents}
    )
    return make_engine(config, kb_opener=lambda name: documents_kb)


def ask(engine: ChatEngine, agent: str, history: list[tuple[str, str]], message: str) -> TurnResult:
    chat = Chat(engine)
    chat.conversation.assigned_agent = agent
    for question, reply in history:
        chat.conversation.history += Chat.pair(question, reply, agent)
    return run(chat.say(message, agent=agent))


def found(result: TurnResult, kb: KnowledgeBase) -> str:
    """Where the first two passages the search kept sit, and their text, whether or not the
    agent answered from them (the corrective agent's grader may still refuse: that is answer
    quality, not what was searched)."""
    gate = result.metadata.gate
    assert gate is not None
    return " | ".join(f"{c.location()}: {c.text}" for c in kb.get_chunks(gate.chunk_ids[:2]))


AGENTS = ["parenting", "medical"]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_new_symptom_is_searched_as_itself_not_as_the_last_subject(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    """The issue's case: searched as "What could drowsy be?" before."""
    history = [
        ("What is cetirizine used for?", "Cetirizine relieves hay fever symptoms [1]."),
        ("Does that make you drowsy?", "Cetirizine can make you feel sleepy or drowsy [1]."),
    ]
    message = "My head is pounding… What could it be?"
    result = ask(engine, agent, history, message)
    assert result.metadata.search_query == message
    assert "Headaches" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_that_is_the_medicine_and_its_side_effects_are_found(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [("What is cetirizine used for?", "Cetirizine relieves hay fever symptoms [1].")]
    result = ask(engine, agent, history, "Does that make you drowsy?")
    assert result.metadata.search_query == "Does cetirizine make you drowsy?"
    assert "Possible side effects" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_she_is_the_person_the_answer_named(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "Who is running the compost workshop?",
            "Maria Lopez has agreed to run it on Saturday 14 June [1].",
        )
    ]
    result = ask(engine, agent, history, "How can I contact her?")
    assert result.metadata.search_query == "How can I contact Maria Lopez?"
    assert "maria@greenstreet.example" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_them_is_the_leave_just_asked_about(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "How many days of annual leave do I get?",
            "Full-time staff get 25 days of annual leave a year plus bank holidays [1].",
        )
    ]
    result = ask(engine, agent, history, "Can I carry them over?")
    assert result.metadata.search_query == "Can I carry days of annual leave over?"
    assert "Carrying leave over" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_it_is_the_part_the_answer_to_a_which_question_gave(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "Which part should I clean when the dishwasher shows E24?",
            "Clean the drain filter and check the drain hose for kinks [1].",
        )
    ]
    result = ask(engine, agent, history, "Where is it?")
    assert "drain filter" in result.metadata.search_query.lower()
    # Offline, a follow-up is searched with the person's earlier messages beside it, which
    # name the error code rather than the filter: either the filter's section is searched
    # first, or the answer (read for the rewritten question) still comes from it.
    cited = bool(result.citations) and (
        "Cleaning the drain filter" in result.citations[0].section_path
    )
    assert cited or "Cleaning the drain filter" in found(result, documents_kb), result.reply


def test_a_question_naming_no_topic_is_searched_before_asking_back(
    make_engine: EngineFactory, app_config: AppConfig, documents_kb: KnowledgeBase
) -> None:
    """The knowledge-base agent (``clarify_below``): "What are the side effects?" over a
    leaflet is answered from it; "What about it?" finds nothing clear and is asked back. The
    same agent without the setting asks back at once."""
    documents = app_config.agents["documents"].model_copy(update={"knowledge_base": "mydocs"})
    assert documents.clarify_below is not None

    def engine_with(agent: AgentConfig) -> ChatEngine:
        config = app_config.model_copy(
            update={
                "knowledge_bases": {"mydocs": KnowledgeBaseConfig()},
                "agents": {"documents": agent},
            }
        )
        return make_engine(config, kb_opener=lambda name: documents_kb)

    searching = engine_with(documents)
    side_effects = run(Chat(searching).say("What are the side effects?", agent="documents"))
    assert not side_effects.no_answer and side_effects.citations
    assert "Possible side effects" in (side_effects.citations[0].location or "")
    vague = run(Chat(searching).say("What about it?", agent="documents"))
    assert vague.metadata.traced(ConversationalTrace).clarifying_question
    assert not vague.citations and not vague.no_answer

    asking = engine_with(documents.model_copy(update={"clarify_below": None}))
    at_once = run(Chat(asking).say("What are the side effects?", agent="documents"))
    assert at_once.metadata.traced(ConversationalTrace).clarifying_question
    assert at_once.metadata.gate is None  # nothing was searched


# --- what the last answer said, second pass (issue 25) ----------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_those_are_the_things_the_answer_brought_up(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    """Searched as "Should I throw first use away?" before."""
    history = [
        (
            "Do I need to do anything before first use?",
            "Before first use, remove the two transit screws from the back of the dishwasher [1].",
        )
    ]
    result = ask(engine, agent, history, "Should I throw those away?")
    assert result.metadata.search_query == "Should I throw transit screws away?"
    assert "Installation" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_what_about_a_value_after_a_yes_no_question_is_asked_on_its_own(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "Do I need to do anything before first use?",
            "Before first use, remove the two transit screws from the back of the dishwasher [1].",
        ),
        ("Should I throw those away?", "Keep the screws: you will need them [1]."),
    ]
    result = ask(engine, agent, history, "What about the drain hose height?")
    assert result.metadata.search_query == "What is the drain hose height?"
    assert "between 40 cm and 80 cm" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_more_than_that_is_more_than_the_amount_just_given(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "How much can I accept as a gift from a client?",
            "You may accept gifts worth up to £50 from a client or supplier [1].",
        )
    ]
    result = ask(engine, agent, history, "What if it's worth more than that?")
    assert result.metadata.search_query == "What if gift is worth more than £50?"
    assert "gift register" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_and_for_children_asks_the_dose_question_for_children(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "What's the usual adult dose of cetirizine?",
            "Adults and children aged 12 and over: one 10 mg tablet once a day [1].",
        )
    ]
    result = ask(engine, agent, history, "And for children?")
    assert result.metadata.search_query == "What's the usual dose of cetirizine for children?"
    assert "5 mg twice a day" in found(result, documents_kb)


@pytest.mark.parametrize("agent", AGENTS)
def test_do_it_is_the_action_asked_about(
    engine: ChatEngine, documents_kb: KnowledgeBase, agent: str
) -> None:
    history = [
        (
            "How do I clean the drain filter?",
            "Twist it anticlockwise, lift it out and rinse it under running water [1].",
        )
    ]
    result = ask(engine, agent, history, "How often should I do it?")
    assert result.metadata.search_query == "How often should I clean the drain filter?"
    assert "Cleaning the drain filter" in found(result, documents_kb)
