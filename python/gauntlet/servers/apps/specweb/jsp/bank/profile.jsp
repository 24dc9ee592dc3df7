<%@ include file="../inc/app.jspf" %><%
try {
    long user = fromSession(request.getSession(), "userid");
    var answers = callAll("bank/profile", new Object[][] {{"bank/profile", user}});
    render(out, "bank/profile", "Profile", answers, new String[] {"logo.gif", "nav.gif"}, "user " + user, "");
} catch (Failed failed) {
    fail(response, out, "bank/profile", failed);
}
%>
