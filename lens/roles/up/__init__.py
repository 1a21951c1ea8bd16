"""`lens up`: every role this host can run, composed into one process."""
