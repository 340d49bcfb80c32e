"""``harness serve``: a System One server on 127.0.0.1 fronting any catalog entry."""

from harness.serve._server import HOST as HOST
from harness.serve._server import REQUEST_ID_HEADER as REQUEST_ID_HEADER
from harness.serve._server import DecisionServer as DecisionServer
from harness.serve._server import ServerStats as ServerStats
