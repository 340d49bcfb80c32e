"""The demo: a folder of a fictional company's documents and the tools that read it.

``harness demo`` finds, in the folder shipped here (:func:`corpus_path`), the statements that
decide a price change and from when it applies, with three tools that call no model:
:class:`ListFolder` (``list_folder``), :class:`ReadDocument` (``read_document``) and
:class:`SplitStatements` (``split_statements``, the key tool). :func:`register_formatters` sets
what the demo's artifacts read as before the model.
"""

from __future__ import annotations

import pathlib
from importlib import resources

from harness.demo._artifacts import Document as Document
from harness.demo._artifacts import DocumentRef as DocumentRef
from harness.demo._artifacts import Folder as Folder
from harness.demo._artifacts import Statement as Statement
from harness.demo._artifacts import document_ref_text as document_ref_text
from harness.demo._artifacts import document_text as document_text
from harness.demo._artifacts import folder_name as folder_name
from harness.demo._artifacts import register_formatters as register_formatters
from harness.demo._artifacts import shown_path as shown_path
from harness.demo._artifacts import statement_text as statement_text
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
from harness.demo._tools import ListFolder as ListFolder
from harness.demo._tools import ReadDocument as ReadDocument
from harness.demo._tools import SplitStatements as SplitStatements
from harness.demo._tools import UnreadableDocumentError as UnreadableDocumentError

__all__ = [
    "DEMO_MAX_TURNS",
    "DEMO_OBJECTIVE",
    "MAX_DOCUMENT_BYTES",
    "MAX_LISTED_FILES",
    "Document",
    "DocumentRef",
    "Folder",
    "ListFolder",
    "PriceDecisionFinder",
    "ReadDocument",
    "SplitStatements",
    "Statement",
    "UnreadableDocumentError",
    "corpus_path",
    "demo_folder",
    "demo_formatters",
    "demo_progress_line",
    "document_ref_text",
    "document_text",
    "folder_name",
    "register_formatters",
    "relative_source",
    "run_demo",
    "shown_path",
    "split_into_statements",
    "statement_text",
]


def corpus_path() -> pathlib.Path:
    """The folder of documents shipped with the package (a real directory on disk).

    The package is installed as files (a wheel unpacks into site-packages), so the resource
    directory is a real path; a zipped install is refused with the fix.
    """
    corpus = resources.files("harness.demo").joinpath("corpus")
    path = pathlib.Path(str(corpus))
    if not path.is_dir():
        raise FileNotFoundError(
            f"the demo corpus is not a folder on disk ({corpus!s}): install harness as files "
            "(pip install harness, not a zipped import), or pass your own folder to the demo"
        )
    return path
