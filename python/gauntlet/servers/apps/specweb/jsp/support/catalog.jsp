<%@ include file="../inc/app.jspf" %><%
try {
    long id = param(request, "id", 1);
    var answers = callAll("support/catalog", new Object[][] {{"support/catalog", id}});
    render(out, "support/catalog", "Catalogue", answers, new String[] {"logo.gif", "thumb.jpg"}, "guest", "");
} catch (Failed failed) {
    fail(response, out, "support/catalog", failed);
}
%>
