<?php
require __DIR__ . '/../inc/app.php';
$id = param('id', 1);
$answers = call_all('support/product', [['support/product', $id]]);
render_page('support/product', 'Product', $answers, ['logo.gif', 'product.jpg'], 'guest');
