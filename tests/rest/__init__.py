"""Tests of the REST session (issue 3)."""
