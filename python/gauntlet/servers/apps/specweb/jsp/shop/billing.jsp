<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = fromSession(state, "customer");
    if ("POST".equals(request.getMethod())) {
        state.setAttribute("billed", true);
    }
    var answers = callAll("shop/billing", new Object[][] {{"shop/billing", customer}});
    render(out, "shop/billing", "Billing", answers, new String[] {"logo.gif", "button.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/billing", failed);
}
%>
