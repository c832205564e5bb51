import { Scopes } from '../../src/auth/scopes.js';
import { AutomationRulesDocument, DeleteAutomationRuleDocument, SaveAutomationRuleDocument } from '../../src/generated/operations.js';
import { defineRoute, field, integer, type Route } from '../route.js';

/** Automation (api-spec.md section 4 Automation; shapes in docs/automation.md). */
export const automationRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/automation/1.0',
    access: Scopes.nodeApi,
    operation: AutomationRulesDocument,
    variables: ({ query }) => ({
      customerId: query.get('customer_id'),
      ruleId: query.get('rule_id') ?? '',
      one: query.get('rule_id') !== null,
      runs: integer(query, 'runs'),
    }),
    render: ({ rules, rule }) => (rule ? { status: 'success', rule } : { status: 'success', rules: rules ?? [], count: rules?.length ?? 0 }),
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/automation/1.0',
    access: Scopes.nodeApi,
    operation: SaveAutomationRuleDocument,
    // match and action pass through as given: GraphQL refuses unknown or mistyped fields by name.
    variables: ({ body }) => ({
      input: {
        ruleId: field(body, 'rule_id') as string,
        customerId: field(body, 'customer_id') as string,
        name: field(body, 'name') as string,
        enabled: field(body, 'enabled') as boolean,
        match: field(body, 'match') as never,
        action: field(body, 'action') as never,
        rotateSecret: field(body, 'rotate_secret') as boolean,
      },
    }),
    render: ({ saved }) => ({ status: 'success', created: saved.created, rule: saved.rule, ...(saved.secret === null ? {} : { secret: saved.secret }) }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/rest/automation/1.0',
    access: Scopes.nodeApi,
    operation: DeleteAutomationRuleDocument,
    variables: ({ body, query }) => ({ ruleId: (field(body, 'rule_id') ?? query.get('rule_id')) as string }),
    render: ({ removed }) => ({ status: 'success', ...removed }),
  }),
];
