// The API docs (/docs): Swagger UI, vendored under static/vendor/swagger-ui/, on this server's
// OpenAPI schema. "Try it out" sends the API key the playground keeps for this tab, and only to
// this server.
import { apiKey } from "./api.js";

const here = location.origin;
const note = document.querySelector("[data-field=docs-key]");
if (apiKey()) note.textContent = "Requests send the API key given in the playground.";

window.ui = window.SwaggerUIBundle({
  url: new URL("openapi.json", document.baseURI).href,
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  validatorUrl: null, // no badge from swagger.io: nothing leaves for another origin
  requestInterceptor: (request) => {
    const key = apiKey();
    if (key && new URL(request.url, location.href).origin === here) {
      request.headers.Authorization = `Bearer ${key}`;
    }
    return request;
  },
});
