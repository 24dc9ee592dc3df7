<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/account_summary', 'userid');
$answers = call_all('bank/account_summary', [['bank/account_summary', $user]]);
render_page('bank/account_summary', 'Account summary', $answers, ['logo.gif', 'nav.gif', 'button.gif'], "user $user");
