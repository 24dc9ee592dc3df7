<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = fromSession(state, "customer");
    state.removeAttribute("cart");
    var answers = callAll("shop/confirm", new Object[][] {{"shop/confirm", customer}});
    render(out, "shop/confirm", "Order confirmed", answers, new String[] {"logo.gif", "banner.jpg"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/confirm", failed);
}
%>
