<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = fromSession(state, "customer");
    var answers = callAll("shop/shipping", new Object[][] {{"shop/shipping", customer}});
    render(out, "shop/shipping", "Shipping", answers, new String[] {"logo.gif", "button.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/shipping", failed);
}
%>
