"""Tests of the REST session: routes, retry policy, buckets, the queue and HTTP."""
