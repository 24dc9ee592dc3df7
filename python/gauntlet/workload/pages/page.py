#!/usr/bin/python3
"""DT-2, the Python page: the same 733 bytes of HTML on every request.

One file for every way Gauntlet runs Python: uWSGI (also in its FastCGI mode) loads it and calls
`application` (WSGI); run as a CGI script, it prints the same page after CGI headers.
"""

import sys

ROWS = 13


def page() -> bytes:
    rows = "".join(f"<tr><td>{n}</td><td>{n * n}</td><td>{n ** 3}</td></tr>\n" for n in range(1, ROWS + 1))
    return (
        "<!DOCTYPE html>\n<html><head><title>Gauntlet DT-2</title></head>\n<body>\n"
        "<h1>Powers</h1>\n<table>\n<tr><th>n</th><th>n&sup2;</th><th>n&sup3;</th></tr>\n"
        f"{rows}</table>\n</body></html>\n"
    ).encode()


def application(environ, start_response):  # type: ignore[no-untyped-def]
    body = page()
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))])
    return [body]


if __name__ == "__main__":
    body = page()
    sys.stdout.buffer.write(b"Content-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
