"""Does the embedded model select better when a Noul is asked as a yes/no choice?

sparrow-decider's yes/no answers are near chance and its choices sensible (its README says so).
This script measures both ways of asking, through :class:`EmbeddedDecisionClient` itself
(``noul_as_choice=False``: a System One noul; ``True``: a two-option choice ``yes`` / ``no``
described by the Noul's ``when_true`` / ``when_false``, answered with P(yes)), on three sets:

* ``direct``: 40 hand-labelled statements about prices (20 decide a price change and say from
  when it applies, 20 do not: proposals, plain prices, dates without prices, competitors'
  changes, rejected changes, costs that are not prices), one request per statement whose state
  is the statement itself;
* ``thinker``: the same 40 statements asked as the decision thinker asks its selection
  questions: one request, the state holding the objective and every statement's digest line,
  one ``select_<ref>`` Noul per statement;
* ``corpus``: every statement ``split_statements`` finds in the demo corpus, labelled by
  ``harness/demo/answer_key.json``, asked thinker-style one document at a time.

It prints, per set and way, the ROC AUC of P(true) (how well it ranks the true statements first),
the accuracy, precision and recall at the thinker's threshold 0.5, the mean P(true) of each
class, and the time per question; then the way with the higher mean AUC over the three sets.

Run: ``python benchmarks/noul_as_choice.py`` (offline, a second or two).
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import random
import statistics
import time
from collections.abc import Sequence

import attrs

from harness.catalog import CatalogEntry
from harness.decision import DecisionRequest, Noul
from harness.demo import corpus_path, split_into_statements
from harness.providers._embedded import EmbeddedDecisionClient

OBJECTIVE = "Find the statements that decide a price change and say from when it applies."
INSTRUCTIONS = "Does this statement decide a price change and say from when it applies?"
WHEN_TRUE = "it decides a price change and says from when it applies"
WHEN_FALSE = "it does not decide a price change with the date it applies from"
THRESHOLD = 0.5

DECIDES = (
    "The board approved raising the Basic plan from 8 to 10 EUR per month, effective 1 May 2027.",
    "Decision: the Premium tier goes from 30 to 35 USD per user from 1 July 2027.",
    "Agreed: the annual licence rises from 900 to 990 EUR, effective 1 January 2028.",
    "As decided by management, shipping will cost 6 EUR instead of 5 EUR starting 15 March 2027.",
    "We decided to lower the Starter price from 9 to 7 EUR per month from 1 June 2027.",
    "From 1 October 2027 the API plan costs 49 EUR per month instead of 39 EUR, as approved by "
    "the board.",
    "The committee approved a new price of 4 EUR per GB for extra storage, applying from "
    "1 August 2027.",
    "Resolved: the per-seat price of the Team plan increases to 11 EUR with effect from "
    "1 April 2027.",
    "The board decided that the Enterprise support fee drops from 500 to 450 EUR per month on "
    "1 September 2027.",
    "Effective 1 February 2028, the student discount is reduced from 50% to 30%, as decided by "
    "the pricing committee.",
    "Management approved raising the hourly consulting rate from 120 to 135 EUR, effective "
    "1 March 2027.",
    "Decided: coffee subscriptions will cost 18 EUR a month instead of 16 EUR from "
    "1 November 2027.",
    "The price of the Pro plan changes from 20 to 24 USD per month on 1 January 2028, per the "
    "board's decision.",
    "Starting 1 July 2027, the setup fee is cut from 200 to 100 EUR, as agreed by the founders.",
    "The pricing committee agreed to raise the Family plan from 15 to 17 EUR per month, "
    "effective 1 May 2027.",
    "With effect from 1 December 2027, delivery within the city costs 3 EUR instead of free, "
    "following the board decision.",
    "We approved the new price list: the Small box rises from 25 to 28 EUR from 1 April 2027.",
    "The board has decided to increase the monthly fee for the Gold membership to 60 EUR as of "
    "1 June 2027.",
    "Decision taken: the overage charge goes from 1 cent to 2 cents per request, effective "
    "15 August 2027.",
    "It was agreed that the Business plan will cost 25 EUR per seat instead of 20 EUR from "
    "1 October 2027.",
)
DOES_NOT = (
    "Marta proposed raising the Basic plan to 10 EUR; the committee will decide next month.",
    "The Premium tier costs 30 USD per user per month.",
    "The mobile app launches on 1 May 2027.",
    "The board decided to raise prices, with the amount and the date to be set later.",
    "Competitor Nimbus raised its Pro plan from 10 to 14 USD, effective 1 February 2027.",
    "The proposal to raise the Enterprise plan to 40 EUR was rejected.",
    "Should we raise the Starter price next year?",
    "Hosting costs rose by 22% since the last price review.",
    "From 1 January 2027, the hotel allowance for business travel is 120 EUR per night.",
    "We may change our prices with 30 days notice by email.",
    "Price changes are announced at least 30 days before they apply.",
    "Last year's price change on 1 March 2026 caused many support tickets.",
    "Revenue grew by 18% in the fourth quarter.",
    "The next board meeting is on 8 April 2027.",
    "A lifetime deal for early customers, perhaps 299 EUR once.",
    "Customers asked whether the Pro price would go up again.",
    "The Team plan stays at 9 EUR per seat.",
    "Sales may give discounts of up to 15% without approval.",
    "The office in Lyon opens on 1 April 2027.",
    "We are thinking about new pricing for teams later this year.",
)

ENTRY = CatalogEntry(
    id="embedded",
    provider="embedded",
    wire_model_id="sparrow-decider",
    max_context_tokens=32768,
    max_concurrent=2,
)


@attrs.frozen
class Figures:
    """One way of asking measured on one labelled set."""

    questions: int
    true: int
    auc: float
    accuracy: float
    precision: float
    recall: float
    mean_true: float
    mean_false: float
    ms_per_question: float


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a true statement scores above a false one), ties counting half (Mann-Whitney)."""
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def figures(scores: Sequence[float], labels: Sequence[bool], seconds: float) -> Figures:
    """The figures of P(true) ``scores`` against ``labels``."""
    positives = [s for s, label in zip(scores, labels, strict=True) if label]
    negatives = [s for s, label in zip(scores, labels, strict=True) if not label]
    chosen = [s >= THRESHOLD for s in scores]
    hits = sum(1 for c, label in zip(chosen, labels, strict=True) if c and label)
    right = sum(1 for c, label in zip(chosen, labels, strict=True) if c == label)
    return Figures(
        questions=len(labels),
        true=len(positives),
        auc=roc_auc(positives, negatives),
        accuracy=right / len(labels),
        precision=hits / sum(chosen) if any(chosen) else 0.0,
        recall=hits / len(positives),
        mean_true=statistics.fmean(positives),
        mean_false=statistics.fmean(negatives),
        ms_per_question=1000 * seconds / len(labels),
    )


def _select(ref: str, text: str) -> Noul:
    # The decision thinker's selection question, word for word (harness/thinker/_thinker.py).
    return Noul(
        f"Does {ref} belong in the answer to the objective? {ref}: {text}",
        when_true=f"{ref} belongs in the answer",
        when_false=f"{ref} does not belong in the answer",
    )


def _thinker_request(texts: Sequence[str], source: str) -> DecisionRequest:
    refs = [f"statement#{i}" for i in range(1, len(texts) + 1)]
    state = {
        "objective": OBJECTIVE,
        "artifacts": [
            f"document#1 (document): {source}",
            f"list#1 (list): a list of {len(texts)} statement",
            *(f"{ref} (statement): {text}" for ref, text in zip(refs, texts, strict=True)),
        ],
        "done": ["read_document on document_ref#1 produced document#1",
                 "split_statements on document#1 produced list#1"],
    }  # fmt: skip
    return DecisionRequest(
        state, {f"select_{r}": _select(r, t) for r, t in zip(refs, texts, strict=True)}
    )


async def _probabilities(client: EmbeddedDecisionClient, request: DecisionRequest) -> list[float]:
    response = await client.decide(request, ENTRY)
    return [response.noul(qid).probability for qid in request.questions]


async def direct(client: EmbeddedDecisionClient) -> Figures:
    """One request per hand-labelled statement, the statement as the state."""
    texts, labels = _labelled()
    started = time.perf_counter()
    scores: list[float] = []
    question = Noul(INSTRUCTIONS, when_true=WHEN_TRUE, when_false=WHEN_FALSE)
    for text in texts:
        scores += await _probabilities(client, DecisionRequest(text, {"q": question}))
    return figures(scores, labels, time.perf_counter() - started)


async def thinker(client: EmbeddedDecisionClient) -> Figures:
    """All hand-labelled statements in one thinker-shaped selection request."""
    texts, labels = _labelled()
    started = time.perf_counter()
    scores = await _probabilities(client, _thinker_request(texts, "notes.md: ..."))
    return figures(scores, labels, time.perf_counter() - started)


async def corpus(client: EmbeddedDecisionClient) -> Figures:
    """Every statement of the demo corpus, a thinker-shaped request per document."""
    key = json.loads(
        (pathlib.Path(__file__).parents[1] / "harness/demo/answer_key.json").read_text()
    )
    planted = {(d["file"], d["sentence"]) for d in key["decisions"]}
    root = corpus_path()
    scores: list[float] = []
    labels: list[bool] = []
    started = time.perf_counter()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        statements = split_into_statements(text) if "\x00" not in text else []
        if not statements:
            continue
        name = path.relative_to(root).as_posix()
        scores += await _probabilities(client, _thinker_request(statements, name))
        labels += [(name, s) in planted for s in statements]
    return figures(scores, labels, time.perf_counter() - started)


def _labelled() -> tuple[list[str], list[bool]]:
    pairs = [(t, True) for t in DECIDES] + [(t, False) for t in DOES_NOT]
    random.Random(7).shuffle(pairs)  # interleave the classes, the same way every run
    return [t for t, _ in pairs], [label for _, label in pairs]


async def main() -> None:
    """Measure both ways on every set and print the figures and the winner."""
    sets = {"direct": direct, "thinker": thinker, "corpus": corpus}
    mean_auc: dict[bool, float] = {}
    print(f"{'set':8} {'way':7} {'n/true':>7} {'AUC':>6} {'acc@.5':>7} {'prec':>6} {'recall':>6} "
          f"{'P|true':>7} {'P|false':>7} {'ms/q':>6}")  # fmt: skip
    for as_choice in (False, True):
        client = EmbeddedDecisionClient(noul_as_choice=as_choice)
        way = "choice" if as_choice else "noul"
        aucs = []
        for name, measure in sets.items():
            f = await measure(client)
            aucs.append(f.auc)
            counts = f"{f.questions}/{f.true}"
            print(f"{name:8} {way:7} {counts:>7} {f.auc:6.3f} {f.accuracy:7.3f} "
                  f"{f.precision:6.3f} {f.recall:6.3f} {f.mean_true:7.3f} {f.mean_false:7.3f} "
                  f"{f.ms_per_question:6.2f}")  # fmt: skip
        mean_auc[as_choice] = statistics.fmean(aucs)
        await client.aclose()
    winner = mean_auc[True] > mean_auc[False]
    print(f"mean AUC: noul {mean_auc[False]:.3f}, choice {mean_auc[True]:.3f} -> "
          f"noul_as_choice = {winner}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
