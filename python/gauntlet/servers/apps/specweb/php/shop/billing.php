<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = from_session('shop/billing', 'customer');
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    $_SESSION['billed'] = true;
}
$answers = call_all('shop/billing', [['shop/billing', $customer]]);
render_page('shop/billing', 'Billing', $answers, ['logo.gif', 'button.gif'], "customer $customer");
