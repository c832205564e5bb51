// Starts GraphiQL (src/graphql/graphiql.ts) with the settings the page carries as JSON: a file of
// its own, as the page's Content-Security-Policy runs no inline script.
const settings = JSON.parse(document.getElementById('graphiql-settings').textContent);
// Monaco's workers come from this server, by the label Monaco asks for.
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => settings.workers[label] };
YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), settings.graphiql);
