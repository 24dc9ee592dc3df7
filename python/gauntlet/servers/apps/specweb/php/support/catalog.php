<?php
require __DIR__ . '/../inc/app.php';
$id = param('id', 1);
$answers = call_all('support/catalog', [['support/catalog', $id]]);
render_page('support/catalog', 'Catalogue', $answers, ['logo.gif', 'thumb.jpg'], 'guest');
