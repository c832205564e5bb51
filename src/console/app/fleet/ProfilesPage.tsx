import { ConsoleCreateProfileDocument, ConsoleDeleteProfileDocument, ConsoleProfilesDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { can } from '../permissions.js';
import { DeleteButton } from '../delete-button.js';
import { Problem, QueryView, formText, useFormAction } from '../query-view.js';
import { PageButtons, useCursorPages } from '../pager.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { DataTable } from '../data-table.js';

/** The service blocks a profile turns on or off (docs/profiles.md); each has `enabled`. */
export const SERVICES = [
  { block: 'packet', label: 'Packet capture' },
  { block: 'netflow', label: 'NetFlow / IPFIX' },
  { block: 'suricata_logs', label: 'Suricata logs' },
  { block: 'suricata_ids', label: 'Suricata IDS' },
  { block: 'host_logs', label: 'Host logs' },
] as const;

/** The `services` object of the checked boxes: every block named, enabled or not. */
export const servicesOf = (checked: (block: string) => boolean) => Object.fromEntries(SERVICES.map(({ block }) => [block, { enabled: checked(block) }]));

const enabledServices = (services: unknown) =>
  SERVICES.filter(({ block }) => (services as Record<string, { enabled?: boolean }> | null)?.[block]?.enabled)
    .map((s) => s.label)
    .join(', ') || 'server defaults';

/** Profiles a page holds. */
const PROFILES_PAGE = 500;

export function ProfilesPage({ user, tenant }: FleetProps) {
  const pages = useCursorPages(tenant.customerId);
  const { state, reload } = useQuery(ConsoleProfilesDocument, { first: PROFILES_PAGE, after: pages.after, customerId: tenant.customerId });
  return (
    <>
      <h1>Profiles</h1>
      <QueryView state={state} what="The profiles" reload={reload}>
        {(data) => {
          const profiles = data.profiles.edges.map((e) => e.node);
          if (profiles.length === 0 && pages.before === 0)
            return <p>{tenant.name ?? tenant.customerId} has no profiles: its nodes run with the server defaults.</p>;
          return (
            <>
              <DataTable caption="Profiles" columns={['Name', 'Services on', 'Updates', 'Tags', ...(can(user, 'profiles.delete') ? ['Actions'] : [])]}>
                {profiles.map((p) => (
                  <tr key={p.profileId}>
                    <td>
                      {p.name}
                      {p.description && <div className="note">{p.description}</div>}
                    </td>
                    <td>{enabledServices(p.services)}</td>
                    <td>
                      {p.updateChannel}
                      {p.autoUpdate ? ', automatic' : ', manual'}
                      {p.fleetStaging ? ', staged' : ''}
                    </td>
                    <td>{p.tags.join(', ') || '—'}</td>
                    {can(user, 'profiles.delete') && (
                      <td>
                        <DeleteButton
                          label={`Delete profile ${p.name}`}
                          onDelete={() => request(ConsoleDeleteProfileDocument, { profileId: p.profileId }).then(reload)}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </DataTable>
              <PageButtons pages={pages} size={PROFILES_PAGE} shown={profiles.length} pageInfo={data.profiles.pageInfo} what={['Profiles', 'oldest first']} />
            </>
          );
        }}
      </QueryView>
      {can(user, 'profiles.create') && <CreateProfile customerId={tenant.customerId} onCreated={reload} />}
    </>
  );
}

function CreateProfile({ customerId, onCreated }: { customerId: string; onCreated: () => void }) {
  const { busy, problem, onSubmit } = useFormAction((form) => {
    const text = (name: string) => formText(form, name);
    const input = {
      customerId,
      name: text('name'),
      description: text('description') || undefined,
      updateChannel: text('updateChannel'),
      autoUpdate: form.has('autoUpdate'),
      fleetStaging: form.has('fleetStaging'),
      tags: text('tags')
        ? text('tags')
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : [],
      services: servicesOf((block) => form.has(`service-${block}`)),
    };
    return request(ConsoleCreateProfileDocument, { input });
  }, onCreated);
  return (
    <section aria-labelledby="new-profile">
      <h2 id="new-profile">New profile</h2>
      <form className="form-grid" onSubmit={onSubmit}>
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <label>
          Description
          <input name="description" maxLength={2000} />
        </label>
        <fieldset>
          <legend>Services</legend>
          {SERVICES.map(({ block, label }) => (
            <label className="check" key={block}>
              <input type="checkbox" name={`service-${block}`} defaultChecked={block === 'packet'} /> {label}
            </label>
          ))}
        </fieldset>
        <label>
          Update channel
          <select name="updateChannel" defaultValue="stable">
            <option value="stable">stable</option>
            <option value="dev">dev</option>
            <option value="pinned">pinned</option>
          </select>
        </label>
        <fieldset>
          <legend>Updates and enrolment</legend>
          <label className="check">
            <input type="checkbox" name="autoUpdate" defaultChecked /> Update automatically
          </label>
          <label className="check">
            <input type="checkbox" name="fleetStaging" /> New nodes start staged
          </label>
        </fieldset>
        <label>
          Tags (comma-separated)
          <input name="tags" />
        </label>
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create profile
          </button>
        </div>
      </form>
      <Problem text={problem && `The profile was not created: ${problem}`} />
    </section>
  );
}
