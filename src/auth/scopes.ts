/** The scopes of api-spec.md section 5, plus the ones later families are assigned. */
export const Scopes = {
  ingest: 'p.token.scope.ingest',
  deploymentApi: 'p.token.scope.deployment_api',
  nodeApi: 'p.token.scope.node_api',
  searchApi: 'p.token.scope.search_api',
} as const;

export type Scope = (typeof Scopes)[keyof typeof Scopes];
export const knownScopes: readonly string[] = Object.values(Scopes);
