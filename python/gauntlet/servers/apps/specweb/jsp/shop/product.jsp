<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    var answers = callAll("shop/product", new Object[][] {{"shop/product", id}});
    render(out, "shop/product", "Product detail", answers, new String[] {"logo.gif", "product.jpg", "button.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/product", failed);
}
%>
