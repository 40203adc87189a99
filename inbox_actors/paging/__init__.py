"""Reading a list a page at a time, for every area that lists things (the Reporting API, the team's lists,
broadcasts, the webhook and connector delivery logs, the connectors' samples): keyset cursors that never skip or
repeat a row, time windows with their defaults and limits, the parsing of list query parameters, and the catalog
that describes each read's parameters for the published contract."""
