"""pytest fixtures for bot authors (filled in later)."""
