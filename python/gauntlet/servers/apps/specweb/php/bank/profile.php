<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/profile', 'userid');
$answers = call_all('bank/profile', [['bank/profile', $user]]);
render_page('bank/profile', 'Profile', $answers, ['logo.gif', 'nav.gif'], "user $user");
