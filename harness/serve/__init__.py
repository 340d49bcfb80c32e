"""``harness serve``: a System One server (127.0.0.1 by default) fronting any catalog entry."""

from harness.serve._server import API_KEY_ENV as API_KEY_ENV
from harness.serve._server import HOST as HOST
from harness.serve._server import REQUEST_ID_HEADER as REQUEST_ID_HEADER
from harness.serve._server import UPSTREAM_MODEL_HEADER as UPSTREAM_MODEL_HEADER
from harness.serve._server import DecisionServer as DecisionServer
from harness.serve._server import ServerStats as ServerStats
