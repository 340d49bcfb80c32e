"""Record and replay: cassettes (a model's recorded answers), the replay client that answers from
them, the request diff it shows on a miss, and ``override``, which puts one model (a client, a
policy, ``"embedded"``, a cassette or an entry id) behind every decision in a context.

It sits between the provider clients (below) and the jobs (above, whose dispatcher asks the active
override for its client). Run records are :mod:`harness.record`'s; a record written with
``--bodies`` replays through :func:`cassette_from_record` (or :func:`cassette_from_record_json`
on its JSON).
"""

from harness._guard import guard_real_models as guard_real_models
from harness._public import claim_exports
from harness.replay._cassette import CASSETTE_FORMAT as CASSETTE_FORMAT
from harness.replay._cassette import CASSETTE_VERSION as CASSETTE_VERSION
from harness.replay._cassette import Cassette as Cassette
from harness.replay._cassette import CassetteError as CassetteError
from harness.replay._cassette import Interaction as Interaction
from harness.replay._cassette import RecordedCallLike as RecordedCallLike
from harness.replay._cassette import RecordedReply as RecordedReply
from harness.replay._cassette import RunRecordLike as RunRecordLike
from harness.replay._cassette import answers_json as answers_json
from harness.replay._cassette import body_digest as body_digest
from harness.replay._cassette import cassette_from_json as cassette_from_json
from harness.replay._cassette import cassette_from_record as cassette_from_record
from harness.replay._cassette import cassette_from_record_json as cassette_from_record_json
from harness.replay._cassette import load_cassette as load_cassette
from harness.replay._client import ReplayClient as ReplayClient
from harness.replay._client import ReplayMissError as ReplayMissError
from harness.replay._override import AsEntry as AsEntry
from harness.replay._override import ModelOverride as ModelOverride
from harness.replay._override import ModelSpec as ModelSpec
from harness.replay._override import OverrideError as OverrideError
from harness.replay._override import RealModelBlockedError as RealModelBlockedError
from harness.replay._override import current_override as current_override
from harness.replay._override import overridden_client as overridden_client
from harness.replay._override import override as override
from harness.replay._request_diff import Difference as Difference
from harness.replay._request_diff import request_differences as request_differences

# their public home, for reprs and tracebacks (Cassette and the rest keep their modules)
claim_exports(__name__, globals(), ("ReplayClient", "ReplayMissError", "RealModelBlockedError"))
