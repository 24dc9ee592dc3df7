<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    var answers = callAll("shop/search", new Object[][] {{"shop/search", id}});
    render(out, "shop/search", "Search results", answers, new String[] {"logo.gif", "thumb.jpg"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/search", failed);
}
%>
