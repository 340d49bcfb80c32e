"""Run records: the JSON file a run leaves behind, how it is captured, and how it reads.

(Cassettes, a model's recorded answers, are :mod:`harness.replay`'s.)

``harness demo`` and ``harness run`` write a :class:`RunRecord` (:func:`record_run` captures one);
``harness record FILE`` reads it back with :func:`load_record` and shows it with
:func:`render_text`, or :func:`render_html` for one self-contained page of bars.
"""

from harness.record._capture import RecordedRun as RecordedRun
from harness.record._capture import RecordingDispatcher as RecordingDispatcher
from harness.record._capture import RunFailedError as RunFailedError
from harness.record._capture import pinned_copy as pinned_copy
from harness.record._capture import provider_client as provider_client
from harness.record._capture import record_run as record_run
from harness.record._capture import thinker_settings as thinker_settings
from harness.record._format import RECORD_FILE as RECORD_FILE
from harness.record._format import RECORD_FORMAT as RECORD_FORMAT
from harness.record._format import RECORD_VERSION as RECORD_VERSION
from harness.record._format import RecordedAnswer as RecordedAnswer
from harness.record._format import RecordedCall as RecordedCall
from harness.record._format import RecordError as RecordError
from harness.record._format import RunRecord as RunRecord
from harness.record._html import render_html as render_html
from harness.record._html import usage_line as usage_line
from harness.record._load import load_record as load_record
from harness.record._load import record_from_json as record_from_json
from harness.record._text import IN_PROCESS_PROVIDERS as IN_PROCESS_PROVIDERS
from harness.record._text import NOT_BILLED as NOT_BILLED
from harness.record._text import billed_text as billed_text
from harness.record._text import counted as counted
from harness.record._text import move_line as move_line
from harness.record._text import ordered_options as ordered_options
from harness.record._text import progress_line as progress_line
from harness.record._text import reading_text as reading_text
from harness.record._text import render_text as render_text
from harness.record._text import turn_of as turn_of
