<?php
// The SPECweb-like applications' shared code: the call to BeSim, the page chrome, the session.
// config.php (written by gauntlet.servers.apps.specweb for each instance) defines BESIM_URL and
// SESSION_DIR. Every page asks BeSim for its rows, builds its page from them and ends with its
// content marker, "specweb WORKLOAD/PAGE done": a page that could not be built has no marker.
require __DIR__ . '/config.php';

// The rows of one BeSim call (each row a list of fields), or null when the back end failed.
function besim(string $call, int $id): ?array
{
    $context = stream_context_create(['http' => ['timeout' => 10, 'ignore_errors' => false]]);
    $answer = @file_get_contents(BESIM_URL . $call . '?id=' . $id, false, $context);
    if ($answer === false || strncmp($answer, 'BESIM ' . $call . ' ', 7 + strlen($call)) !== 0) {
        return null;
    }
    $lines = explode("\n", rtrim($answer, "\n"));
    array_shift($lines);
    return array_map(fn ($line) => explode('|', $line), $lines);
}

// Banking and Ecommerce keep a PHP session (files in SESSION_DIR); Support keeps none.
function start_session(): void
{
    session_save_path(SESSION_DIR);
    session_start();
}

// The session's value under $key; without it (no cookie carried, a lost session) the page fails.
function from_session(string $page, string $key): int
{
    if (!isset($_SESSION[$key])) {
        fail_page(403, $page, "no $key in the session: log in first");
    }
    return (int) $_SESSION[$key];
}

// A number from the request (GET or POST form), or $default.
function param(string $name, int $default): int
{
    $value = $_POST[$name] ?? $_GET[$name] ?? null;
    return is_numeric($value) ? (int) $value : $default;
}

// The page without its marker: the back end failed, or the session is not there.
function fail_page(int $status, string $page, string $why): never
{
    http_response_code($status);
    header('Content-Type: text/html; charset=utf-8');
    echo "<!DOCTYPE html>\n<html><head><title>Error</title></head><body><h1>$status</h1><p>", htmlspecialchars($why),
        ' (', htmlspecialchars($page), ")</p></body></html>\n";
    exit;
}

// Every call's rows, in order; a failed call ends the page with a 502.
function call_all(string $page, array $calls): array
{
    $answers = [];
    foreach ($calls as [$call, $id]) {
        $rows = besim($call, $id);
        if ($rows === null) {
            fail_page(502, $page, "the back end did not answer $call");
        }
        $answers[$call] = $rows;
    }
    return $answers;
}

// The page: header and navigation, a table per call, the forms, the embedded images, the marker.
const LINKS = [
    'bank' => ['Accounts' => 'account_summary.php', 'Checks' => 'check_detail.php', 'Bill pay' => 'bill_pay.php',
        'Transfer' => 'transfer.php', 'Profile' => 'profile.php', 'Log out' => 'logout.php'],
    'shop' => ['Home' => 'index.php', 'Search' => 'search.php', 'Browse' => 'browse.php', 'Cart' => 'cart.php',
        'Sign in' => 'login.php'],
    'support' => ['Home' => 'index.php', 'Search' => 'search.php', 'Catalogue' => 'catalog.php'],
];

function render_page(string $page, string $title, array $answers, array $images, string $user, string $form = ''): void
{
    header('Content-Type: text/html; charset=utf-8');
    [$workload] = explode('/', $page);
    echo "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", htmlspecialchars($title), "</title>\n",
        "<style>body{font-family:sans-serif;margin:0}header,nav,footer{padding:8px;background:#eef}table{border-collapse:collapse}",
        "td{border:1px solid #ccc;padding:2px 6px}</style></head>\n<body>\n<header><img src=\"/specweb/images/logo.gif\" alt=\"logo\"> ",
        htmlspecialchars($title), ' <span class="user">', htmlspecialchars($user), "</span></header>\n<nav>";
    foreach (LINKS[$workload] as $label => $href) {
        echo '<a href="/specweb/', $workload, '/', $href, '">', htmlspecialchars($label), '</a> ';
    }
    echo "</nav>\n<main>\n";
    foreach ($answers as $call => $rows) {
        echo '<table class="', htmlspecialchars($call), "\">\n";
        foreach ($rows as $row) {
            echo '<tr><td>', implode('</td><td>', array_map('htmlspecialchars', $row)), "</td></tr>\n";
        }
        echo "</table>\n";
    }
    echo $form;
    foreach ($images as $image) {
        echo '<img src="/specweb/images/', $image, "\" alt=\"\">\n";
    }
    echo "</main>\n<footer>specweb $page done</footer>\n</body></html>\n";
}
