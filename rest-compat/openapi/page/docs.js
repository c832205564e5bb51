// Renders /rest/openapi.json with Swagger UI, served by this server from node_modules: no
// validator badge (it would call validator.swagger.io), nothing fetched from another origin.
/* global SwaggerUIBundle */
window.addEventListener('DOMContentLoaded', () => {
  const target = document.getElementById('reference');
  if (typeof SwaggerUIBundle !== 'function') {
    target.textContent = 'The reference viewer did not load. The document itself is at /rest/openapi.json.';
    return;
  }
  target.textContent = '';
  SwaggerUIBundle({
    url: '/rest/openapi.json',
    domNode: target,
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
