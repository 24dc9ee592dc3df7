<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    var answers = callAll("shop/customize", new Object[][] {{"shop/options", id}});
    render(out, "shop/customize", "Customise", answers, new String[] {"logo.gif", "product.jpg", "button.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/customize", failed);
}
%>
