// The interactive API docs of `lens api`: Swagger UI (vendored, see vendor/vendored.json) over
// the app's own /openapi.json, by a relative URL so the page works behind a path prefix.
window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: new URL("openapi.json", document.baseURI).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: false,
  });
});
