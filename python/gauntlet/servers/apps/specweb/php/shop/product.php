<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$answers = call_all('shop/product', [['shop/product', $id]]);
render_page('shop/product', 'Product detail', $answers, ['logo.gif', 'product.jpg', 'button.gif'], "customer $customer");
