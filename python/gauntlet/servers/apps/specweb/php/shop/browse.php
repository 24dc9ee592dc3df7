<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$answers = call_all('shop/browse', [['shop/products', $id]]);
render_page('shop/browse', 'Products', $answers, ['logo.gif', 'thumb.jpg', 'nav.gif'], "customer $customer");
