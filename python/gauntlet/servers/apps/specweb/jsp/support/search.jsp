<%@ include file="../inc/app.jspf" %><%
try {
    long id = param(request, "id", 1);
    var answers = callAll("support/search", new Object[][] {{"support/search", id}});
    render(out, "support/search", "Search", answers, new String[] {"logo.gif", "nav.gif"}, "guest", "");
} catch (Failed failed) {
    fail(response, out, "support/search", failed);
}
%>
