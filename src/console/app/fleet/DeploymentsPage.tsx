import { ConsoleCreateDeploymentDocument, ConsoleDeleteDeploymentDocument, ConsoleDeploymentsDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { formatDate } from '../investigations/format.js';
import { can } from '../permissions.js';
import { Problem, QueryView, formText, useFormAction } from '../query-view.js';
import { PageButtons, useCursorPages } from '../pager.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { DeleteButton } from '../delete-button.js';
import { DataTable } from '../data-table.js';

/** Child deployments a page holds, oldest first. */
const DEPLOYMENTS_PAGE = 500;

/** An MSP's child deployments: listed for everyone, created and deleted by admins. */
export function DeploymentsPage({ user }: FleetProps) {
  const pages = useCursorPages(null);
  const { state, reload } = useQuery(ConsoleDeploymentsDocument, { first: DEPLOYMENTS_PAGE, after: pages.after });
  return (
    <>
      <h1>Deployments</h1>
      <QueryView state={state} what="The deployments" reload={reload}>
        {({ deploymentParent: parent }) => {
          if (!parent.isMsp) return <p>Your tenant is not an MSP: it has no child deployments.</p>;
          const children = parent.deployments?.edges.map((e) => e.node) ?? [];
          return (
            <>
              {children.length === 0 && pages.before === 0 ? (
                <p>No child deployments yet.</p>
              ) : (
                <DataTable
                  caption="Child deployments"
                  columns={['Name', 'Handle', 'State', 'Created', ...(can(user, 'deployments.delete') ? ['Actions'] : [])]}
                >
                  {children.map((child) => (
                    <tr key={child.customerId}>
                      <td>{child.name ?? child.customerId}</td>
                      <td>{child.handle ?? '—'}</td>
                      <td>{child.deployment.status}</td>
                      <td>{formatDate(child.createdAt)}</td>
                      {can(user, 'deployments.delete') && (
                        <td>
                          <DeleteButton
                            label={`Delete deployment ${child.name ?? child.customerId}`}
                            onDelete={() =>
                              request(ConsoleDeleteDeploymentDocument, { input: { parentId: parent.customerId, customerId: child.customerId } }).then(reload)
                            }
                          />
                        </td>
                      )}
                    </tr>
                  ))}
                </DataTable>
              )}
              {parent.deployments && (
                <PageButtons
                  pages={pages}
                  size={DEPLOYMENTS_PAGE}
                  shown={children.length}
                  pageInfo={parent.deployments.pageInfo}
                  what={['Deployments', 'oldest first']}
                />
              )}
              {can(user, 'deployments.create') && <CreateDeployment parentId={parent.customerId} onCreated={reload} />}
            </>
          );
        }}
      </QueryView>
    </>
  );
}

function CreateDeployment({ parentId, onCreated }: { parentId: string; onCreated: () => void }) {
  const { busy, problem, onSubmit } = useFormAction((form) => {
    const optional = (name: string) => formText(form, name) || undefined;
    return request(ConsoleCreateDeploymentDocument, {
      input: { parentId, name: optional('name'), handle: optional('handle'), subdomain: optional('subdomain') },
    });
  }, onCreated);
  return (
    <section aria-labelledby="new-deployment">
      <h2 id="new-deployment">New child deployment</h2>
      <form className="form-grid" onSubmit={onSubmit}>
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <label>
          Handle (lowercase letters, digits, underscores)
          <input name="handle" maxLength={64} />
        </label>
        <label>
          Subdomain
          <input name="subdomain" maxLength={63} />
        </label>
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create deployment
          </button>
        </div>
      </form>
      <Problem text={problem && `The deployment was not created: ${problem}`} />
      <p className="note">A new child appears in the tenant switcher after you sign in again.</p>
    </section>
  );
}
