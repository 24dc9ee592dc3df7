<%@ include file="../inc/app.jspf" %><%
try {
    long user = fromSession(request.getSession(), "userid");
    var answers = callAll("bank/check_detail", new Object[][] {{"bank/check_images", user}});
    render(out, "bank/check_detail", "Check images", answers, new String[] {"logo.gif", "check_front.gif", "check_back.gif"}, "user " + user, "");
} catch (Failed failed) {
    fail(response, out, "bank/check_detail", failed);
}
%>
