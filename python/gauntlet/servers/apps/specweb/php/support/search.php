<?php
require __DIR__ . '/../inc/app.php';
$id = param('id', 1);
$answers = call_all('support/search', [['support/search', $id]]);
render_page('support/search', 'Search', $answers, ['logo.gif', 'nav.gif'], 'guest');
