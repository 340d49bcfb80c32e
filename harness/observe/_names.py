"""Span names and attribute keys: the OpenTelemetry GenAI semantic conventions where one exists,
a ``harness.`` namespace otherwise. Kept in one place so the docs and the tests read the same."""

from __future__ import annotations

from typing import Final

# GenAI semantic conventions (gen_ai.*)
GEN_AI_SYSTEM: Final = "gen_ai.system"
GEN_AI_OPERATION: Final = "gen_ai.operation.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
ERROR_TYPE: Final = "error.type"
HTTP_STATUS: Final = "http.response.status_code"

OPERATION_DECISION: Final = "decision"
"""``gen_ai.operation.name`` of a decision call (the conventions name no decision operation)."""

# harness.*
JOB_ID: Final = "harness.job.id"
WORKFLOW_ID: Final = "harness.workflow.id"
ENTRY: Final = "harness.entry"
PROVIDER: Final = "harness.provider"
QUESTIONS: Final = "harness.decision.questions"
COUNTED_TOKENS: Final = "harness.usage.counted_input_tokens"
COST: Final = "harness.cost"
RETRIES: Final = "harness.retries"
ATTEMPT: Final = "harness.attempt"
DELAY: Final = "harness.retry.delay"
RETRY_KIND: Final = "harness.retry.kind"
OUTCOME: Final = "harness.outcome"
THINKER: Final = "harness.thinker"
OBJECTIVE: Final = "harness.objective"
MAX_TURNS: Final = "harness.max_turns"
TURNS: Final = "harness.turns"
TURN: Final = "harness.turn"
MOVE: Final = "harness.move"
CHOSEN_REF: Final = "harness.chosen_ref"
TOOL: Final = "harness.tool"
INPUT_REF: Final = "harness.input_ref"
PRODUCT_REF: Final = "harness.product_ref"
FAILED: Final = "harness.failed"
FAILURE: Final = "harness.failure"
STATE: Final = "harness.request.state"
ADMISSION_WAITED_FOR: Final = "harness.admission.waited_for"
READING_METHOD: Final = "harness.reading.method"
READING_UPSTREAM_CALLS: Final = "harness.reading.upstream_calls"
READING_MASS: Final = "harness.reading.mass"
"""How a logprob provider read the answers: method, round trips, least mass on the options."""

# metric instruments
M_DURATION: Final = "gen_ai.client.operation.duration"
M_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
M_INPUT_TOKENS: Final = "harness.decision.input_tokens"
M_COST: Final = "harness.decision.cost"
M_RETRIES: Final = "harness.decision.retries"
M_THROTTLES: Final = "harness.decision.throttles"
M_ADMISSION_WAIT: Final = "harness.admission.wait"
M_IN_FLIGHT: Final = "harness.decision.in_flight"
TOKEN_KIND: Final = "harness.tokens.kind"
