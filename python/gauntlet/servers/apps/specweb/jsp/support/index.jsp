<%@ include file="../inc/app.jspf" %><%
try {
    long id = param(request, "id", 1);
    var answers = callAll("support/index", new Object[][] {{"support/categories", id}});
    render(out, "support/index", "Support", answers, new String[] {"logo.gif", "banner.jpg", "nav.gif"}, "guest", "");
} catch (Failed failed) {
    fail(response, out, "support/index", failed);
}
%>
