import { type FormEvent, useState } from 'react';
import {
  type ApiClientKind,
  type ConsoleApiClientFragment,
  ConsoleApiClientsDocument,
  ConsoleCreateApiClientDocument,
  ConsoleRevokeApiClientDocument,
} from '../../../generated/console.js';
import { request } from '../api.js';
import { DataTable } from '../data-table.js';
import { DeleteButton } from '../delete-button.js';
import { formatDate } from '../investigations/format.js';
import { OneTimeSecret } from '../OneTimeSecret.js';
import { can } from '../permissions.js';
import { Problem, QueryView, useAction } from '../query-view.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { Refused } from './ProvisionPage.js';

/** The scopes a client may be given, and what each lets its tokens do (docs/authorization.md). */
const SCOPES = [
  { scope: 'p.token.scope.search_api', name: 'search_api', meaning: 'Read flows: search, explore, events and investigations, and triage them' },
  {
    scope: 'p.token.scope.node_api',
    name: 'node_api',
    meaning: 'Manage the fleet and the tenant: nodes, profiles, networks, automation, the audit log, users and API clients',
  },
  { scope: 'p.token.scope.deployment_api', name: 'deployment_api', meaning: "List, create and delete an MSP's child deployments" },
  { scope: 'p.token.scope.ingest', name: 'ingest', meaning: "A collector's own doors: enrol and send flows (Provision a collector issues these)" },
] as const;

/** As the server checks it (src/modules/api-clients/api-clients.service.ts). */
const DESCRIPTION_MAX = 200;

const scopeName = (scope: string) => SCOPES.find((s) => s.scope === scope)?.name ?? scope;

const KINDS: Record<string, string> = { api: 'API', provision: 'Collector (provisioned)', device: 'Collector (device flow)' };

/** As the server caps a list (API_CLIENT_LIMITS.listed). */
const LISTED_MAX = 500;

/**
 * What the list shows. A tenant's active API clients are at most 100, so the first view is whole;
 * collectors' credentials number as many as its nodes.
 */
type View = 'active' | 'api' | 'provision' | 'device' | 'all';
const VIEWS: Record<View, { label: string; kind?: ApiClientKind; active?: boolean }> = {
  active: { label: 'Active API clients', kind: 'api', active: true },
  api: { label: 'API clients, revoked ones too', kind: 'api' },
  provision: { label: 'Collectors enrolled with an access key', kind: 'provision' },
  device: { label: 'Collectors enrolled by device approval', kind: 'device' },
  all: { label: 'Every client' },
};

/** A key the server answered once: for whom, and the key itself. */
interface ShownKey {
  description: string;
  accessKey: string;
}

/** The API clients of the chosen tenant, for its admins: list, create (the access key shown once), revoke. */
export function ApiClientsPage({ user, tenant }: FleetProps) {
  // Others are refused before anything is asked of the server, which would refuse them too.
  return can(user, 'clients.manage') ? <ApiClients tenant={tenant} /> : <Refused user={user} what="manage API clients" />;
}

function ApiClients({ tenant }: { tenant: FleetProps['tenant'] }) {
  const [view, setView] = useState<View>('active');
  const { kind, active } = VIEWS[view];
  const { state, reload } = useQuery(ConsoleApiClientsDocument, { customerId: tenant.customerId, kind, active });
  const [shown, setShown] = useState<ShownKey>();
  return (
    <>
      <h1>API clients of {tenant.name ?? tenant.customerId}</h1>
      <p>Scripts, SDKs and collectors exchange an access key for tokens at the token endpoint. Revoking a client refuses its tokens at once.</p>
      <CreateApiClient
        customerId={tenant.customerId}
        onCreated={(key) => {
          setShown(key);
          reload();
        }}
      />
      {shown && (
        <section aria-labelledby="key-title" className="shown-once">
          <h2 id="key-title">Access key for {shown.description}</h2>
          <OneTimeSecret
            label="Access key"
            value={shown.accessKey}
            rows={2}
            note="Shown only now: store it where the script or SDK reads it. It is the client id, a dot and the client secret; a lost key cannot be shown again, create a new client instead."
          />
        </section>
      )}
      <div className="filters">
        <label>
          Show
          <select value={view} onChange={(event) => setView(event.target.value as View)}>
            {Object.entries(VIEWS).map(([key, { label }]) => (
              <option key={key} value={key}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryView state={state} what="The API clients" reload={reload}>
        {(data) =>
          data.apiClients.length === 0 ? (
            <p>
              {tenant.name ?? tenant.customerId} has none: {VIEWS[view].label.toLowerCase()}.
            </p>
          ) : (
            <>
              {data.apiClients.length >= LISTED_MAX && (
                <p className="note" role="status">
                  The newest {LISTED_MAX} are shown; choose a narrower view to see the others.
                </p>
              )}
              <ClientsTable clients={data.apiClients} onRevoked={reload} />
            </>
          )
        }
      </QueryView>
    </>
  );
}

function ClientsTable({ clients, onRevoked }: { clients: ConsoleApiClientFragment[]; onRevoked: () => void }) {
  return (
    <DataTable caption="API clients" className="api-clients" columns={['Description', 'Client id', 'Scopes', 'Kind', 'Created', 'Status', 'Actions']}>
      {clients.map((client) => {
        const name = client.description ?? client.clientId;
        return (
          <tr key={client.clientId}>
            <td>{client.description ?? '—'}</td>
            <td>
              <code>{client.clientId}</code>
            </td>
            <td>{client.scopes.map(scopeName).join(', ')}</td>
            <td>
              {KINDS[client.kind] ?? client.kind}
              {client.nodeIds.length > 0 && <div className="note">Nodes: {client.nodeIds.join(', ')}</div>}
            </td>
            <td>{formatDate(client.createdAt)}</td>
            <td>{client.revokedAt ? `Revoked ${formatDate(client.revokedAt)}` : 'Active'}</td>
            <td>
              {!client.revokedAt && (
                <DeleteButton
                  label={`Revoke ${name}`}
                  failed="Not revoked"
                  onDelete={() => request(ConsoleRevokeApiClientDocument, { clientId: client.clientId }).then(onRevoked)}
                />
              )}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}

function CreateApiClient({ customerId, onCreated }: { customerId: string; onCreated: (key: ShownKey) => void }) {
  const { busy, problem, run } = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const description = String(form.get('description') ?? '').trim();
    const scopes = SCOPES.filter(({ scope }) => form.has(scope)).map(({ scope }) => scope);
    const result = await run(() => request(ConsoleCreateApiClientDocument, { input: { customerId, description, scopes } }));
    if (!result) return;
    element.reset();
    onCreated({ description, accessKey: result.createApiClient.accessKey });
  };
  return (
    <section aria-labelledby="new-api-client">
      <h2 id="new-api-client">New API client</h2>
      <form className="form-grid" onSubmit={(event) => void submit(event)}>
        <label>
          Description (who or what uses it)
          <input name="description" required maxLength={DESCRIPTION_MAX} placeholder="e.g. nightly export script" />
        </label>
        <fieldset>
          <legend>Scopes (at least one)</legend>
          {SCOPES.map(({ scope, name, meaning }) => (
            <label className="check" key={scope}>
              <input type="checkbox" name={scope} defaultChecked={scope === 'p.token.scope.search_api'} /> {name}: {meaning}
            </label>
          ))}
        </fieldset>
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create API client
          </button>
        </div>
      </form>
      <Problem text={problem && `No client was created: ${problem}`} />
    </section>
  );
}
