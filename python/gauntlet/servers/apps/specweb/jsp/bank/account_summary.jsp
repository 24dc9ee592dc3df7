<%@ include file="../inc/app.jspf" %><%
try {
    long user = fromSession(request.getSession(), "userid");
    var answers = callAll("bank/account_summary", new Object[][] {{"bank/account_summary", user}});
    render(out, "bank/account_summary", "Account summary", answers, new String[] {"logo.gif", "nav.gif", "button.gif"}, "user " + user, "");
} catch (Failed failed) {
    fail(response, out, "bank/account_summary", failed);
}
%>
