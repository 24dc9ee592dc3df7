<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/transfer', 'userid');
$calls = [['bank/account_summary', $user]];
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    $calls[] = ['bank/transfer', $user * 100 + param('to', 1)];
}
$form = '<form method="post" action="transfer.php"><input name="from" value="0"><input name="to" value="1">'
    . '<input name="amount" value="100.00"><input type="submit" value="Transfer"></form>';
render_page('bank/transfer', 'Transfer', call_all('bank/transfer', $calls), ['logo.gif', 'nav.gif', 'button.gif'], "user $user", $form);
