<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/logout', 'userid');
$answers = call_all('bank/logout', [['bank/logout', $user]]);
session_destroy();
render_page('bank/logout', 'Signed out', $answers, ['logo.gif'], "user $user");
