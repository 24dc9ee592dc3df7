<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long user = param(request, "userid", 1);
    var answers = callAll("bank/login", new Object[][] {{"bank/login", user}});
    state.setAttribute("userid", user);
    render(out, "bank/login", "Welcome", answers, new String[] {"logo.gif", "nav.gif", "banner.jpg"}, "user " + user, "");
} catch (Failed failed) {
    fail(response, out, "bank/login", failed);
}
%>
