<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long user = fromSession(state, "userid");
    var answers = callAll("bank/logout", new Object[][] {{"bank/logout", user}});
    state.invalidate();
    render(out, "bank/logout", "Signed out", answers, new String[] {"logo.gif"}, "user " + user, "");
} catch (Failed failed) {
    fail(response, out, "bank/logout", failed);
}
%>
