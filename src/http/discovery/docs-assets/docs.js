// Renders /openapi.json with Swagger UI (served by this gateway from its own install). No outside requests:
// the spec validator badge, which calls validator.swagger.io, is off.
window.addEventListener('DOMContentLoaded', () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    showExtensions: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    tryItOutEnabled: false,
  });
});
