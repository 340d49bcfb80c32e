"""The demo: a folder of a fictional company's documents and the tools that read it.

``harness demo`` finds, in the folder shipped here (:func:`corpus_path`), the statements that
decide a price change and from when it applies, with two tools that call no model:
:class:`ListFolder` (``list_folder``: a folder's text files, as :class:`TextFile`) and
:class:`ReadStatements` (``read_statements``, the key tool: a text file's statements). Files
that are not text never become a ``TextFile``, so no reader is ever offered one.
:class:`ReadDocument` and :class:`SplitStatements` are the same reading in two moves, for
palettes of your own. :func:`register_formatters` sets what the demo's artifacts read as before
the model. The answer is scored against the corpus's key (:func:`answer_key`,
:func:`score_answer`); :class:`AnswerKeyPolicy` and :class:`UniformRandomPolicy` are the two
reference models to compare a model with (:func:`run_demo_with`).

Beside the corpus, ``training/corpus`` is a second folder of the same task (another fictional
company, its own planted decisions in ``training/answer_key.json``), for fitting a decider that
is then measured on the demo's folder, which is never fitted on. ``selections.jsonl`` here and
in ``training/`` are the labelled decisions the two folders give: the selection questions the
thinker asks about every statement when it finishes, labelled by each key (tagged ``test`` and
``train``; made from a checkout by ``python -m scripts.demo_selections --write``).
"""

from __future__ import annotations

from harness.demo._artifacts import Document as Document
from harness.demo._artifacts import Folder as Folder
from harness.demo._artifacts import Statement as Statement
from harness.demo._artifacts import TextFile as TextFile
from harness.demo._artifacts import document_text as document_text
from harness.demo._artifacts import folder_name as folder_name
from harness.demo._artifacts import register_formatters as register_formatters
from harness.demo._artifacts import shown_path as shown_path
from harness.demo._artifacts import statement_text as statement_text
from harness.demo._artifacts import text_file_text as text_file_text
from harness.demo._key import AnswerKey as AnswerKey
from harness.demo._key import DemoScore as DemoScore
from harness.demo._key import PlantedDecision as PlantedDecision
from harness.demo._key import answer_key as answer_key
from harness.demo._key import answer_statements as answer_statements
from harness.demo._key import score_answer as score_answer
from harness.demo._policies import POLICY_ENTRY as POLICY_ENTRY
from harness.demo._policies import AnswerKeyPolicy as AnswerKeyPolicy
from harness.demo._policies import UniformRandomPolicy as UniformRandomPolicy
from harness.demo._policies import policy_catalog as policy_catalog
from harness.demo._policies import run_demo_with as run_demo_with
from harness.demo._run import DemoRun as DemoRun
from harness.demo._run import corpus_path as corpus_path
from harness.demo._run import demo_folder as demo_folder
from harness.demo._run import demo_progress_line as demo_progress_line
from harness.demo._run import relative_source as relative_source
from harness.demo._run import run_demo as run_demo
from harness.demo._statements import split_into_statements as split_into_statements
from harness.demo._thinker import DEMO_MAX_TURNS as DEMO_MAX_TURNS
from harness.demo._thinker import DEMO_OBJECTIVE as DEMO_OBJECTIVE
from harness.demo._thinker import PriceDecisionFinder as PriceDecisionFinder
from harness.demo._thinker import demo_formatters as demo_formatters
from harness.demo._tools import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from harness.demo._tools import MAX_LISTED_FILES as MAX_LISTED_FILES
from harness.demo._tools import ListedFile as ListedFile
from harness.demo._tools import ListFolder as ListFolder
from harness.demo._tools import ReadDocument as ReadDocument
from harness.demo._tools import ReadStatements as ReadStatements
from harness.demo._tools import SplitStatements as SplitStatements
from harness.demo._tools import UnreadableDocumentError as UnreadableDocumentError
from harness.demo._tools import survey_folder as survey_folder

__all__ = [
    "DEMO_MAX_TURNS",
    "DEMO_OBJECTIVE",
    "MAX_DOCUMENT_BYTES",
    "MAX_LISTED_FILES",
    "POLICY_ENTRY",
    "AnswerKey",
    "AnswerKeyPolicy",
    "DemoRun",
    "DemoScore",
    "Document",
    "Folder",
    "ListFolder",
    "ListedFile",
    "PlantedDecision",
    "PriceDecisionFinder",
    "ReadDocument",
    "ReadStatements",
    "SplitStatements",
    "Statement",
    "TextFile",
    "UniformRandomPolicy",
    "UnreadableDocumentError",
    "answer_key",
    "answer_statements",
    "corpus_path",
    "demo_folder",
    "demo_formatters",
    "demo_progress_line",
    "document_text",
    "folder_name",
    "policy_catalog",
    "register_formatters",
    "relative_source",
    "run_demo",
    "run_demo_with",
    "score_answer",
    "shown_path",
    "split_into_statements",
    "statement_text",
    "survey_folder",
    "text_file_text",
]
