<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/check_detail', 'userid');
$answers = call_all('bank/check_detail', [['bank/check_images', $user]]);
render_page('bank/check_detail', 'Check images', $answers, ['logo.gif', 'check_front.gif', 'check_back.gif'], "user $user");
