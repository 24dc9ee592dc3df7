<%@ include file="../inc/app.jspf" %><%
try {
    long id = param(request, "id", 1);
    var answers = callAll("support/files", new Object[][] {{"support/files", id}, {"support/download", id}});
    render(out, "support/files", "Downloads", answers, new String[] {"logo.gif", "note.gif"}, "guest", "");
} catch (Failed failed) {
    fail(response, out, "support/files", failed);
}
%>
