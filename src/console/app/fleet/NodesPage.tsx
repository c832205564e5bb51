import { useState } from 'react';
import { ConsoleNodesDocument, type ConsoleNodeRowFragment, ConsoleUpdateNodeDocument, ConsoleLiveEventsDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { formatDate } from '../investigations/format.js';
import { LiveProblem, useLive } from '../live.js';
import { can } from '../permissions.js';
import { Problem, QueryView, useAction } from '../query-view.js';
import { Link } from '../router.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { DataTable } from '../data-table.js';
import { PageButtons, useCursorPages } from '../pager.js';

/** Nodes a page holds, oldest first; a tenant with more has further pages. */
const NODES_PAGE = 500;

/** The chosen tenant's nodes, live, a page at a time. */
export function NodesPage({ user, tenant }: FleetProps) {
  const pages = useCursorPages(tenant.customerId);
  const { state, reload } = useQuery(ConsoleNodesDocument, { first: NODES_PAGE, after: pages.after, customerId: tenant.customerId });
  const liveProblem = useLive(ConsoleLiveEventsDocument, { customerId: tenant.customerId, topic: 'node_lifecycle' }, reload);
  return (
    <>
      <h1>Nodes</h1>
      <LiveProblem problem={liveProblem} />
      <QueryView state={state} what="The nodes" reload={reload}>
        {(data) => {
          const nodes = data.collectorNodes.edges.map((e) => e.node);
          if (nodes.length === 0 && pages.before === 0)
            return <p>No collector nodes in {tenant.name ?? tenant.customerId} yet. Provision one, or approve a device.</p>;
          return (
            <>
              <NodesTable nodes={nodes} mayUpdate={can(user, 'nodes.command')} onUpdated={reload} />
              <PageButtons pages={pages} size={NODES_PAGE} shown={nodes.length} pageInfo={data.collectorNodes.pageInfo} what={['Nodes', 'oldest first']} />
            </>
          );
        }}
      </QueryView>
    </>
  );
}

export const healthLabel = (node: ConsoleNodeRowFragment) =>
  `${node.health.status}${node.health.lastSeenAt ? `, seen ${formatDate(node.health.lastSeenAt)}` : ''}`;

export const connectionLabel = (node: ConsoleNodeRowFragment) =>
  node.connection.controlPlane ? (node.connection.ingest ? 'control and ingest' : 'control channel') : node.connection.ingest ? 'ingest only' : 'not connected';

function NodesTable({ nodes, mayUpdate, onUpdated }: { nodes: ConsoleNodeRowFragment[]; mayUpdate: boolean; onUpdated: () => void }) {
  return (
    <DataTable caption="Collector nodes" columns={['Node', 'Status', 'Health', 'Connection', 'Version', 'Profile']} className="nodes">
      {nodes.map((node) => (
        <tr key={node.nodeId}>
          <td>
            <Link to={`/fleet/nodes/${encodeURIComponent(node.nodeId)}`}>{node.hostname ?? node.nodeId}</Link>
          </td>
          <td>{node.status}</td>
          <td className={node.health.status === 'healthy' ? 'status-ok' : node.health.status === 'unknown' ? undefined : 'status-bad'}>{healthLabel(node)}</td>
          <td>{connectionLabel(node)}</td>
          <td>
            <NodeVersion node={node} mayUpdate={mayUpdate} onUpdated={onUpdated} />
          </td>
          <td>{node.profileName ?? '—'}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The version and, when a newer release waits, "update available" with the update action for those allowed. */
export function NodeVersion({ node, mayUpdate, onUpdated }: { node: ConsoleNodeRowFragment; mayUpdate: boolean; onUpdated: () => void }) {
  const { busy, problem, run } = useAction();
  const [sent, setSent] = useState<string>();
  const update = async () => {
    const result = await run(() => request(ConsoleUpdateNodeDocument, { nodeId: node.nodeId }));
    if (!result) return;
    const { updateStatus, version } = result.updateNode;
    setSent(updateStatus === 'update_sent' ? `Update to ${version} sent.` : `Already at ${version}.`);
    onUpdated();
  };
  return (
    <>
      {node.collectorVersion ?? 'not reported'}
      {node.updateAvailable && (
        <span className="actions">
          <span>Update available: {node.latestVersion}</span>
          {mayUpdate && (
            <button
              type="button"
              disabled={busy || !node.connection.controlPlane}
              onClick={() => void update()}
              title={node.connection.controlPlane ? undefined : 'The node is not connected'}
            >
              Update {node.hostname ?? node.nodeId}
            </button>
          )}
        </span>
      )}
      {sent && <span role="status">{sent}</span>}
      <Problem text={problem && `The update was not sent: ${problem}`} />
    </>
  );
}
