<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = param('userid', 1);
$answers = call_all('bank/login', [['bank/login', $user]]);
$_SESSION['userid'] = $user;
render_page('bank/login', 'Welcome', $answers, ['logo.gif', 'nav.gif', 'banner.jpg'], "user $user");
