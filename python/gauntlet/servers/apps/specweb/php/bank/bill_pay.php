<?php
require __DIR__ . '/../inc/app.php';
start_session();
$user = from_session('bank/bill_pay', 'userid');
$payee = param('payee', 0);
$calls = [['bank/payees', $user]];
if ($_SERVER['REQUEST_METHOD'] === 'POST') {
    $calls[] = ['bank/bill_pay', $user * 100 + $payee];
    $_SESSION['payments'] = ($_SESSION['payments'] ?? 0) + 1;
}
$form = '<form method="post" action="bill_pay.php"><input name="payee" value="' . $payee
    . '"><input name="amount" value="25.00"><input type="submit" value="Pay"></form>';
render_page('bank/bill_pay', 'Bill pay', call_all('bank/bill_pay', $calls), ['logo.gif', 'nav.gif', 'button.gif'], "user $user", $form);
