<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$answers = call_all('shop/index', [['shop/featured', $id]]);
render_page('shop/index', 'Store', $answers, ['logo.gif', 'banner.jpg', 'product.jpg', 'thumb.jpg'], "customer $customer");
