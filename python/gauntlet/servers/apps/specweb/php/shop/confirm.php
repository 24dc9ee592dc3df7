<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = from_session('shop/confirm', 'customer');
$_SESSION['cart'] = [];
$answers = call_all('shop/confirm', [['shop/confirm', $customer]]);
render_page('shop/confirm', 'Order confirmed', $answers, ['logo.gif', 'banner.jpg'], "customer $customer");
