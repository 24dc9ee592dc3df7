<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    $_SESSION['customer'] = $customer = param('customer', $id);
}
$answers = call_all('shop/login', [['shop/login', $id]]);
render_page('shop/login', 'Sign in', $answers, ['logo.gif', 'nav.gif'], "customer $customer");
