"""``harness serve``: a System One server (127.0.0.1 by default) fronting any catalog entry, and
the core it shares with the test doubles (:class:`~harness.testing.FakeSystemOneServer`,
:class:`~harness.testing.LogprobServer`): routes, codecs, admission, auth, request ids, the
access log, the listener and the shell's lifecycle."""

from harness.decision.systemone import REQUEST_ID_HEADER as REQUEST_ID_HEADER
from harness.serve._capacity import Capacity as Capacity
from harness.serve._core import CODECS as CODECS
from harness.serve._core import Codec as Codec
from harness.serve._core import ServerCore as ServerCore
from harness.serve._core import decode_request_body as decode_request_body
from harness.serve._core import request_id_of as request_id_of
from harness.serve._server import API_KEY_ENV as API_KEY_ENV
from harness.serve._server import HOST as HOST
from harness.serve._server import UPSTREAM_MODEL_HEADER as UPSTREAM_MODEL_HEADER
from harness.serve._server import DecisionServer as DecisionServer
from harness.serve._server import ServerStats as ServerStats
from harness.serve._shell import ServerShell as ServerShell
