<?php
require __DIR__ . '/../inc/app.php';
$id = param('id', 1);
$answers = call_all('support/files', [['support/files', $id], ['support/download', $id]]);
render_page('support/files', 'Downloads', $answers, ['logo.gif', 'note.gif'], 'guest');
