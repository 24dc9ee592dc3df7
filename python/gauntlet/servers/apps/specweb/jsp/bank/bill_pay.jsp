<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long user = fromSession(state, "userid");
    long payee = param(request, "payee", 0);
    List<Object[]> calls = new ArrayList<>();
    calls.add(new Object[] {"bank/payees", user});
    if ("POST".equals(request.getMethod())) {
        calls.add(new Object[] {"bank/bill_pay", user * 100 + payee});
        Object payments = state.getAttribute("payments");
        state.setAttribute("payments", payments == null ? 1 : (Integer) payments + 1);
    }
    String form = "<form method=\"post\" action=\"bill_pay.jsp\"><input name=\"payee\" value=\"" + payee
        + "\"><input name=\"amount\" value=\"25.00\"><input type=\"submit\" value=\"Pay\"></form>";
    var answers = callAll("bank/bill_pay", calls.toArray(new Object[0][]));
    render(out, "bank/bill_pay", "Bill pay", answers, new String[] {"logo.gif", "nav.gif", "button.gif"}, "user " + user, form);
} catch (Failed failed) {
    fail(response, out, "bank/bill_pay", failed);
}
%>
