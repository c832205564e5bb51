import { Scopes } from '../../src/auth/scopes.js';
import { CreateDeploymentDocument, DeleteDeploymentDocument, ListDeploymentsDocument } from '../../src/generated/operations.js';
import { defineRoute, field, type Route } from '../route.js';

/** Deployments (api-spec.md section 4). */
export const deploymentRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/deployments/1.0',
    access: Scopes.deploymentApi,
    operation: ListDeploymentsDocument,
    variables: ({ query }) => ({ parentId: query.get('parent_id') }),
    render: ({ parent }) => {
      // Null only beside an error (a token without deployment_api), which is answered instead.
      const deployments = parent.deployments!;
      return {
        status: 'success',
        parent: { customer_id: parent.customer_id, name: parent.name, handle: parent.handle },
        deployments: deployments.edges.map((edge) => edge.node),
        count: deployments.count,
      };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/deployments/1.0',
    access: Scopes.deploymentApi,
    operation: CreateDeploymentDocument,
    variables: ({ body }) => ({
      input: {
        name: field(body, 'name') as string,
        handle: field(body, 'handle') as string,
        parentId: field(body, 'parent_id') as string,
        subdomain: field(body, 'subdomain') as string,
      },
    }),
    status: 201,
    render: ({ created }) => ({ status: 'success', deployment: created }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/rest/deployments/1.0',
    access: Scopes.deploymentApi,
    operation: DeleteDeploymentDocument,
    variables: ({ body }) => ({
      input: {
        customerId: field(body, 'customer_id') as string,
        parentId: field(body, 'parent_id') as string,
      },
    }),
    render: ({ removed }) => ({ status: 'success', ...removed }),
  }),
];
