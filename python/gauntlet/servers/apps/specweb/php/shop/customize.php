<?php
require __DIR__ . '/../inc/app.php';
start_session();
$id = param('id', 1);
$customer = $_SESSION['customer'] ?? 0;
$answers = call_all('shop/customize', [['shop/options', $id]]);
render_page('shop/customize', 'Customise', $answers, ['logo.gif', 'product.jpg', 'button.gif'], "customer $customer");
