"""SPECweb2005's dynamic tier in one server instance: the Banking, Ecommerce and Support applications
(PHP in specweb/php/, JSP in specweb/jsp/) under /specweb/ in the docroot, their embedded images
and Support's downloads as static files, and BeSim (besim.py), the back end every page asks for
its data, started first and stopped last.

`PAGES` is every page type: its path, its method and form, the scheme the load uses, the content
marker only a page built from BeSim's answer holds, and the BeSim calls it makes (what a test
compares BeSim's counts with). The load files model/loads/specweb-*.yaml walk the same pages.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from gauntlet.servers.apps.besim import DEFAULT_SERVICE_TIME_US, start_besim
from gauntlet.servers.apps.wordpress import AppConfig, PreparedApp
from gauntlet.servers.premises import Premises
from gauntlet.servers.process import LOOPBACK, stop_processes
from gauntlet.servers.spec import ServerSpec

SOURCES = Path(__file__).parent / "specweb"
PREFIX = "/specweb"
#: The shebang of a page run as a CGI program (php-cgi refuses requests without it otherwise).
CGI_SHEBANG = b"#!/usr/bin/php-cgi -dcgi.force_redirect=0\n"
#: Where PHP keeps the sessions with `php_sessions: memory` (a tmpfs), else in the work dir.
MEMORY_DIR = Path("/dev/shm")


@dataclass(frozen=True)
class Page:
    """A page type: `workload/name` (bank/login), what the load sends and what a good page holds."""

    workload: str
    name: str
    #: The file under /specweb/WORKLOAD/ (without the .php or .jsp), or a static path.
    file: str
    #: BeSim's calls the page makes, in order (a POST form may add one).
    calls: tuple[str, ...]
    method: str = "GET"
    body: str | None = None
    #: The scheme SPECweb2005 prescribes: Banking all HTTPS, Ecommerce's order and payment HTTPS.
    scheme: str = "http"
    static: bool = False

    @property
    def marker(self) -> str:
        if self.static:
            return f"specweb {self.workload}/{self.name} file"
        return f"specweb {self.workload}/{self.name} done"

    def path(self, language: str = "php") -> str:
        return f"{PREFIX}/{self.workload}/{self.file}" + ("" if self.static else f".{language}")


def _bank(name: str, calls: tuple[str, ...], body: str | None = None) -> Page:
    return Page("bank", name, name, calls, "POST" if body else "GET", body, scheme="https")


def _shop(name: str, calls: tuple[str, ...], body: str | None = None, scheme: str = "http") -> Page:
    return Page("shop", name, name, calls, "POST" if body else "GET", body, scheme)


PAGES: tuple[Page, ...] = (
    _bank("login", ("bank/login",), "userid=17&password=secret"),
    _bank("account_summary", ("bank/account_summary",)),
    _bank("check_detail", ("bank/check_images",)),
    _bank("bill_pay", ("bank/payees", "bank/bill_pay"), "payee=3&amount=25.00"),
    _bank("transfer", ("bank/account_summary", "bank/transfer"), "from=0&to=1&amount=100.00"),
    _bank("profile", ("bank/profile",)),
    _bank("logout", ("bank/logout",)),
    _shop("index", ("shop/featured",)),
    _shop("search", ("shop/search",)),
    _shop("browse", ("shop/products",)),
    _shop("product", ("shop/product",)),
    _shop("customize", ("shop/options",)),
    _shop("cart", ("shop/cart",)),
    _shop("login", ("shop/login",), "customer=42&password=secret", scheme="https"),
    _shop("shipping", ("shop/shipping",), scheme="https"),
    _shop("billing", ("shop/billing",), "card=4111&name=test", scheme="https"),
    _shop("confirm", ("shop/confirm",), scheme="https"),
    Page("support", "index", "index", ("support/categories",)),
    Page("support", "search", "search", ("support/search",)),
    Page("support", "catalog", "catalog", ("support/catalog",)),
    Page("support", "product", "product", ("support/product",)),
    Page("support", "files", "files", ("support/files", "support/download")),
    Page("support", "download", "downloads/file_2.bin", (), static=True),
)

#: The embedded images the pages reference (/specweb/images/NAME), bytes each: small navigation
#: images, banners and product photos of tens of kilobytes, scanned checks.
IMAGES: dict[str, int] = {
    "logo.gif": 2_210,
    "nav.gif": 1_130,
    "button.gif": 640,
    "note.gif": 4_300,
    "thumb.jpg": 3_120,
    "banner.jpg": 12_900,
    "product.jpg": 21_400,
    "check_front.gif": 18_700,
    "check_back.gif": 9_800,
}
#: Support's downloads (/specweb/support/downloads/NAME), bytes each: large files served static.
DOWNLOADS: dict[str, int] = {"file_1.bin": 131_072, "file_2.bin": 1_048_576, "file_3.bin": 4_194_304}


def page_named(workload: str, name: str) -> Page:
    return next(page for page in PAGES if (page.workload, page.name) == (workload, name))


def filler(name: str, size_bytes: int, head: bytes) -> bytes:
    """`size_bytes` bytes starting with `head`, the rest drawn from the name (the same every time)."""
    seed = hashlib.sha256(name.encode()).digest()
    repeated = (seed * (size_bytes // len(seed) + 1))[: max(size_bytes - len(head), 0)]
    return head + repeated


def image_bytes(name: str, size_bytes: int) -> bytes:
    head = b"GIF89a" if name.endswith(".gif") else b"\xff\xd8\xff\xe0"
    return filler(name, size_bytes, head)


def download_bytes(name: str, size_bytes: int) -> bytes:
    return filler(name, size_bytes, f"{page_named('support', 'download').marker} {name}\n".encode())


def write_static(root: Path) -> None:
    """The images and the downloads, under root/specweb/."""
    images = root / "images"
    downloads = root / "support" / "downloads"
    for directory in (images, downloads):
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    for name, size in IMAGES.items():
        (images / name).write_bytes(image_bytes(name, size))
    for name, size in DOWNLOADS.items():
        (downloads / name).write_bytes(download_bytes(name, size))


def session_dir(spec: ServerSpec, premises: Premises) -> Path:
    """A directory every PHP process may write its session files to: in the work dir (disk), or on
    a tmpfs with `php_sessions: memory` (removed with the instance's premises)."""
    if spec.php_sessions == "memory":
        path = MEMORY_DIR / f"{premises.workdir.name}-sessions"
        premises.scratch.append(path)
    else:
        path = premises.workdir / "sessions"
    path.mkdir(mode=0o1733)
    path.chmod(0o1733)  # like /var/lib/php/sessions: anyone writes, nobody lists
    return path


def language(spec: ServerSpec) -> str:
    """The applications' language on this server: JSP on Tomcat, PHP elsewhere."""
    return "jsp" if spec.kind == "tomcat" else "php"


#: Tomcat's rewrite valve (templates/tomcat-server.xml.j2): a PHP page's URL serves its JSP page, so
#: that the load files (model/loads/specweb-*.yaml) walk both implementations, as SPECweb's client
#: asks each for its own file names.
JSP_REWRITE = "RewriteRule ^/specweb/(.*)\\.php$ /specweb/$1.jsp [L]\n"


def write_jsp(root: Path, besim_port: int) -> str:
    """The JSP applications under root, with their config.jspf and the rewrite of the PHP pages'
    URLs to them; Tomcat compiles them on first use."""
    shutil.copytree(SOURCES / "jsp", root, dirs_exist_ok=True)
    web_inf = root.parent / "WEB-INF"
    web_inf.mkdir(exist_ok=True)
    (web_inf / "rewrite.config").write_text(JSP_REWRITE)
    config = (
        "<%-- Rendered by gauntlet.servers.apps.specweb for this instance. --%>\n"
        f'<%! static final String BESIM_URL = "http://{LOOPBACK}:{besim_port}/besim/"; %>\n'
    )
    (root / "inc" / "config.jspf").write_text(config)
    return config


def write_php(root: Path, besim_port: int, sessions: Path, cgi: bool) -> str:
    """The PHP applications under root, with their config.php; for CGI every page is a program."""
    shutil.copytree(SOURCES / "php", root, dirs_exist_ok=True)
    config = (
        "<?php\n// Rendered by gauntlet.servers.apps.specweb for this instance.\n"
        f"const BESIM_URL = 'http://{LOOPBACK}:{besim_port}/besim/';\nconst SESSION_DIR = '{sessions}';\n"
    )
    (root / "inc" / "config.php").write_text(config)
    if cgi:
        for page in PAGES:
            if not page.static:
                path = Path(root.parent.as_posix() + page.path())
                path.write_bytes(CGI_SHEBANG + path.read_bytes())
                path.chmod(0o755)
    return config


def prepare_specweb(spec: ServerSpec, premises: Premises, docroot: Path, timeout_s: float) -> PreparedApp:
    """Start BeSim and put the applications, their images and downloads under docroot/specweb."""
    besim = start_besim(premises, spec.besim_service_time_us or DEFAULT_SERVICE_TIME_US, timeout_s)
    try:
        root = docroot / PREFIX.lstrip("/")
        write_static(root)
        port = besim.port or 0
        if language(spec) == "jsp":
            config = write_jsp(root, port)
        else:
            config = write_php(root, port, session_dir(spec, premises), cgi=spec.backend == "php-cgi")
        for directory, _, _ in os.walk(root):
            os.chmod(directory, 0o755)
    except BaseException:
        stop_processes(besim.proc, sig=besim.stop_signal)
        raise
    return PreparedApp(AppConfig("specweb"), besim, f"{config}\n# ---- besim\n{besim.config_text}", 0.0)
