"""`python -m inbox_http.cli`, as the `inbox-actors` script."""

from inbox_http.cli import main

main()
