<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    var answers = callAll("shop/browse", new Object[][] {{"shop/products", id}});
    render(out, "shop/browse", "Products", answers, new String[] {"logo.gif", "thumb.jpg", "nav.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/browse", failed);
}
%>
