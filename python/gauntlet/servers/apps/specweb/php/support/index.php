<?php
require __DIR__ . '/../inc/app.php';
$id = param('id', 1);
$answers = call_all('support/index', [['support/categories', $id]]);
render_page('support/index', 'Support', $answers, ['logo.gif', 'banner.jpg', 'nav.gif'], 'guest');
