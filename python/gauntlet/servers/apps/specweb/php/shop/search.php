<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$answers = call_all('shop/search', [['shop/search', $id]]);
render_page('shop/search', 'Search results', $answers, ['logo.gif', 'thumb.jpg'], "customer $customer");
