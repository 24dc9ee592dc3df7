<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    if ("POST".equals(request.getMethod())) {
        customer = param(request, "customer", id);
        state.setAttribute("customer", customer);
    }
    var answers = callAll("shop/login", new Object[][] {{"shop/login", id}});
    render(out, "shop/login", "Sign in", answers, new String[] {"logo.gif", "nav.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/login", failed);
}
%>
