<%@ include file="../inc/app.jspf" %><%
try {
    var state = request.getSession();
    long id = param(request, "id", 1);
    long customer = state.getAttribute("customer") == null ? 0 : fromSession(state, "customer");
    @SuppressWarnings("unchecked")
    List<Long> cart = (List<Long>) state.getAttribute("cart");
    if (cart == null) {
        cart = new ArrayList<>();
    }
    cart.add(id);
    state.setAttribute("cart", cart);
    var answers = callAll("shop/cart", new Object[][] {{"shop/cart", cart.size()}});
    render(out, "shop/cart", "Cart", answers, new String[] {"logo.gif", "button.gif"}, "customer " + customer, "");
} catch (Failed failed) {
    fail(response, out, "shop/cart", failed);
}
%>
