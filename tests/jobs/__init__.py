"""Tests of the jobs runtime: the dispatcher, timeouts, admission, pacing, events, logging."""
