<%@ include file="../inc/app.jspf" %><%
try {
    long id = param(request, "id", 1);
    var answers = callAll("support/product", new Object[][] {{"support/product", id}});
    render(out, "support/product", "Product", answers, new String[] {"logo.gif", "product.jpg"}, "guest", "");
} catch (Failed failed) {
    fail(response, out, "support/product", failed);
}
%>
