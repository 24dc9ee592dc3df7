<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$_SESSION['cart'][] = $id;
$answers = call_all('shop/cart', [['shop/cart', count($_SESSION['cart'])]]);
render_page('shop/cart', 'Cart', $answers, ['logo.gif', 'button.gif'], "customer $customer");
