import { useState } from 'react';
import {
  ConsoleNodeDiagnosticsDocument,
  ConsoleNodeDocument,
  type ConsoleNodeDiagnosticsMutation,
  ConsoleNodeStatusDocument,
} from '../../../generated/console.js';
import { request } from '../api.js';
import { formatDate } from '../investigations/format.js';
import { LiveProblem, useLive } from '../live.js';
import { can } from '../permissions.js';
import { Problem, QueryView, useAction } from '../query-view.js';
import { Link } from '../router.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { NodeVersion, connectionLabel, healthLabel } from './NodesPage.js';

const LOG_LINES = 200;

/** One node: its facts, kept live by `nodeStatus`, and (for admins) diagnostics with recent logs from the collector. */
export function NodePage({ user, nodeId }: FleetProps & { nodeId: string }) {
  const { state, reload } = useQuery(ConsoleNodeDocument, { nodeId });
  const liveProblem = useLive(ConsoleNodeStatusDocument, { nodeId }, reload);
  return (
    <article>
      <Link to="/fleet">← All nodes</Link>
      <LiveProblem problem={liveProblem} />
      <QueryView state={state} what="The node" reload={reload}>
        {({ collectorNode: node }) => (
          <>
            <h1>{node.hostname ?? node.nodeId}</h1>
            <dl className="facts">
              <dt>Node id</dt>
              <dd>{node.nodeId}</dd>
              <dt>Tenant</dt>
              <dd>{node.customerName ?? node.customerId}</dd>
              <dt>Status</dt>
              <dd>{node.status}</dd>
              <dt>Health</dt>
              <dd>{healthLabel(node)}</dd>
              <dt>Connection</dt>
              <dd>{connectionLabel(node)}</dd>
              <dt>Version</dt>
              <dd>
                <NodeVersion node={node} mayUpdate={can(user, 'nodes.command')} onUpdated={reload} /> (channel {node.updateChannel})
              </dd>
              <dt>Platform</dt>
              <dd>{[node.os, node.arch].filter(Boolean).join(' / ') || '—'}</dd>
              <dt>Addresses</dt>
              <dd>{[node.network.localIp, node.network.publicIp].filter(Boolean).join(', ') || '—'}</dd>
              <dt>Machine id</dt>
              <dd>{node.machineId ?? '—'}</dd>
              <dt>Profile</dt>
              <dd>{node.profileName ?? 'server defaults'}</dd>
              <dt>Enrolled</dt>
              <dd>{formatDate(node.createdAt)}</dd>
            </dl>
            <h2>Services it runs</h2>
            <pre className="copyable">{JSON.stringify(node.services, null, 2)}</pre>
            {can(user, 'nodes.command') && <Diagnostics nodeId={node.nodeId} connected={node.connection.controlPlane} />}
          </>
        )}
      </QueryView>
    </article>
  );
}

function Diagnostics({ nodeId, connected }: { nodeId: string; connected: boolean }) {
  const [answer, setAnswer] = useState<ConsoleNodeDiagnosticsMutation['requestNodeDiagnostics']>();
  const { busy, problem, run } = useAction();
  const ask = async () => {
    const result = await run(() => request(ConsoleNodeDiagnosticsDocument, { nodeId, logLines: LOG_LINES }));
    if (result) setAnswer(result.requestNodeDiagnostics);
  };
  return (
    <section aria-labelledby="diagnostics">
      <h2 id="diagnostics">Diagnostics and recent logs</h2>
      {!connected && <p className="note">The node is not connected: the collector answers diagnostics over its control channel.</p>}
      <button type="button" disabled={busy || !connected} onClick={() => void ask()}>
        {busy ? 'Asking the collector…' : 'Fetch diagnostics'}
      </button>
      <Problem text={problem && `The collector did not answer: ${problem}`} />
      {answer && (
        <>
          <h3>Diagnostics</h3>
          <pre className="copyable">{JSON.stringify(answer.diagnostics, null, 2)}</pre>
          <h3>The last {answer.recentLogs.length} log lines</h3>
          <pre className="logs" tabIndex={0}>
            {answer.recentLogs.join('\n') || 'No log lines.'}
          </pre>
        </>
      )}
    </section>
  );
}
