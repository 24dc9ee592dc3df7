<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = from_session('shop/shipping', 'customer');
$answers = call_all('shop/shipping', [['shop/shipping', $customer]]);
render_page('shop/shipping', 'Shipping', $answers, ['logo.gif', 'button.gif'], "customer $customer");
