"""The dynamic pages, DT-1 and DT-2: which file each backend runs, at which URL path.

The paths are the same on every server and backend: `/hello.php` prints exactly `Hello, World!`,
`/page.py` prints the 733-byte HTML page of `pages/page.py`. CGI runs a page as a program, so
its variant is executable with a shebang (the PHP one says `-dcgi.force_redirect=0`: php-cgi
otherwise refuses a request that did not come through a server-side redirect).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PAGES_DIR = Path(__file__).parent / "pages"
HELLO_BODY = b"Hello, World!"


@dataclass(frozen=True)
class Page:
    #: The URL path, the same on every server.
    path: str
    #: The file in pages/ that is served at that path.
    source: str
    #: Run as a program (CGI): written with mode 0755.
    executable: bool = False

    @property
    def name(self) -> str:
        return self.path.lstrip("/")

    def text(self) -> bytes:
        return (PAGES_DIR / self.source).read_bytes()

    def expected_body(self) -> bytes:
        """The exact body every backend must send for this page."""
        return HELLO_BODY if self.path == HELLO_PHP.path else python_page_body()


HELLO_PHP = Page("/hello.php", "hello.php")
HELLO_PHP_CGI = Page("/hello.php", "hello-cgi.php", executable=True)
PYTHON_PAGE = Page("/page.py", "page.py")
PYTHON_PAGE_CGI = Page("/page.py", "page.py", executable=True)


@cache
def python_page_body() -> bytes:
    """DT-2's bytes, from the page's own code (the file the backends run)."""
    spec = importlib.util.spec_from_file_location("gauntlet_dt2_page", PAGES_DIR / "page.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    body: bytes = module.page()
    return body
