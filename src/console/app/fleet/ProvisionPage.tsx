import { type FormEvent, useState } from 'react';
import { ConsoleProfilesDocument, ConsoleProvisionNodeDocument } from '../../../generated/console.js';
import { request } from '../api.js';
import { can } from '../permissions.js';
import { Problem, useAction } from '../query-view.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';

/** What a person runs on the machine: the installer with the one-time key (docs/collector-releases.md). */
export const installCommand = (origin: string, accessKey: string) => `curl -fsSL ${origin}/rest/collector/install/1.0 | sudo bash -s -- ${accessKey}`;

/** Issues a one-time enrolment key for the chosen tenant and shows the install command to copy. */
export function ProvisionPage({ user, tenant }: FleetProps) {
  const profiles = useQuery(ConsoleProfilesDocument, { first: 500 });
  const [accessKey, setAccessKey] = useState<string>();
  const { busy, problem, run } = useAction();
  if (!can(user, 'nodes.provision')) return <Refused user={user} what="provision collectors" />;

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const input = { customerId: tenant.customerId, description: text('description'), machineId: text('machineId'), profileId: text('profileId') };
    const result = await run(() => request(ConsoleProvisionNodeDocument, { input }));
    if (result) setAccessKey(result.provisionNode.accessKey);
  };
  const choices = profiles.state.kind === 'done' ? profiles.state.data.profiles.edges.map((e) => e.node) : [];
  return (
    <>
      <h1>Provision a collector</h1>
      <p>For {tenant.name ?? tenant.customerId}. The key works once: the collector exchanges it when it first starts.</p>
      <form className="form-grid" onSubmit={(event) => void submit(event)}>
        <label>
          Description
          <input name="description" maxLength={200} placeholder="e.g. branch office sensor" />
        </label>
        <label>
          Machine id (optional: binds the key to one machine)
          <input name="machineId" maxLength={200} />
        </label>
        <label>
          Profile
          <select name="profileId" defaultValue="">
            <option value="">Server defaults</option>
            {choices.map((p) => (
              <option key={p.profileId} value={p.profileId}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create the install command
          </button>
        </div>
      </form>
      <Problem text={problem && `No key was issued: ${problem}`} />
      {accessKey && <Copyable label="Install command (shown once)" text={installCommand(location.origin, accessKey)} />}
    </>
  );
}

export function Copyable({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState<string>();
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setCopied('Copied.'),
      () => setCopied('The browser refused the clipboard: select the text and copy it.'),
    );
  return (
    <section aria-label={label}>
      <h2>{label}</h2>
      <pre className="copyable" data-testid="install-command">
        {text}
      </pre>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <span role="status">{copied}</span>
      </div>
    </section>
  );
}

export const Refused = ({ user, what }: { user: FleetProps['user']; what: string }) => (
  <p className="note">
    Your role, {user.role}, may not {what}; ask an admin of your tenant.
  </p>
);
