"""The ``solace`` command line."""
