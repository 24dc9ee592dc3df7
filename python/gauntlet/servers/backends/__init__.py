"""Dynamic backends behind the servers under test: which exist (catalog.py) and the pools a
server talks to (pools.py: PHP-FPM, uWSGI, fcgiwrap)."""
