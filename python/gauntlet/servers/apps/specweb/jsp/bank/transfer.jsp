<%@ include file="../inc/app.jspf" %><%
try {
    long user = fromSession(request.getSession(), "userid");
    List<Object[]> calls = new ArrayList<>();
    calls.add(new Object[] {"bank/account_summary", user});
    if ("POST".equals(request.getMethod())) {
        calls.add(new Object[] {"bank/transfer", user * 100 + param(request, "to", 1)});
    }
    String form = "<form method=\"post\" action=\"transfer.jsp\"><input name=\"from\" value=\"0\"><input name=\"to\" value=\"1\">"
        + "<input name=\"amount\" value=\"100.00\"><input type=\"submit\" value=\"Transfer\"></form>";
    var answers = callAll("bank/transfer", calls.toArray(new Object[0][]));
    render(out, "bank/transfer", "Transfer", answers, new String[] {"logo.gif", "nav.gif", "button.gif"}, "user " + user, form);
} catch (Failed failed) {
    fail(response, out, "bank/transfer", failed);
}
%>
