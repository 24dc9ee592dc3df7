<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    var answers = callAll("shop/index", new Object[][] {{"shop/featured", id}});
    render(out, "shop/index", "Store", answers, new String[] {"logo.gif", "banner.jpg", "product.jpg", "thumb.jpg"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/index", failed);
}
%>
